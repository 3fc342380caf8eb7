// The oracle's schedule: the earliest completion that keeps the expected gateway load
// within the SLO capacity at every moment, computed with perfect knowledge of the world.
//
// With x_i the sends in bin i (bins of Δ seconds), κ the true kernel on that grid and a the
// true requests per send, the expected push load in bin j is (a/Δ)·Σ_i κ(j-i)·x_i. With the
// known future baseline B and SLO capacity C (world.sloCapacityAt), a schedule of n bins is
// feasible when
//
//   Σ_i κ(j-i)·x_i ≤ (C_j - B_j)·Δ/a    for every bin j (including after the last send)
//   0 ≤ x_i ≤ snsMax·Δ
//
// The most a schedule of n bins can send is a linear program (maximise Σ x_i); the fastest
// schedule is the smallest n whose optimum reaches the audience, found by bisection. A
// greedy "send as much as fits now" is not enough: with a kernel that peaks after a delay,
// greedy bursts fill the peak and then starve, and the linear program can be much faster.
//
// The oracle knows when the campaign ends, and its last bins fill the room the campaign
// leaves behind: their load arrives after the last send, when nothing else will. A pacer
// that does not know the audience's size cannot do that; it keeps room for sends that would
// follow. With `knowsEnd: false` the planner gives a reference for that: after the last
// bin n, the room left is only what a continuation at the steady rate would not use,
// (C_j - B_j)·(1 - K(j - n)) with K the kernel's running sum.
//
// The informed oracle (sim/strategies/informed-oracle.js) replans mid-campaign: from
// `fromSeconds`, for the devices still to send, with the expected load of the sends it has
// already made (`committedLoad`) taken off the room in every bin.

import { binKernel, cumulativeKernel } from '../shared/pacing/wake-up-model.js';
import { maximise } from './linear-program.js';

/**
 * @typedef {object} PlanOptions
 * @property {boolean} [knowsEnd]  false: leave room for a continuation after the last send (a reference, see above)
 * @property {number} [fromSeconds]  the plan starts here (seconds from the campaign's start); bin 0 begins at it
 * @property {number} [audience]  devices to send from fromSeconds on (default the scenario's audience)
 * @property {(t: number) => number} [committedLoad]  expected push requests/s at second t from sends already made
 */

/**
 * @param {import('./scenario.js').Scenario} scenario
 * @param {import('./world.js').World} world
 * @param {PlanOptions} [options]
 * @returns {{ binSeconds: number, sendsPerBin: Float64Array, completionBins: number }}
 *   bin i covers seconds fromSeconds + i·binSeconds onwards
 */
export function planOracle(scenario, world, { knowsEnd = true, fromSeconds = 0, audience = scenario.audience, committedLoad } = {}) {
  const { confidence, dropConfidence } = scenario.strategies.oracle;
  const a = world.requestsPerSend;
  const horizon = scenario.maxSeconds - fromSeconds;
  /** The margin at second t: a drop's own while the capacity, as this world knows it, is down. @param {number} t */
  const marginAt = (t) => (dropConfidence !== null && world.capacityFactorAt(t) < 1 ? dropConfidence : confidence);
  /** The room for push traffic at second t, requests/s. @param {number} t */
  const roomAt = (t) => world.sloCapacityAt(t, marginAt(t)) - world.baselineAt(t) - (committedLoad ? committedLoad(t) : 0);
  // The steady room for push traffic over the first hour, in sends per second: a first
  // guess of how long the campaign takes. If the first hour has none (a known drop below
  // the baseline), the average over the whole horizon.
  let steadyRate = 0;
  for (let t = 0; t < 3600; t += 10) steadyRate += Math.max(0, roomAt(fromSeconds + t)) / a / 360;
  if (!(steadyRate * horizon > audience * 1e-3)) {
    steadyRate = 0;
    const step = Math.max(10, Math.ceil(horizon / 1000));
    for (let t = 0; t < horizon; t += step) steadyRate += (Math.max(0, roomAt(fromSeconds + t)) / a) * (step / horizon);
    if (!(steadyRate > 0)) throw new RangeError(`oracle: no room for push traffic from ${fromSeconds} s until maxSeconds`);
  }
  // Keep each program to a few hundred variables and the kernel to at most ~300 bins; a
  // kernel that long is smooth on the coarser grid.
  const binSeconds = Math.max(
    scenario.strategies.oracle.binSeconds,
    Math.ceil(world.massPerSecond.length / 300),
    10 * Math.ceil(Math.min(audience / Math.max(steadyRate, 1e-9), horizon) / 300 / 10)
  );
  const kernel = binKernel(world.massPerSecond, binSeconds);
  const cumulative = cumulativeKernel(kernel);
  const perBinMax = scenario.sns.maxRate * binSeconds;
  const perBin = Math.max(1e-9, steadyRate * binSeconds);

  /** Room for push load in bin j, in sends-equivalents: min over its seconds of (C - B)·Δ/a. */
  const roomCache = new Map();
  /** @param {number} j */
  function room(j) {
    let r = roomCache.get(j);
    if (r === undefined) {
      let least = Infinity;
      for (let t = fromSeconds + j * binSeconds; t < fromSeconds + (j + 1) * binSeconds; t++) least = Math.min(least, roomAt(t));
      r = (Math.max(0, least) * binSeconds) / a;
      roomCache.set(j, r);
    }
    return r;
  }

  /**
   * The most that n bins of sending can deliver, and how.
   * @param {number} n
   */
  function most(n) {
    const rows = loadRows(kernel, n, n + kernel.length - 1);
    const bounds = rows.map((_, j) => (knowsEnd || j < n ? room(j) : room(j) * Math.max(0, 1 - (j - n < kernel.length ? cumulative[j - n] : 1))));
    const objective = new Float64Array(n).fill(1);
    // SNS's limit is rarely binding; add it only for bins that exceed it, then solve again.
    /** @type {Set<number>} */
    const capped = new Set();
    for (;;) {
      const { x, value } = maximise({ rows, bounds, objective });
      let added = false;
      for (let i = 0; i < n; i++) {
        if (x[i] > perBinMax * (1 + 1e-9) && !capped.has(i)) {
          const row = new Float64Array(n);
          row[i] = 1;
          rows.push(row);
          bounds.push(perBinMax);
          capped.add(i);
          added = true;
        }
      }
      if (!added) return { x, value };
    }
  }

  // The smallest feasible n. The most n bins can send grows almost linearly in n, so
  // secant steps land near it in a few programs; bisection keeps the bracket honest.
  const limitBins = Math.ceil(horizon / binSeconds);
  let lo = 0; // known infeasible (nothing fits in 0 bins)
  /** @type {number | null} */
  let hi = null; // known feasible
  /** @type {{ x: Float64Array, value: number } | null} */
  let best = null;
  let n = Math.min(limitBins, Math.max(1, Math.round(audience / perBin)));
  /** @type {[number, number] | null} */
  let previous = null;
  for (;;) {
    const attempt = most(n);
    if (attempt.value >= audience) { hi = n; best = attempt; } else lo = n;
    if (hi !== null && hi - lo <= 1) break;
    if (hi === null && n >= limitBins) throw new RangeError(`oracle: ${audience} devices cannot be sent within maxSeconds without exceeding the SLO capacity`);
    const slope = previous && previous[0] !== n ? Math.max(perBin / 4, (attempt.value - previous[1]) / (n - previous[0])) : perBin;
    previous = [n, attempt.value];
    let next = n + Math.ceil((audience - attempt.value) / slope) - (attempt.value >= audience ? 1 : 0);
    const ceiling = hi ?? limitBins + 1;
    if (next <= lo || next >= ceiling) next = hi === null ? Math.min(limitBins, Math.max(lo + 1, n * 2)) : Math.floor((lo + ceiling) / 2);
    n = next;
  }
  const plan = /** @type {{ x: Float64Array, value: number }} */ (best);

  // Trim the plan to exactly the audience, taking the excess from the end.
  const sendsPerBin = plan.x.slice();
  let excess = sendsPerBin.reduce((s, v) => s + v, 0) - audience;
  for (let i = sendsPerBin.length - 1; i >= 0 && excess > 0; i--) {
    const cut = Math.min(sendsPerBin[i], excess);
    sendsPerBin[i] -= cut;
    excess -= cut;
  }
  return { binSeconds, sendsPerBin, completionBins: /** @type {number} */ (hi) };
}

/**
 * The program's load rows: row j is the load in bin j, in sends-equivalents, of sends x_i in
 * the first `sending` of n bins, Σ_i κ(j − i)·x_i, for bins 0 … count − 1.
 * @param {Float64Array} kernel  κ on the bin grid
 * @param {number} n        variables (bins that may send)
 * @param {number} count    rows
 * @param {number} [sending]  only the first this many bins' sends count (default all n)
 * @returns {Float64Array[]}
 */
export function loadRows(kernel, n, count, sending = n) {
  /** @type {Float64Array[]} */
  const rows = [];
  for (let j = 0; j < count; j++) {
    const row = new Float64Array(n);
    for (let i = Math.max(0, j - kernel.length + 1); i <= Math.min(j, sending - 1); i++) row[i] = kernel[j - i];
    rows.push(row);
  }
  return rows;
}
