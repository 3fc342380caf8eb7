// The governor against the real gateway (demo/real-gateway.js: one process, 23 ms of CPU and
// a PostgreSQL lookup per request), in one run: a sweep of fixed send rates without a
// governor, to find the best rate an operator could have set safely, then the governor with
// each gateway metric source, and the probe once more without the users' load beside it.
// Issue #11's targets: with either source the users' p95 within the SLO in ≥ 95% of 5-s
// windows, and the campaign done in at most 1.3 × the best safe fixed rate's time.
//
//   node bench/real-gateway.js            prints the section (npm run bench real-gateway appends it to RESULTS.md)
//
// Every run, fixed or governed, sends the whole 6,000-device campaign (a fixed rate stops
// early only once its verdict is decided, below) and is judged the same way: the demo's own
// checks, every 5-s window from the first send to the last wake-ups (as the issue's own table
// timed fixed 25/s and 32/s). Until 2026-11-29 each fixed rate was held for 120 s and judged
// on its steady state: about 21 windows, against the 80-95 of a governed
// run. At the same 95% rule that is a much weaker test. This machine's one-process gateway has
// slow spells at any load, so a rate is "safe" with some probability. A rate whose long-run
// share of windows over the SLO is 10% passes 21 windows 36% of the time, and 94 windows 4% of
// the time (binomial). The sweep keeps the highest rate that passes, so the short holds set
// the bar with the luckiest of several weak tests (bench/RESULTS.md, 2026-11-29 10:09: fixed
// 16/s passed 0 of 21 windows over at 21.9 requests/s; the governed scrape run then had 9 of
// 94 windows over at 20.1 requests/s).
// Rates go up until one fails; a higher rate only adds load. When the first already fails,
// they go down by 4/s until one is safe. Then one more, halfway to the failed rate above.
// A fixed run stops as soon as it cannot be safe any more (decidedUnsafe): a user's request
// failed, or more windows are over the SLO than the most windows the run could have allow. Its
// verdict is the one it would have had at its end, and a slow phase's sweep, which fails its
// first rates, no longer waits out each failed campaign (2026-11-29 19:43: 20, 16 and 12/s
// failed and took about 20 minutes between them, 12/s on one reset connection).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runDemo } from '../demo/run-demo.js';
import { summarize, chartOf } from '../demo/present.js';
import { REAL_DEMO } from '../demo/settings.js';
import { windowsOf, sloShare } from '../demo/report.js';
import { ROOT } from './support.js';

/** @typedef {import('../demo/settings.js').SourceName} SourceName */

/**
 * @typedef {object} RealGatewayRow
 * @property {string} run            'fixed' or the governor's source
 * @property {number | null} rate    the fixed rate (sends/s)
 * @property {number} devices        sent in this run
 * @property {number | null} sendSeconds   from the first send to the last (null: not all were sent)
 * @property {number | null} meanSendRate  measured, sends/s
 * @property {number} windows        5-s windows judged
 * @property {number} windowsOver    of them, p95 over the SLO
 * @property {number} errors         users' requests answered 5xx or not at all
 * @property {Record<string, number>} failures  the phones' failed calls by cause, the whole run
 * @property {number} peakP95Ms
 * @property {boolean} safe          all sent exactly once, within the SLO in ≥ 95% of windows, 0 errors, no failure
 * @property {string | null} failure
 * @property {number | null} workMsPerRequest  the gateway's CPU work per request, measured
 */

/**
 * Runs the sweep and both governor runs.
 * @param {{ rates?: number[], note?: (message: string) => void, chartDir?: string, audience?: number }} [options]
 *   audience: every run's (default the world's; smaller only to try the bench out)
 */
export async function benchRealGateway({ rates = [20, 24, 28, 32, 36], note = () => {}, chartDir = join(ROOT, 'bench/out/real-gateway'), audience } = {}) {
  const world = audience === undefined ? REAL_DEMO : { ...REAL_DEMO, audience };
  const started = Date.now();
  await mkdir(chartDir, { recursive: true });

  /**
   * One whole campaign, fixed or governed, judged by the demo's own checks.
   * @param {{ rate?: number, source?: SourceName, maxWallMs: number, untold?: boolean }} how
   *   untold: the governor is not given the users' load (PACING_BASE_LOAD_RPS=0)
   */
  const campaign = async ({ rate, source, maxWallMs, untold = false }) => {
    const priors = untold ? { ...world.priors, baseLoadRps: 0 } : world.priors;
    const record = await runDemo({ world: { ...world, priors, maxWallMs }, source, fixedRate: rate, note, onTick: () => {},
      stopWhen: rate === undefined ? undefined : (progress) => decidedUnsafe(progress, world) });
    const summary = summarize(record, Date.now());
    const { slo, exactlyOnce } = summary.checks;
    /** @type {RealGatewayRow} */
    const row = {
      run: rate === undefined ? runName(/** @type {SourceName} */ (source), untold) : 'fixed', rate: rate ?? null, devices: record.audience,
      sendSeconds: summary.campaign.seconds, meanSendRate: summary.campaign.meanSendRate,
      windows: slo.evaluated, windowsOver: slo.evaluated - slo.within, errors: summary.gateway.errors, failures: summary.gateway.failures, peakP95Ms: summary.gateway.peakP95Ms,
      safe: record.failure === null && exactlyOnce.ok && slo.ok && summary.gateway.errors === 0, failure: record.failure, workMsPerRequest: summary.gateway.workMsPerRequest
    };
    return { row, record, summary };
  };

  /** @type {RealGatewayRow[]} */
  const sweep = [];
  /** One fixed rate for the whole campaign. @param {number} rate */
  const fixedPoint = async (rate) => {
    note(`fixed ${rate} sends/s, ${world.audience} devices`);
    const { row, summary } = await campaign({ rate, maxWallMs: runLimitMs(world.maxWallMs, world.audience / rate) });
    sweep.push(row);
    await writeFile(join(chartDir, `fixed-${rate}.json`), JSON.stringify(summary, null, 2) + '\n');
    return row.safe;
  };
  // Up from the first rate while it is safe; a gateway slower than the one the rates were
  // chosen for (this machine runs the same work at two speeds) fails the first, and then the
  // sweep steps down until one is safe, so the governor is always judged against something.
  for (const rate of rates) if (!(await fixedPoint(rate))) break;
  if (!sweep.some((x) => x.safe)) {
    for (let rate = rates[0] - 4; rate >= 4; rate -= 4) if (await fixedPoint(rate)) break;
  }
  // Then halfway between the best safe rate and the failed one above it: steps of 4/s are
  // 20-25% apart at this gateway's 16-20/s, coarse against a 1.3 × target.
  const bestSafe = () => sweep.filter((x) => x.safe).sort(byRate).at(-1) ?? null;
  const safe = bestSafe();
  const failedAbove = safe && sweep.filter((x) => !x.safe && Number(x.rate) > Number(safe.rate)).sort(byRate)[0];
  if (safe && failedAbove) await fixedPoint((Number(safe.rate) + Number(failedAbove.rate)) / 2);
  const best = bestSafe();

  const governedLimit = runLimitMs(world.maxWallMs, best?.sendSeconds ?? null);
  /** @type {Array<RealGatewayRow & { ratio: number | null, met: boolean }>} */
  const governed = [];
  // Each source as shipped, then the probe once more without the users' load, side by side
  // (the operator's figure, PACING_BASE_LOAD_RPS, is read by latency-only sources alone).
  for (const { source, untold } of /** @type {Array<{ source: SourceName, untold: boolean }>} */ (GOVERNED_RUNS)) {
    note(`governor reading the ${source}${untold ? ', not given the users\' load' : ''}, ${world.audience} devices, at most ${(governedLimit / 1000).toFixed(0)} s`);
    const { row, record, summary } = await campaign({ source, maxWallMs: governedLimit, untold });
    const ratio = overBest(row, best);
    governed.push({ ...row, ratio, met: row.safe && ratio !== null && ratio <= 1.3 });
    await writeFile(join(chartDir, `governor-${row.run}.json`), JSON.stringify(summary, null, 2) + '\n');
    if (!untold) await writeFile(join(ROOT, `bench/charts/real-gateway-${source}.svg`), chartOf(record, summary));
  }
  return { world, sweep, best, governed, governedLimitSeconds: governedLimit / 1000, runtimeSeconds: (Date.now() - started) / 1000 };
}

/**
 * Why a run can no longer be safe, or null while it can: a user's request failed (a safe run
 * has none), or more of its finished windows are over the SLO than the share the world allows
 * of the most windows it could have (until its deadline), so that its share within the SLO
 * will be under the world's whatever comes next. Windows are judged as the demo judges them
 * (demo/report.js), and a window whose end has passed is final: a call counts in the window it
 * ends in.
 * @param {{ samples: readonly number[], campaignStart: number, deadline: number, now: number }} progress
 * @param {{ sloP95Ms: number, evaluationWindowMs: number, minShareWithinSlo: number }} world
 * @returns {string | null}
 */
export function decidedUnsafe({ samples, campaignStart, deadline, now }, { sloP95Ms, evaluationWindowMs, minShareWithinSlo }) {
  const finished = windowsOf(samples, { from: campaignStart, to: campaignStart + Math.floor((now - campaignStart) / evaluationWindowMs) * evaluationWindowMs, windowMs: evaluationWindowMs });
  const errors = finished.reduce((n, w) => n + w.errors, 0);
  if (errors > 0) return `${errors} user request${errors === 1 ? '' : 's'} failed`;
  const { evaluated, within } = sloShare(finished, sloP95Ms);
  const over = evaluated - within;
  const mostWindows = Math.ceil((deadline - campaignStart) / evaluationWindowMs) + 1;
  return over > (1 - minShareWithinSlo) * mostWindows ? `${over} windows over the SLO, of at most ${mostWindows}` : null;
}

/**
 * A run's time over the best safe fixed rate's (null: either is unknown).
 * @param {RealGatewayRow} x @param {RealGatewayRow | null} best
 */
const overBest = (x, best) => (best?.sendSeconds && x.sendSeconds !== null ? x.sendSeconds / best.sendSeconds : null);

/** Sweep rows in order of their rate. @param {RealGatewayRow} a @param {RealGatewayRow} b */
const byRate = (a, b) => Number(a.rate) - Number(b.rate);

/** The governed runs, in order: each source as shipped, and the probe not given the users' load (a reference). */
const GOVERNED_RUNS = Object.freeze([{ source: 'scrape', untold: false }, { source: 'probe', untold: false }, { source: 'probe', untold: true }]);

/** A governed run's name: its source, and whether it was not given the users' load. @param {SourceName} source @param {boolean} untold */
const runName = (source, untold) => `${source}${untold ? '-untold' : ''}`;

/** What each governed run is called in the table, by its name. @type {Record<string, string>} */
const RUN_LABELS = { scrape: 'governor, metrics-scrape', probe: 'governor, active-probe', 'probe-untold': 'governor, active-probe, users\' load not given (reference)' };

/** Set-up (gateway, workers, governor's warm-up) and the last wake-ups, beyond the sends. */
const SLACK_MS = 90_000;

/**
 * How long a run may take. A governed run may take 1.3 × the best safe fixed rate's time and
 * still meet its target, so it gets at least that long (1.5 ×, so that a near miss is timed,
 * not cut off) plus the set-up and the last wake-ups, and never less than the demo's own
 * limit. On a slow phase of this machine the best safe rate was 12/s, 500 s for the campaign,
 * and the demo's 7 minutes cut the probe run off at 4,521 devices. A fixed rate gets the same
 * for its own time, audience / rate.
 * @param {number} demoLimitMs
 * @param {number | null} sendSeconds  the time the run is measured against (null: none)
 */
export function runLimitMs(demoLimitMs, sendSeconds) {
  return sendSeconds === null ? demoLimitMs : Math.max(demoLimitMs, Math.ceil(1.5 * sendSeconds * 1000) + SLACK_MS);
}

/**
 * The RESULTS.md section.
 * @param {Awaited<ReturnType<typeof benchRealGateway>>} r
 */
export function formatRealGatewaySection(r) {
  const { world, best } = r;
  const g = /** @type {import('../demo/settings.js').RealGatewaySettings} */ (world.gateway);
  const int = (/** @type {number} */ v) => Math.round(v).toLocaleString('en-US');
  const pct = (/** @type {number} */ over, /** @type {number} */ n) => `${over}/${n} (${n ? ((100 * over) / n).toFixed(1) : '–'}%)`;
  const causes = (/** @type {RealGatewayRow} */ x) => (Object.keys(x.failures).length ? ` (${Object.entries(x.failures).map(([k, n]) => `${k} × ${n}`).join(', ')})` : '');
  const work = [...r.sweep, ...r.governed].map((x) => x.workMsPerRequest).filter((x) => x !== null);
  const lines = [`### Real gateway: fixed rates vs the governor (\`npm run bench real-gateway\`)`,
    `One Node process, ${g.cpuMs} ms of CPU (measured: ${work.length ? `${Math.min(...work).toFixed(1)}–${Math.max(...work).toFixed(1)} ms` : '–'} per request of the users) ` +
    `and one PostgreSQL lookup per request; ${world.baselineRps} requests/s from users nobody pushed; ${int(world.audience)} devices, ` +
    `${100 * world.wakeUp.openProbability}% open the app a median ${world.wakeUp.openDelayMedianMs / 1000} s after the push, ${world.wakeUp.requestsPerOpen} requests each. ` +
    `SLO p95 ${world.sloP95Ms} ms over the users' requests as the phones timed them, in 5-s windows. Governor priors: capacity ${world.priors.capacityRps}/s, ` +
    `${100 * world.priors.openProbability}% open, median ${world.priors.openDelayMedianMs / 1000} s, setpoint ${100 * world.setpointRatio}% of the SLO, ` +
    `users' load at least ${world.priors.baseLoadRps ?? 0}/s (read by the probe only). ` +
    `Every run was judged on every 5-s window from its first send to its last wake-ups, and its time is from the first send to the last; ` +
    `a fixed rate stopped as soon as it could no longer be safe (a failed request, or more windows over than ${Math.round(100 * (1 - world.minShareWithinSlo))}% of the most it could have had). ` +
    `A governed run had at most ${int(r.governedLimitSeconds)} s (1.5 × the best safe fixed rate's time plus ${SLACK_MS / 1000} s of set-up and last wake-ups, at least the demo's ${world.maxWallMs / 1000} s). ` +
    `Whole run: ${(r.runtimeSeconds / 60).toFixed(1)} min.`, '',
    '| run | time to send all | mean sends/s | 5-s windows over the SLO | user-visible errors | peak 5-s p95 | × best safe fixed | target | gateway CPU per request |',
    '|---|---|---|---|---|---|---|---|---|'];
  // The host's speed changes in phases minutes long: read what each run met beside it.
  const cpu = (/** @type {RealGatewayRow} */ x) => (x.workMsPerRequest === null ? '–' : `${x.workMsPerRequest.toFixed(1)} ms`);
  /** @param {RealGatewayRow} x @param {number | null} ratio @param {string} verdict */
  const row = (x, ratio, verdict) => lines.push(`| ${x.rate === null ? RUN_LABELS[x.run] ?? x.run : `fixed ${x.rate}/s`} | ` +
    `${x.sendSeconds === null ? '–' : `${x.sendSeconds.toFixed(0)} s`} | ${x.meanSendRate ?? '–'} | ${pct(x.windowsOver, x.windows)} | ${x.errors}${causes(x)} | ` +
    `${int(x.peakP95Ms)} ms | ${ratio === null ? '–' : ratio.toFixed(2)} | ${verdict}${x.failure ? ` (${x.failure})` : ''} | ${cpu(x)} |`);
  for (const x of [...r.sweep].sort(byRate)) row(x, overBest(x, best), x.safe ? 'safe' : 'not safe');
  for (const x of r.governed) row(x, x.ratio, x.met ? 'met' : 'NOT met');
  lines.push('', `Best safe fixed rate: ${best ? `${best.rate}/s (${best.sendSeconds?.toFixed(0) ?? '–'} s for ${int(world.audience)} devices)` : 'none of those tried'}. ` +
    `Targets per governor run: ≥ 95% of 5-s windows within the SLO, 0 user-visible errors, every device exactly once, ≤ 1.3 × the best safe fixed rate's time. ` +
    `Charts: [metrics-scrape](charts/real-gateway-scrape.svg), [active-probe](charts/real-gateway-probe.svg).`, '');
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `node bench/real-gateway.js --smoke`: one fixed rate and the three governed runs, 400 devices each, to try it out.
  const smoke = process.argv.includes('--smoke');
  const r = await benchRealGateway({ note: (m) => console.error(`· ${m}`), ...(smoke ? { rates: [20], audience: 400 } : {}) });
  console.log(formatRealGatewaySection(r));
}
