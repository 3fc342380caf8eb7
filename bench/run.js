// npm run bench: runs every benchmark and appends the numbers, with the date and
// the machine, to bench/RESULTS.md. Targets are checked here, not in unit tests.
import { appendFile } from 'node:fs/promises';
import os from 'node:os';
import { benchPublishThroughput } from './publish-throughput.js';
import { benchEnqueue } from './enqueue.js';

const only = process.argv[2];
const lines = [`\n## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC — ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ` +
  `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`];
let failed = false;

if (!only || only === 'publish') {
  const r = await benchPublishThroughput();
  const pass = r.medianRatio >= 0.9;
  failed ||= !pass;
  lines.push(`### (a) Publish throughput: one worker vs a bare \`SNSClient.send(PublishCommand)\` loop`,
    `${r.devices.toLocaleString('en-US')} publishes per run, concurrency ${r.concurrency}, same emulator process, runs interleaved.`, '',
    '| round | bare loop /s | worker /s | ratio |', '|---|---|---|---|',
    ...r.rounds.map((x, i) => `| ${i + 1} | ${x.bare.toFixed(0)} | ${x.worker.toFixed(0)} | ${x.ratio.toFixed(3)} |`),
    `| **median** | **${r.medianBare.toFixed(0)}** | **${r.medianWorker.toFixed(0)}** | **${r.medianRatio.toFixed(3)}** (target ≥ 0.9: ${pass ? 'met' : 'NOT met'}) |`, '');
}
if (!only || only === 'enqueue') {
  const r = await benchEnqueue();
  const row = (/** @type {string} */ name, /** @type {{ seconds: number, maxRssMb: number, enqueued: number }} */ x) => {
    const pass = x.seconds <= 30 && x.maxRssMb <= 200 && x.enqueued === r.devices;
    failed ||= !pass;
    return `| ${name} | ${x.enqueued.toLocaleString('en-US')} | ${x.seconds.toFixed(1)} s | ${x.maxRssMb.toFixed(0)} MB | ${pass ? 'met' : 'NOT met'} |`;
  };
  lines.push(`### (b) Enqueue a ${r.devices.toLocaleString('en-US')}-device audience with \`pushctl send\` (scan pass + enqueue pass)`,
    '| source | devices enqueued | wall time | peak RSS | target ≤ 30 s, ≤ 200 MB |', '|---|---|---|---|---|',
    row('CSV file', r.file), row('PostgreSQL query (cursor)', r.query), '');
}

const text = lines.join('\n');
console.log(text);
await appendFile(new URL('./RESULTS.md', import.meta.url), text);
process.exitCode = failed ? 1 : 0;
