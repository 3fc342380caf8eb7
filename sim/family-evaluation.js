// Runs the adaptive strategy, the clairvoyant oracle and the informed oracle on worlds drawn
// from a family (sim/families.js), and summarises the distribution against the hold-out
// targets of issue #11. `npm run sim -- --family NAME` and bench/holdout.js both use it.
import { drawScenario, worldSeed } from './families.js';
import { resolveScenario } from './scenario.js';
import { simulate } from './simulate.js';
import { SolverError } from './linear-program.js';
import { InputError } from '../shared/errors.js';

/** The hold-out targets (issue #11, point 5), judged against the informed oracle. */
export const HOLDOUT_TARGETS = Object.freeze({
  medianRatio: 1.15,        // median completion ≤ 1.15 × the informed oracle's
  p90Ratio: 1.4,            // p90 ≤ 1.4 ×
  quietViolationShare: 0.01, // windows over the SLO ≤ 1% where nothing unannounced happens
  eventfulViolationPoints: 2, // within 2 points of the informed oracle where something does
  errorWorlds: 0            // no gateway errors where the informed oracle has none
});

/**
 * @typedef {object} Run  one strategy on one world
 * @property {number | null} completionSeconds
 * @property {number} sloViolationShare
 * @property {number} violatedWindows
 * @property {number} evaluatedWindows
 * @property {number} gatewayErrors
 * @property {string} [failed]  the strategy could not run (an oracle's linear program did not converge)
 */

/**
 * @typedef {object} WorldRow
 * @property {number} seed            the world's seed (drawScenario(family, seed) draws it again)
 * @property {string} description
 * @property {number} audience
 * @property {boolean} eventful       an unannounced capacity change or baseline spike happens
 * @property {Run} adaptive
 * @property {Run} oracle             clairvoyant
 * @property {Run} informed           the informed oracle
 * @property {number | null} informedRatio  adaptive completion / the informed oracle's (null: either did not finish)
 * @property {number | null} oracleRatio    adaptive completion / the clairvoyant oracle's
 * @property {number} runtimeMs
 */

/**
 * @param {string} family
 * @param {{ count: number, seed: number, onWorld?: (row: WorldRow, k: number) => void }} options
 *   world k is drawScenario(family, worldSeed(family, seed, k))
 */
export function evaluateFamily(family, { count, seed, onWorld }) {
  const started = performance.now();
  /** @type {WorldRow[]} */
  const rows = [];
  for (let k = 0; k < count; k++) {
    const row = evaluateWorld(family, worldSeed(family, seed, k));
    rows.push(row);
    onWorld?.(row, k);
  }
  return { family, seed, count, rows, summary: summarise(rows), runtimeMs: Math.round(performance.now() - started) };
}

/**
 * @param {string} family
 * @param {number} seed
 * @param {{ controller?: Record<string, unknown>, oracles?: { oracle: Run, informed: Run }, reportsRps?: boolean, warmupSeconds?: number, noise?: number }} [variant]
 *   controller: options added to the adaptive strategy's (sim/tune.js); oracles: the oracles'
 *   runs of this world when they are known already (they do not depend on the controller, nor
 *   on what the metrics source reports, nor on the warm-up); reportsRps: whether the world's
 *   metrics source reports the gateway's request rate, instead of the drawn answer;
 *   warmupSeconds: how long the controller reads the gateway before the campaign, instead of
 *   the drawn world's (sim/simulate.js keeps the campaign's noise the same whatever it is);
 *   noise: another noise stream for the same world (0: the drawn one), to see how much of a
 *   difference between two controllers the noise alone makes
 * @returns {WorldRow}
 */
export function evaluateWorld(family, seed, { controller, oracles, reportsRps, warmupSeconds, noise = 0 } = {}) {
  const started = performance.now();
  const raw = drawScenario(family, seed);
  if (reportsRps !== undefined) raw.metrics.reportsRps = reportsRps;
  if (warmupSeconds !== undefined) raw.warmupSeconds = warmupSeconds;
  useNoiseStream(raw, noise);
  if (controller) {
    const adaptiveStrategy = /** @type {{ controller: Record<string, unknown> }} */ (raw.strategies.adaptive);
    adaptiveStrategy.controller = { ...adaptiveStrategy.controller, ...controller };
  }
  const scenario = resolveScenario(raw, raw.name);
  const adaptive = runStrategy(scenario, 'adaptive');
  const oracle = oracles?.oracle ?? runStrategy(scenario, 'oracle');
  const informed = oracles?.informed ?? runStrategy(scenario, 'informed-oracle');
  const ratio = (/** @type {Run} */ reference) => (adaptive.completionSeconds !== null && reference.completionSeconds ? adaptive.completionSeconds / reference.completionSeconds : null);
  return {
    seed,
    description: scenario.description,
    audience: scenario.audience,
    eventful: [...scenario.gateway.capacityChanges, ...scenario.baseline.spikes].some((e) => !e.announced),
    adaptive,
    oracle,
    informed,
    informedRatio: ratio(informed),
    oracleRatio: ratio(oracle),
    runtimeMs: Math.round(performance.now() - started)
  };
}

/**
 * Another noise stream for the same drawn world: the world's noise seed XOR `noise` (0: the
 * drawn one). sim/tune.js --noise and sim/trace-world.js --noise run the same stream. Throws
 * an InputError unless `noise` is a whole number in [0, 2³¹).
 * @param {Record<string, any>} raw  drawScenario's world, its seed changed in place
 * @param {number} noise
 */
export function useNoiseStream(raw, noise) {
  if (!(Number.isInteger(noise) && noise >= 0 && noise < 2 ** 31)) throw new InputError(`--noise must be a whole number ≥ 0, got ${noise}`);
  if (noise !== 0) raw.seed = (raw.seed ^ noise) >>> 0;
}

/**
 * One strategy on one world, as the evaluation records it.
 * @param {import('./scenario.js').Scenario} scenario
 * @param {string} strategy
 * @returns {Run}
 */
function runStrategy(scenario, strategy) {
  let r;
  try {
    r = simulate(scenario, strategy);
  } catch (err) {
    // An oracle's program the solver could not solve (SolverError), or one with no room at
    // all (RangeError), must not end a run of hundreds of worlds: the world is left out of
    // the distribution and counted.
    if (!(err instanceof RangeError || err instanceof SolverError)) throw err;
    return { completionSeconds: null, sloViolationShare: 0, violatedWindows: 0, evaluatedWindows: 0, gatewayErrors: 0, failed: err.message };
  }
  return { completionSeconds: r.completionSeconds, sloViolationShare: r.sloViolationShare, violatedWindows: r.violatedWindows, evaluatedWindows: r.evaluatedWindows, gatewayErrors: r.gatewayErrors };
}

/**
 * A world where the adaptive strategy caused gateway errors that the informed oracle avoided:
 * issue #11's targets count it as a failure whatever its time.
 * @param {WorldRow} row
 */
export function isErrorWorld(row) {
  return row.adaptive.gatewayErrors > 0 && row.informed.gatewayErrors === 0;
}

/**
 * The distribution over worlds. A ratio of null (the adaptive strategy did not finish
 * within maxSeconds) counts as infinitely slow in the quantiles, which then read null. So
 * does an error world's informed ratio: a campaign that floods the gateway and ends early
 * must not read as faster than one that holds back (decided in session 68, bench/RESULTS.md).
 * Window shares pool the windows of the worlds in a class.
 * @param {WorldRow[]} allRows
 */
export function summarise(allRows) {
  // Worlds where an oracle could not plan are left out (and counted).
  const rows = allRows.filter((r) => !r.oracle.failed && !r.informed.failed && !r.adaptive.failed);
  const quiet = rows.filter((r) => !r.eventful);
  const eventful = rows.filter((r) => r.eventful);
  const pooled = (/** @type {WorldRow[]} */ list, /** @type {'adaptive' | 'informed' | 'oracle'} */ who) => {
    const evaluated = list.reduce((s, r) => s + r[who].evaluatedWindows, 0);
    return evaluated ? list.reduce((s, r) => s + r[who].violatedWindows, 0) / evaluated : 0;
  };
  const summary = {
    worlds: rows.length,
    oracleFailures: allRows.length - rows.length,
    notFinished: rows.filter((r) => r.adaptive.completionSeconds === null).length,
    informedRatio: distribution(rows.map((r) => (isErrorWorld(r) ? Infinity : r.informedRatio ?? Infinity))),
    oracleRatio: distribution(rows.map((r) => r.oracleRatio ?? Infinity)),
    informedVsOracle: distribution(rows.map((r) => (r.informed.completionSeconds && r.oracle.completionSeconds ? r.informed.completionSeconds / r.oracle.completionSeconds : Infinity))),
    quiet: { worlds: quiet.length, adaptiveShare: pooled(quiet, 'adaptive'), informedShare: pooled(quiet, 'informed'), worldsOver: quiet.filter((r) => r.adaptive.sloViolationShare > HOLDOUT_TARGETS.quietViolationShare).length },
    eventful: { worlds: eventful.length, adaptiveShare: pooled(eventful, 'adaptive'), informedShare: pooled(eventful, 'informed'), oracleShare: pooled(eventful, 'oracle'), points: 100 * (pooled(eventful, 'adaptive') - pooled(eventful, 'informed')) },
    errorWorlds: rows.filter(isErrorWorld).length
  };
  return summary;
}

/** @typedef {ReturnType<typeof summarise>} Summary */

/**
 * A summary as one JSON line's fields: each target's value (to 3 decimals; null where there
 * is none), and the campaigns not finished and the oracles that failed.
 * @param {ReturnType<typeof summarise>} summary
 * @returns {Record<string, number | null>}
 */
export function targetValues(summary) {
  const targets = Object.fromEntries(checkTargets(summary).map((t) => [t.name, t.value === null ? null : Number(t.value.toFixed(3))]));
  return { ...targets, notFinished: summary.notFinished, oracleFailures: summary.oracleFailures };
}

/**
 * Each target, its value and whether it is met (quiet/eventful targets are met vacuously
 * when there is no such world).
 * @param {Summary} s
 * @returns {Array<{ name: string, value: number | null, limit: number, met: boolean }>}
 */
export function checkTargets(s) {
  const t = HOLDOUT_TARGETS;
  const finite = (/** @type {number} */ x) => (Number.isFinite(x) ? x : null);
  return [
    { name: 'median × informed oracle', value: finite(s.informedRatio.median), limit: t.medianRatio, met: s.informedRatio.median <= t.medianRatio },
    { name: 'p90 × informed oracle', value: finite(s.informedRatio.p90), limit: t.p90Ratio, met: s.informedRatio.p90 <= t.p90Ratio },
    { name: 'windows over the SLO, quiet worlds (%)', value: 100 * s.quiet.adaptiveShare, limit: 100 * t.quietViolationShare, met: s.quiet.adaptiveShare <= t.quietViolationShare },
    { name: 'points over the informed oracle, eventful worlds', value: s.eventful.points, limit: t.eventfulViolationPoints, met: s.eventful.points <= t.eventfulViolationPoints },
    { name: 'worlds with gateway errors the informed oracle avoids', value: s.errorWorlds, limit: t.errorWorlds, met: s.errorWorlds <= t.errorWorlds }
  ];
}

/**
 * Median, p90 (nearest rank) and max.
 * @param {number[]} values
 */
function distribution(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, p90: at(0.9), max: sorted.at(-1) ?? NaN };
}
