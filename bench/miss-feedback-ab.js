// The governor on the real gateway with and without the SLO-miss feedback (PACING_MISS_SHARE),
// side by side in one run: the machine's speed moves from run to run (the same gateway's
// best safe fixed rate was 24/s in one bench run and under 20/s in another), so only runs
// interleaved in time compare.
//
//   node bench/miss-feedback-ab.js [rounds] [source]   rounds of "0, then the default" (the order alternates)
import { runDemo } from '../demo/run-demo.js';
import { summarize } from '../demo/present.js';
import { REAL_DEMO } from '../demo/settings.js';
import { CONTROLLER_DEFAULTS } from '../shared/pacing/controller-options.js';

const rounds = Number(process.argv[2] ?? 2);
const source = /** @type {import('../demo/settings.js').SourceName} */ (process.argv[3] ?? 'scrape');
const shares = ['0', String(CONTROLLER_DEFAULTS.missShare)];
/** @type {Array<Record<string, unknown>>} */
const rows = [];
for (let round = 1; round <= rounds; round++) {
  const order = round % 2 ? shares : [...shares].reverse();
  for (const share of order) {
    const world = { ...REAL_DEMO, env: { ...REAL_DEMO.env, PACING_MISS_SHARE: share } };
    const record = await runDemo({ world, source, note: (m) => console.error(`· ${m}`), onTick: () => {} });
    const s = summarize(record, Date.now());
    const row = {
      round, missShare: Number(share), seconds: s.campaign.seconds, meanSendRate: s.campaign.meanSendRate,
      windows: s.checks.slo.evaluated, within: s.checks.slo.within, share: s.checks.slo.share, errors: s.gateway.errors,
      delivered: s.checks.exactlyOnce.deviceDeliveries, peakP95Ms: s.gateway.peakP95Ms, workMsPerRequest: s.gateway.workMsPerRequest, failure: record.failure
    };
    rows.push(row);
    console.error(JSON.stringify(row));
  }
}
console.log('| round | PACING_MISS_SHARE | time to send all | mean sends/s | 5-s windows within the SLO | errors | delivered | peak p95 | gateway ms/request |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const seconds = /** @type {number | null} */ (r.seconds);
  console.log(`| ${r.round} | ${r.missShare} | ${seconds === null ? `– (${r.failure})` : `${seconds.toFixed(0)} s`} | ${r.meanSendRate ?? '–'} | ${r.within}/${r.windows} (${(100 * /** @type {number} */ (r.share)).toFixed(1)}%) | ${r.errors} | ${r.delivered} | ${Math.round(/** @type {number} */ (r.peakP95Ms))} ms | ${/** @type {number | null} */ (r.workMsPerRequest)?.toFixed(1) ?? '–'} |`);
}
