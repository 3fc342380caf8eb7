// The pacing benchmark: every strategy on every scenario in sim/scenarios/, in virtual time.
// Returns one row per (scenario, strategy) with completion time, its ratio to the oracle's,
// the share of 10-s windows with p95 over the SLO and gateway errors, checks the adaptive
// strategy's targets (issue 4), and writes a chart per scenario to bench/charts/.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadScenario } from '../sim/scenario.js';
import { STRATEGIES, simulate } from '../sim/simulate.js';
import { renderChart } from '../sim/chart.js';
import { createPacer } from '../sim/strategies/pacer.js';

const SCENARIOS = fileURLToPath(new URL('../sim/scenarios/', import.meta.url));
const CHARTS = fileURLToPath(new URL('./charts/', import.meta.url));

/** Targets for the adaptive strategy on every scenario, and against batches on all-users. */
export const PACING_TARGETS = Object.freeze({ maxOracleRatio: 1.15, maxViolationShare: 0.01, maxGatewayErrors: 0, minSpeedupOverBatches: 5 });

/**
 * @typedef {object} PacingRow
 * @property {string} scenario
 * @property {string} strategy
 * @property {number | null} completionSeconds
 * @property {number | null} oracleRatio        completion / the oracle's
 * @property {number} sloViolationShare
 * @property {number} gatewayErrors
 * @property {number} peakP95Ms
 * @property {number} runtimeMs
 * @property {boolean | null} targetsMet        adaptive rows only: within 1.15× the oracle, ≤ 1% windows over the SLO, no errors (and ≥ 5× faster than batches on all-users)
 */

/**
 * @param {{ scenarios?: string[], chartsDir?: string | null }} [options]
 *   scenarios: names (file names without .json) to run, default all; chartsDir: where to
 *   write the SVGs, or null for none
 * @returns {{ rows: PacingRow[], bounds: PacingRow[], runtimeMs: number, largestRunMs: number }}
 */
export function benchPacing({ scenarios, chartsDir = CHARTS } = {}) {
  const started = performance.now();
  const names = scenarios ?? readdirSync(SCENARIOS).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
  /** @type {PacingRow[]} */
  const rows = [];
  /** @type {PacingRow[]} */
  const bounds = [];
  let largestRunMs = 0;
  if (chartsDir) mkdirSync(chartsDir, { recursive: true });

  for (const name of names) {
    const scenario = loadScenario(`${SCENARIOS}${name}.json`);
    const results = Object.keys(STRATEGIES).map((strategy) => simulate(scenario, strategy, { series: chartsDir !== null }));
    const byName = Object.fromEntries(results.map((r) => [r.strategy, r]));
    const oracle = byName.oracle.completionSeconds;
    for (const r of results) {
      largestRunMs = Math.max(largestRunMs, r.runtimeMs);
      const ratio = r.completionSeconds !== null && oracle ? r.completionSeconds / oracle : null;
      let targetsMet = null;
      if (r.strategy === 'adaptive') {
        targetsMet = ratio !== null && ratio <= PACING_TARGETS.maxOracleRatio && r.sloViolationShare <= PACING_TARGETS.maxViolationShare &&
          r.gatewayErrors <= PACING_TARGETS.maxGatewayErrors;
        if (name === 'all-users') {
          const batches = byName.batches.completionSeconds;
          targetsMet &&= batches !== null && r.completionSeconds !== null && batches / r.completionSeconds >= PACING_TARGETS.minSpeedupOverBatches;
        }
      }
      rows.push({
        scenario: name,
        strategy: r.strategy,
        completionSeconds: r.completionSeconds,
        oracleRatio: ratio,
        sloViolationShare: r.sloViolationShare,
        gatewayErrors: r.gatewayErrors,
        peakP95Ms: r.peakP95Ms,
        runtimeMs: r.runtimeMs,
        targetsMet
      });
    }
    // Where the capacity drops without warning, what no causal controller can beat: the
    // adaptive run's average rate up to the drop, stopped the very second capacity drops
    // (no measurement delay at all) and resumed when it returns.
    const drop = scenario.gateway.capacityChanges[0];
    const adaptive = byName.adaptive;
    if (drop && adaptive.series) {
      let sent = 0;
      for (let k = 0; k < adaptive.series.t.length && adaptive.series.t[k] < drop.atSeconds; k++) sent += adaptive.series.sendRate[k] * adaptive.series.windowSeconds;
      const rate = sent / Math.max(1, drop.atSeconds);
      const b = simulateInstantStop(scenario, rate, drop.atSeconds, drop.atSeconds + drop.durationSeconds);
      bounds.push({
        scenario: name,
        strategy: `instant stop at ${rate.toFixed(0)}/s`,
        completionSeconds: b.completionSeconds,
        oracleRatio: b.completionSeconds !== null && oracle ? b.completionSeconds / oracle : null,
        sloViolationShare: b.sloViolationShare,
        gatewayErrors: b.gatewayErrors,
        peakP95Ms: b.peakP95Ms,
        runtimeMs: b.runtimeMs,
        targetsMet: null
      });
    }
    if (chartsDir) {
      // The time axis covers the oracle's and the adaptive run's evaluation; slower runs continue past it.
      const xMax = Math.max(...[byName.oracle, byName.adaptive].map((r) => (r.series?.t.at(-1) ?? 0) + 10));
      const svg = renderChart({
        title: `${name}: ${scenario.audience.toLocaleString('en-US')} devices, p95 SLO ${scenario.slo.p95Ms} ms`,
        runs: results.map((r) => ({ label: r.strategy, series: /** @type {import('../sim/simulate.js').Series} */ (r.series) })),
        sloP95Ms: scenario.slo.p95Ms,
        xMaxSeconds: xMax
      });
      writeFileSync(`${chartsDir}${chartsDir.endsWith('/') ? '' : '/'}${name}.svg`, svg);
    }
  }
  return { rows, bounds, runtimeMs: Math.round(performance.now() - started), largestRunMs };
}

/**
 * A fixed rate that stops exactly when capacity drops and resumes when it returns.
 * @param {import('../sim/scenario.js').Scenario} scenario
 * @param {number} rate
 * @param {number} stopAt
 * @param {number} resumeAt
 */
function simulateInstantStop(scenario, rate, stopAt, resumeAt) {
  return simulate(scenario, () => {
    const pacer = createPacer();
    return {
      name: 'instant-stop',
      sendsAt: ({ t, remaining, snsMax }) => (t < 0 ? 0 : pacer.take(t < stopAt || t >= resumeAt ? rate : 0, Math.min(remaining, snsMax)))
    };
  });
}
