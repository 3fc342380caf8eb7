// What older gateway metrics cost the pacing controller: the adaptive strategy on every shipped
// scenario (sim/scenarios/) with the default timing (10-s windows read 10 s late: a /metrics
// scrape or a Prometheus server), with longer lags on the same 10-s windows, and as the
// cloudwatch source sees the gateway: one-minute periods read 60 or 120 s after they end,
// one decision per period (the governor's window is the period: config/index.js).
//
// Every run is judged the same way, on the gateway's 10-s windows, so a one-minute period
// cannot hide a bad ten seconds. The CloudWatch view is built from those windows: a period's
// rps is their mean, its error ratio their request-weighted share, and its p95 and p99 the
// request-weighted mean of theirs (the simulator keeps no per-request latencies; CloudWatch's
// own minute p95 lies between that and the highest window's).
//
// `node bench/metrics-lag.js` prints the markdown of its bench/RESULTS.md section.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadScenario } from '../sim/scenario.js';
import { simulate } from '../sim/simulate.js';
import { createAdaptiveStrategy } from '../sim/strategies/adaptive.js';

const SCENARIOS = fileURLToPath(new URL('../sim/scenarios/', import.meta.url));
const SEEDS = [0, 1, 2, 3, 4];
const BASE_WINDOW = 10;

/** @typedef {import('../sim/scenario.js').Scenario} Scenario */
/** @typedef {import('../shared/types.js').GatewaySample} GatewaySample */

/**
 * The timings compared. `period`: the controller sees `period`-s aggregates of the 10-s
 * windows (CloudWatch); without it, the 10-s windows themselves.
 * @type {Array<{ name: string, lagSeconds: number, period?: number }>}
 */
export const TIMINGS = [
  { name: '10-s windows, 10-s lag (default)', lagSeconds: 10 },
  { name: '10-s windows, 60-s lag', lagSeconds: 60 },
  { name: '10-s windows, 120-s lag', lagSeconds: 120 },
  { name: 'CloudWatch: 60-s periods, 60-s lag', lagSeconds: 60, period: 60 },
  { name: 'CloudWatch: 60-s periods, 120-s lag (cloudwatch default)', lagSeconds: 120, period: 60 }
];

/**
 * The scenario the controller is built for: its windows, lag and decision interval (the
 * governor decides once per window, and its bin is the window).
 * @param {Scenario} scenario @param {number} window @param {number} lagSeconds
 * @returns {Scenario}
 */
function timed(scenario, window, lagSeconds) {
  const adaptive = scenario.strategies.adaptive;
  return {
    ...scenario,
    metrics: { ...scenario.metrics, windowSeconds: window, lagSeconds },
    strategies: { ...scenario.strategies, adaptive: { ...adaptive, controlIntervalSeconds: window, controller: { ...adaptive.controller, binMs: window * 1000 } } }
  };
}

/**
 * An adaptive strategy that sees the gateway as CloudWatch would: `period`-s aggregates of
 * the world's 10-s windows, each available `lagSeconds` after the period ends. The world
 * runs with lag 0, so observe() at second t gives the 10-s window that ended at t rounded down.
 * @param {Scenario} scenario @param {number} period @param {number} lagSeconds
 * @returns {import('../sim/simulate.js').StrategyFactory}
 */
function cloudwatchView(scenario, period, lagSeconds) {
  return () => {
    const inner = createAdaptiveStrategy(timed(scenario, period, lagSeconds));
    /** @type {Map<number, GatewaySample>} 10-s windows by their end second */
    const windows = new Map();
    return {
      name: 'adaptive',
      sendsAt(args) {
        const latest = args.observe();
        if (latest) windows.set(Math.floor(args.t / BASE_WINDOW) * BASE_WINDOW, latest);
        const observe = () => {
          const end = Math.floor((args.t - lagSeconds) / period) * period;
          /** @type {GatewaySample[]} */
          const parts = [];
          for (let e = end - period + BASE_WINDOW; e <= end; e += BASE_WINDOW) {
            const w = windows.get(e);
            if (!w) return null;
            parts.push(w);
          }
          return aggregate(parts);
        };
        return inner.sendsAt({ ...args, observe });
      }
    };
  };
}

/**
 * One period from its 10-s windows (see the header for the latency approximation).
 * @param {GatewaySample[]} parts
 * @returns {GatewaySample}
 */
function aggregate(parts) {
  const rates = parts.map((w) => w.rps ?? 1);
  const total = rates.reduce((a, b) => a + b, 0) || 1;
  const weighted = (/** @type {(w: GatewaySample) => number} */ field) => parts.reduce((sum, w, i) => sum + field(w) * rates[i], 0) / total;
  return {
    p95Ms: weighted((w) => w.p95Ms),
    p99Ms: weighted((w) => w.p99Ms),
    errorRatio: weighted((w) => w.errorRatio),
    rps: parts.some((w) => w.rps === null) ? null : total / parts.length
  };
}

/**
 * @typedef {object} LagRow
 * @property {string} scenario
 * @property {string} timing
 * @property {number} completed          seeds whose campaign finished
 * @property {number} completionRatio    mean completion time over the default timing's, same seed
 * @property {number} completionSeconds  mean
 * @property {number} violationMean      share of 10-s windows over the SLO, mean over seeds
 * @property {number} violationWorst
 * @property {number} gatewayErrors      mean
 * @property {number} peakP95Ms          worst
 */

/**
 * Runs every timing on every shipped scenario over SEEDS (the scenario's seed + each).
 * @returns {{ rows: LagRow[], seeds: number, ms: number }}
 */
export function benchMetricsLag() {
  const started = performance.now();
  /** @type {LagRow[]} */
  const rows = [];
  for (const file of readdirSync(SCENARIOS).filter((f) => f.endsWith('.json')).sort()) {
    const shipped = loadScenario(`${SCENARIOS}${file}`);
    /** @type {Map<number, number>} seed → the default timing's completion */
    const reference = new Map();
    for (const timing of TIMINGS) {
      const runs = SEEDS.map((offset) => {
        const seed = shipped.seed + offset * 1000;
        if (timing.period) {
          const world = timed({ ...shipped, seed }, BASE_WINDOW, 0);
          return { seed, result: simulate(world, cloudwatchView({ ...shipped, seed }, timing.period, timing.lagSeconds)) };
        }
        const scenario = timed({ ...shipped, seed }, BASE_WINDOW, timing.lagSeconds);
        return { seed, result: simulate(scenario, 'adaptive') };
      });
      if (reference.size === 0) for (const { seed, result } of runs) reference.set(seed, result.completionSeconds ?? NaN);
      const done = runs.filter(({ result }) => result.completionSeconds !== null);
      const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      rows.push({
        scenario: shipped.name,
        timing: timing.name,
        completed: done.length,
        completionSeconds: mean(done.map(({ result }) => /** @type {number} */ (result.completionSeconds))),
        completionRatio: mean(done.map(({ seed, result }) => /** @type {number} */ (result.completionSeconds) / /** @type {number} */ (reference.get(seed)))),
        violationMean: mean(runs.map(({ result }) => result.sloViolationShare)),
        violationWorst: Math.max(...runs.map(({ result }) => result.sloViolationShare)),
        gatewayErrors: mean(runs.map(({ result }) => result.gatewayErrors)),
        peakP95Ms: Math.max(...runs.map(({ result }) => result.peakP95Ms))
      });
    }
  }
  return { rows, seeds: SEEDS.length, ms: performance.now() - started };
}

/**
 * The RESULTS.md section.
 * @param {ReturnType<typeof benchMetricsLag>} r
 */
export function formatMetricsLagSection(r) {
  const pct = (/** @type {number} */ x) => `${(x * 100).toFixed(1)}%`;
  return [
    '### Metrics lag: what older gateway metrics cost (`npm run bench -- metrics-lag`)',
    `The adaptive strategy on every shipped scenario, ${r.seeds} seeds each (the scenario's seed + 0, 1000, … 4000); every run judged on the gateway's 10-s windows. ` +
      'CloudWatch rows: the controller sees one-minute aggregates of those windows (p95 as their request-weighted mean) and decides once a minute, as the governor does with `GATEWAY_METRICS=cloudwatch`. ' +
      `Time ratios are per seed against the default timing, same run. ${(r.ms / 1000).toFixed(1)} s in all.`,
    '',
    '| scenario | metrics timing | finished | completion | × default | windows over SLO (mean / worst) | gateway errors (mean) | peak p95 |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.scenario} | ${x.timing} | ${x.completed}/${r.seeds} | ${Math.round(x.completionSeconds)} s | ${x.completionRatio.toFixed(3)} | ` +
      `${pct(x.violationMean)} / ${pct(x.violationWorst)} | ${x.gatewayErrors.toFixed(0)} | ${x.peakP95Ms} ms |`),
    ''
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(formatMetricsLagSection(benchMetricsLag()));
}
