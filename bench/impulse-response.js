// (e) The learned wake-up response's cost: one Kalman update of the impulse-response
// estimator (shared/pacing/impulse-response.js) for a one-hour horizon at 10-s bins (360
// lags), with a campaign's worth of sends in its history. Target: one update under 20 ms.
// It also checks that the estimate recovers a response the prior does not have (two humps),
// so the number timed is the cost of a working estimator.
import { performance } from 'node:perf_hooks';
import { createImpulseResponseEstimator } from '../shared/pacing/impulse-response.js';
import { binKernel, requestTimeMassPerSecond } from '../shared/pacing/wake-up-model.js';

const BIN_MS = 10_000;

/**
 * @param {{ windows?: number, bins?: number }} [options]
 */
export function benchImpulseResponse({ windows = 1500, bins = 360 } = {}) {
  const mass = (/** @type {{ share: number, medianMs: number, sigma: number }[]} */ openDelay) =>
    binKernel(requestTimeMassPerSecond({ openDelay, session: { kind: 'uniform', lengthMs: 60_000 } }, { tailMass: 1e-6 }), BIN_MS / 1000);
  const fit = (/** @type {Float64Array} */ k) => Float64Array.from({ length: bins }, (_, j) => k[j] ?? 0);
  // The truth: half the openers within a minute, half about 20 minutes later; 0.8 requests per send.
  const truth = fit(mass([{ share: 0.5, medianMs: 30_000, sigma: 0.5 }, { share: 0.5, medianMs: 1_200_000, sigma: 0.4 }])).map((k) => 0.8 * k);
  // The prior: one log-normal hump at 90 s, 1.5 requests per send.
  const prior = fit(mass([{ share: 1, medianMs: 90_000, sigma: 1 }])).map((k) => 1.5 * k);
  const estimator = createImpulseResponseEstimator({
    prior, priorSd: 1.5, binMs: BIN_MS, pastBins: 4, baselineDrift: 0.005, gainDrift: 0.003, rpsNoise: 0.02, windowSeconds: 10
  });
  /** @type {number[]} */
  const sends = [];
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  /** @type {number[]} */
  const times = [];
  for (let w = 0; w < windows; w++) {
    const now = w * BIN_MS;
    estimator.advanceTo(w);
    // A campaign that varies its rate (bursts and pauses excite every lag), then stops.
    const n = w < 1000 ? Math.round(200 + 600 * random() * (w % 30 < 10 ? 1 : 0.2)) : 0;
    sends[w] = n;
    estimator.addSends(now, now + BIN_MS, n);
    let load = 400;
    for (let j = 0; j < bins && j <= w; j++) load += (sends[w - j] * truth[j]) / 10;
    const rps = load + Math.sqrt(load / 10) * (random() + random() + random() - 1.5) * 2;
    const started = performance.now();
    estimator.update({ rps, windowStartMs: now, windowEndMs: now + BIN_MS, dtMs: BIN_MS });
    times.push(performance.now() - started);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const h = estimator.response();
  const sum = (/** @type {Float64Array} */ a, /** @type {number} */ from, /** @type {number} */ to) => a.slice(from, to).reduce((x, y) => x + y, 0);
  return {
    bins,
    windows,
    medianMs: at(0.5),
    p99Ms: at(0.99),
    maxMs: sorted[sorted.length - 1],
    // Requests per send in the fast wave (lags under 5 min) and the slow one (10-60 min).
    fast: { learned: sum(h, 0, 30), truth: sum(truth, 0, 30), prior: sum(prior, 0, 30) },
    slow: { learned: sum(h, 60, bins), truth: sum(truth, 60, bins), prior: sum(prior, 60, bins) },
    negative: h.some((x) => x < 0)
  };
}

/** @param {ReturnType<typeof benchImpulseResponse>} r */
export function formatImpulseResponseSection(r) {
  const pass = r.maxMs < 20 && !r.negative;
  return {
    pass,
    text: [`### (e) The learned wake-up response: cost of one update (shared/pacing/impulse-response.js)`,
      `${r.bins} lags (one hour at 10-s bins), ${r.windows} windows of a campaign whose rate varies, then stops; the truth has two humps (30 s and 20 min), the prior one (90 s).`, '',
      '| update median | p99 | max | target |', '|---|---|---|---|',
      `| ${r.medianMs.toFixed(2)} ms | ${r.p99Ms.toFixed(2)} ms | ${r.maxMs.toFixed(2)} ms | max < 20 ms, never negative: ${pass ? 'met' : 'NOT met'} |`, '',
      '| requests per send | learned | truth | prior |', '|---|---|---|---|',
      `| lags < 5 min (fast wave) | ${r.fast.learned.toFixed(3)} | ${r.fast.truth.toFixed(3)} | ${r.fast.prior.toFixed(3)} |`,
      `| lags 10–60 min (slow wave) | ${r.slow.learned.toFixed(3)} | ${r.slow.truth.toFixed(3)} | ${r.slow.prior.toFixed(3)} |`, ''].join('\n')
  };
}
