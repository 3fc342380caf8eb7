#!/usr/bin/env node
// `npm run demo`: the governor steering a campaign on the real stack, in a few minutes.
// Prints one line per governor decision, then the verdict; writes a chart (SVG) and a JSON
// summary. Exit 0 when every promise held, 1 when one did not, 2 on bad flags.
// docs/demo.md explains what runs and what to look for.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runDemo } from './run-demo.js';
import { LIVE_HEADER, liveLine, summarize, verdictLines, chartOf } from './present.js';
import { WORLDS, SOURCES } from './settings.js';
import { ROOT } from './stack.js';
import { parseDemoFlags } from './flags.js';

const USAGE = `usage: npm run demo [-- --gateway modelled|real] [--source scrape|probe] [--audience N] [--fixed-rate N] [--out DIR]

  --gateway G     modelled (default): 16 processes whose latency follows a queueing model;
                  real: one process, 23 ms of CPU and a PostgreSQL query per request (needs DATABASE_URL)
  --source S      where the governor reads the gateway: scrape (default, its /metrics histogram)
                  or probe (timed requests to its /api/probe, through the users' queue)
  --audience N    devices to send to (default: ${WORLDS.modelled.audience} modelled, ${WORLDS.real.audience} real; the time limit stays)
  --fixed-rate N  no governor: send at N per second (a point of the bench's sweep)
  --out DIR       where the chart and the summary go (default bench/out/demo)

Needs a Redis at REDIS_URL (default redis://127.0.0.1:6379); uses its own KEY_PREFIX and deletes it.`;

const parsed = parseDemoFlags(process.argv.slice(2));
if ('error' in parsed) {
  process.stderr.write(`demo: ${parsed.error}\n${USAGE}\n`);
  process.exit(2);
}
if (parsed.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const { world, source, audience, fixedRate } = parsed;
const outDir = resolve(parsed.out ?? join(ROOT, 'bench/out/demo'));

const abort = new AbortController();
process.on('SIGINT', () => abort.abort());
process.on('SIGTERM', () => abort.abort());

const g = world.gateway;
const gatewayText = g.kind === 'real'
  ? `real gateway: one process, ${g.cpuMs} ms of CPU and a PostgreSQL lookup per request (about ${Math.round(1000 / g.cpuMs)} requests/s at full CPU)`
  : `modelled gateway of ${g.processes} processes × ${g.serviceMs} ms (${(g.processes * 1000) / g.serviceMs} requests/s at full CPU)`;
const steering = fixedRate === undefined ? `governor reading ${SOURCES[source]}` : `no governor, a fixed ${fixedRate} sends/s`;
console.log(`pushpace demo: ${audience.toLocaleString('en-US')} devices; ${gatewayText} with ${world.baselineRps} requests/s of other traffic; ` +
  `p95 SLO ${world.sloP95Ms} ms; ${100 * world.wakeUp.openProbability}% of users open the app a median ` +
  `${world.wakeUp.openDelayMedianMs / 1000} s after the push and make ${world.wakeUp.requestsPerOpen} requests; ${steering}`);
let headerShown = false;
const record = await runDemo({
  world,
  audience,
  source,
  fixedRate,
  signal: abort.signal,
  note: (message) => console.log(`· ${message}`),
  onTick(tick, progress) {
    if (!headerShown) {
      console.log(LIVE_HEADER);
      headerShown = true;
    }
    console.log(liveLine(tick, progress, audience, world.sloP95Ms));
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
