// What the demo measures at the end, from the gateway's own record of every request: the
// exact p95 per window (not a histogram estimate), the share of windows within the SLO,
// and per-second rates for the chart. Pure functions over arrays.

/**
 * The q-quantile by nearest rank: the smallest value with at least q of them at or below it.
 * @param {number[]} sorted  ascending
 * @param {number} q
 */
export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * @typedef {object} Window
 * @property {number} start     ms since the epoch
 * @property {number} requests  answered in the window
 * @property {number} errors    of them, answered 5xx or not at all (status 0)
 * @property {number} p95Ms     NaN when no request ended in the window
 * @property {number} rps
 */

/**
 * Cuts the gateway's samples into windows by the time each response ended (as a
 * Prometheus histogram observes them): [from, from + windowMs), ... up to `to`; a last
 * partial window counts if at least half of it lies before `to`.
 * @param {ArrayLike<number>} samples  flattened [endMs, latencyMs, status] triples (status 0: no answer)
 * @param {{ from: number, to: number, windowMs: number }} range
 * @returns {Window[]}
 */
export function windowsOf(samples, { from, to, windowMs }) {
  const n = Math.max(0, Math.floor((to - from) / windowMs + 0.5));
  /** @type {number[][]} */
  const latencies = Array.from({ length: n }, () => []);
  const errors = new Array(n).fill(0);
  for (let i = 0; i + 2 < samples.length; i += 3) {
    const k = Math.floor((samples[i] - from) / windowMs);
    if (k < 0 || k >= n) continue;
    latencies[k].push(samples[i + 1]);
    if (samples[i + 2] >= 500 || samples[i + 2] === 0) errors[k]++;
  }
  return latencies.map((values, k) => {
    values.sort((a, b) => a - b);
    return { start: from + k * windowMs, requests: values.length, errors: errors[k], p95Ms: quantile(values, 0.95), rps: values.length / (windowMs / 1000) };
  });
}

/**
 * How many windows had their p95 within the SLO. Windows without requests say nothing and
 * are not counted.
 * @param {Window[]} windows
 * @param {number} sloMs
 */
export function sloShare(windows, sloMs) {
  const measured = windows.filter((w) => w.requests > 0);
  const within = measured.filter((w) => w.p95Ms <= sloMs).length;
  return {
    evaluated: measured.length,
    within,
    share: measured.length ? within / measured.length : 0,
    peakP95Ms: Math.max(0, ...measured.map((w) => w.p95Ms))
  };
}

/**
 * Counts per whole second in [from, to), as [seconds since `origin`, count] points.
 * @param {Map<number, number>} perSecond  epoch second → count
 * @param {number} from  ms since the epoch
 * @param {number} to
 * @param {number} [origin]  ms since the epoch; `from` unless given
 * @returns {[number, number][]}
 */
export function secondsSeries(perSecond, from, to, origin = from) {
  /** @type {[number, number][]} */
  const points = [];
  for (let s = Math.floor(from / 1000); s < Math.ceil(to / 1000); s++) points.push([s - origin / 1000, perSecond.get(s) ?? 0]);
  return points;
}

/**
 * Gateway responses per whole second since the epoch, from its samples.
 * @param {ArrayLike<number>} samples  flattened [endMs, latencyMs, status] triples
 */
export function responsesPerSecond(samples) {
  /** @type {Map<number, number>} */
  const out = new Map();
  for (let i = 0; i + 2 < samples.length; i += 3) {
    const s = Math.floor(samples[i] / 1000);
    out.set(s, (out.get(s) ?? 0) + 1);
  }
  return out;
}
