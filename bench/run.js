// npm run bench: runs every benchmark and appends the numbers, with the date and
// the machine, to bench/RESULTS.md. Targets are checked here, not in unit tests.
import { appendFile } from 'node:fs/promises';
import { DEFAULTS } from '../config/index.js';
import os from 'node:os';
import { benchPublishThroughput } from './publish-throughput.js';
import { benchEnqueue } from './enqueue.js';
import { benchTransactional } from './transactional.js';
import { benchPacing, formatPacingSection } from './pacing.js';
import { benchHoldout, formatHoldoutSection } from './holdout.js';
import { benchForecastAccuracy, formatForecastSection, FORECAST_TARGET } from './forecast-accuracy.js';
import { benchImpulseResponse, formatImpulseResponseSection } from './impulse-response.js';
import { benchForecastCost, formatForecastCostSection } from './forecast-cost.js';
import { benchRealGateway, formatRealGatewaySection } from './real-gateway.js';
import { benchInformationLimit, formatInformationLimitSection, benchBlindBound, formatBlindBoundSection } from './information-limit.js';
import { benchWorkerCrash, formatWorkerCrashSection } from './worker-crash.js';
import { benchMetricsLag, formatMetricsLagSection } from './metrics-lag.js';
import { benchColdStart, formatColdStartSection } from './cold-start.js';

const only = process.argv[2];
const DEFAULT_LOCK_MS = DEFAULTS.SEGMENT_LOCK_MS;
const lines = [`\n## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC — ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ` +
  `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`];
let failed = false;

if (!only || only === 'publish' || only === 'publish-throughput') {
  const r = await benchPublishThroughput();
  const m = r.median;
  // Issue #16: the lean path at 3 × the bare SDK loop; the sdk path as before (0.9 ×); pacing
  // unchanged: both paths within 5% of the set rate.
  const leanPass = m.leanOverBare >= 3;
  const sdkPass = m.sdkOverBare >= 0.9;
  const pacedPass = [m.pacedLean, m.pacedSdk].every((rate) => Math.abs(rate / r.pacedRate - 1) <= 0.05);
  failed ||= !(leanPass && sdkPass && pacedPass);
  const us = (/** @type {number} */ micros) => `${micros.toFixed(0)} µs`;
  lines.push('### (a) Publish throughput: one worker with each SNS publish path vs a bare `SNSClient.send(PublishCommand)` loop',
    `${r.devices.toLocaleString('en-US')} publishes per run, concurrency ${r.concurrency}, same emulator process, runs interleaved ` +
    '(the order rotates each round). CPU per publish: the process\'s `process.cpuUsage()` over the sending, start-up left out. ' +
    `Paced: ${r.pacedDevices.toLocaleString('en-US')} devices at a set rate of ${r.pacedRate}/s.`, '',
    '| round | bare loop /s | CPU/publish | worker sdk /s | CPU/publish | worker lean /s | CPU/publish | lean / bare | paced lean /s | paced sdk /s |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rounds.map((x, i) => `| ${i + 1} | ${x.bare.rate.toFixed(0)} | ${us(x.bare.cpuMicrosPerPublish)} | ${x.sdk.rate.toFixed(0)} | ` +
      `${us(x.sdk.cpuMicrosPerPublish)} | ${x.lean.rate.toFixed(0)} | ${us(x.lean.cpuMicrosPerPublish)} | ${(x.lean.rate / x.bare.rate).toFixed(2)} | ` +
      `${x.paced.lean.toFixed(0)} | ${x.paced.sdk.toFixed(0)} |`),
    `| **median** | **${m.bare.rate.toFixed(0)}** | **${us(m.bare.cpuMicrosPerPublish)}** | **${m.sdk.rate.toFixed(0)}** | ` +
      `**${us(m.sdk.cpuMicrosPerPublish)}** | **${m.lean.rate.toFixed(0)}** | **${us(m.lean.cpuMicrosPerPublish)}** | **${m.leanOverBare.toFixed(2)}** | ` +
      `**${m.pacedLean.toFixed(0)}** | **${m.pacedSdk.toFixed(0)}** |`, '',
    `Targets: lean worker ≥ 3 × the bare loop: ${m.leanOverBare.toFixed(2)} × (${leanPass ? 'met' : 'NOT met'}); ` +
    `sdk worker ≥ 0.9 × the bare loop: ${m.sdkOverBare.toFixed(2)} × (${sdkPass ? 'met' : 'NOT met'}); ` +
    `paced rate within 5% of the set ${r.pacedRate}/s on both paths (${pacedPass ? 'met' : 'NOT met'}).`, '');
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
    row('CSV file (median of the hand parser\'s rounds below)', r.file), row('PostgreSQL query (cursor)', r.query), '');
  // Issue 13.6: csv-parse was to be preferred if it kept this under 10 s and 200 MB.
  const ratio = (/** @type {number} */ a, /** @type {number} */ b) => (a / b).toFixed(3);
  const within = (/** @type {{ seconds: number, maxRssMb: number }} */ x) => (x.seconds <= 10 && x.maxRssMb <= 200 ? 'met' : 'NOT met');
  lines.push('#### The CSV audience parser: hand-written (`shared/audience/csv-source.js`) vs csv-parse, same file, rounds interleaved',
    '| round | hand: wall | hand: peak RSS | csv-parse: wall | csv-parse: peak RSS | wall csv-parse / hand | RSS csv-parse / hand |', '|---|---|---|---|---|---|---|',
    ...r.parsers.map((x, i) => `| ${i + 1} | ${x.hand.seconds.toFixed(1)} s | ${x.hand.maxRssMb.toFixed(0)} MB | ${x.csvParse.seconds.toFixed(1)} s | ` +
      `${x.csvParse.maxRssMb.toFixed(0)} MB | ${ratio(x.csvParse.seconds, x.hand.seconds)} | ${ratio(x.csvParse.maxRssMb, x.hand.maxRssMb)} |`),
    `| **median** | **${r.file.seconds.toFixed(1)} s** | **${r.file.maxRssMb.toFixed(0)} MB** | **${r.csvParse.seconds.toFixed(1)} s** | ` +
      `**${r.csvParse.maxRssMb.toFixed(0)} MB** | **${ratio(r.csvParse.seconds, r.file.seconds)}** | **${ratio(r.csvParse.maxRssMb, r.file.maxRssMb)}** |`,
    `| ≤ 10 s, ≤ 200 MB | | ${within(r.file)} | | ${within(r.csvParse)} | | |`, '');
}
if (!only || only === 'transactional') {
  const r = await benchTransactional();
  const windowRatio = r.maxWindow / r.rate;
  const pass = r.delivered === r.events && r.p99Ms <= 2000 && windowRatio <= 1.05;
  failed ||= !pass;
  lines.push(`### (c) Transactional events during a full-rate campaign`,
    `Bucket rate ${r.rate}/s (burst ${Math.ceil(r.rate / 50)}, transactional share 10%); one worker sending a campaign, one ingest process; ` +
    `${r.events} events published at uniformly random times over 45 s, one device each.`, '',
    '| events delivered | p50 | p95 | p99 | max | campaign meanwhile | most sends in any 1-s window (campaign + transactional) | target |', '|---|---|---|---|---|---|---|---|',
    `| ${r.delivered} / ${r.events} | ${r.p50Ms.toFixed(0)} ms | ${r.p95Ms.toFixed(0)} ms | ${r.p99Ms.toFixed(0)} ms | ${r.maxMs.toFixed(0)} ms | ${r.campaignRate.toFixed(0)}/s | ` +
    `${r.maxWindow} (${windowRatio.toFixed(3)} × rate) | p99 ≤ 2 s, ≤ 1.05 × rate: ${pass ? 'met' : 'NOT met'} |`, '');
}
if (!only || only === 'pacing') {
  const r = benchPacing();
  if (r.rows.some((x) => x.strategy === 'adaptive' && x.targetsMet === false)) failed = true;
  lines.push(formatPacingSection(r));
}
if (!only || only === 'holdout') {
  const r = benchHoldout();
  if (!r.allMet) failed = true;
  lines.push(formatHoldoutSection(r));
}
if (!only || only === 'forecast') {
  // Issue #14: the dry run's forecast duration against the actual, on held-out worlds.
  const r = benchForecastAccuracy({ seeds: 'held-out' });
  if (r.summary.heldOut.share < FORECAST_TARGET.share) failed = true;
  lines.push(formatForecastSection(r));
}
if (!only || only === 'information-limit') {
  // Evidence, not a target: how much of the hold-out gap no controller could close.
  lines.push(formatInformationLimitSection(benchInformationLimit()));
}
if (!only || only === 'blind-bound') {
  // Evidence, not a target: how much of the hold-out gap no controller could close before its first window.
  lines.push(formatBlindBoundSection(benchBlindBound()));
}
if (!only || only === 'metrics-lag') {
  // Evidence, not a target: what a CloudWatch-like lag costs the controller (about a minute).
  lines.push(formatMetricsLagSection(benchMetricsLag()));
}
if (!only || only === 'worker-crash') {
  // About 5 minutes: 15 campaigns of 12 s or more, on both queue backends.
  const r = await benchWorkerCrash({ note: (m) => console.error(`· ${m}`) });
  if (r.rows.some((x) => x.kill && x.backend === 'bullmq' && x.lockMs === DEFAULT_LOCK_MS && (x.worstExtraSeconds >= 20 || x.maxDuplicates > r.publishConcurrency || x.missed > 0))) failed = true;
  lines.push(formatWorkerCrashSection(r));
}
if (!only || only === 'cold-start') {
  // About 3 minutes on the real stack (Redis, the modelled gateway): issue #11.4, 1,000 devices in under 30 s with no metrics history.
  const r = await benchColdStart({ note: (m) => console.error(`· ${m}`) });
  failed ||= !r.met;
  lines.push(formatColdStartSection(r));
}
if (!only || only === 'impulse-response') {
  const r = formatImpulseResponseSection(benchImpulseResponse());
  failed ||= !r.pass;
  lines.push(r.text);
}
if (!only || only === 'forecast-cost') {
  const r = formatForecastCostSection(benchForecastCost());
  failed ||= !r.pass;
  lines.push(r.text);
}
if (!only || only === 'real-gateway') {
  // About 15 minutes on the real stack (Redis, PostgreSQL); its CPU-bound gateway wants the machine to itself.
  const r = await benchRealGateway({ note: (m) => console.error(`· ${m}`) });
  if (r.governed.some((x) => !x.met)) failed = true;
  lines.push(formatRealGatewaySection(r));
}

const text = lines.join('\n');
console.log(text);
await appendFile(new URL('./RESULTS.md', import.meta.url), text);
process.exitCode = failed ? 1 : 0;
