#!/usr/bin/env node
// `npm run demo`: the governor steering a campaign on the real stack, in about two minutes.
// Prints one line per governor decision, then the verdict; writes a chart (SVG) and a JSON
// summary. Exit 0 when every promise held, 1 when one did not, 2 on bad flags.
// docs/demo.md explains what runs and what to look for.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runDemo } from './run-demo.js';
import { LIVE_HEADER, liveLine, summarize, verdictLines, chartOf } from './present.js';
import { DEMO } from './settings.js';
import { ROOT } from './stack.js';

const USAGE = `usage: npm run demo [-- --audience N] [--out DIR]

  --audience N   devices to send to (default ${DEMO.audience}; the time limit stays 3 minutes)
  --out DIR      where the chart and the summary go (default bench/out/demo)

Needs a Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own KEY_PREFIX and deletes it.`;

let flags;
try {
  ({ values: flags } = parseArgs({ options: { audience: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
} catch (error) {
  process.stderr.write(`demo: ${/** @type {Error} */ (error).message}\n${USAGE}\n`);
  process.exit(2);
}
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const audience = flags.audience === undefined ? DEMO.audience : Number(flags.audience);
if (!Number.isInteger(audience) || audience < 1 || audience > 1_000_000) {
  process.stderr.write(`demo: --audience must be a whole number from 1 to 1000000, got "${flags.audience}"\n`);
  process.exit(2);
}
const outDir = resolve(flags.out ?? join(ROOT, 'bench/out/demo'));

const abort = new AbortController();
process.on('SIGINT', () => abort.abort());
process.on('SIGTERM', () => abort.abort());

const g = DEMO.gateway;
console.log(`pushpace demo: ${audience.toLocaleString('en-US')} devices; gateway of ${g.processes} processes × ${g.serviceMs} ms ` +
  `(${(g.processes * 1000) / g.serviceMs} requests/s at full CPU) with ${DEMO.baselineRps} requests/s of other traffic; ` +
  `p95 SLO ${DEMO.sloP95Ms} ms; ${100 * DEMO.wakeUp.openProbability}% of users open the app a median ` +
  `${DEMO.wakeUp.openDelayMedianMs / 1000} s after the push and make ${DEMO.wakeUp.requestsPerOpen} requests`);
let headerShown = false;
const record = await runDemo({
  audience,
  signal: abort.signal,
  note: (message) => console.log(`· ${message}`),
  onTick(tick, progress) {
    if (!headerShown) {
      console.log(LIVE_HEADER);
      headerShown = true;
    }
    console.log(liveLine(tick, progress, audience));
  }
});

const summary = summarize(record, Date.now());
await mkdir(outDir, { recursive: true });
const stamp = summary.date.replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
const chartFile = join(outDir, `demo-${stamp}.svg`);
const summaryFile = join(outDir, `demo-${stamp}.json`);
await writeFile(chartFile, chartOf(record, summary));
await writeFile(summaryFile, JSON.stringify(summary, null, 2) + '\n');

console.log('');
for (const line of verdictLines(summary)) console.log(line);
console.log(`chart            ${chartFile}\nsummary          ${summaryFile}`);
console.log(summary.ok ? 'demo: every check passed' : 'demo: FAILED');
process.exit(summary.ok ? 0 : 1);
