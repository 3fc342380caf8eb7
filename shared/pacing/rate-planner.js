// Dead-time compensation: choose the send rate from the load it will cause, not from the
// load it causes now (model-predictive control over the wake-up horizon).
//
// In unit-load terms (requests per second per unit of requests-per-send), the gateway can
// take X* of push-induced load (from the parameter estimator's upper bound and the capacity
// estimate). U(j) is the load already committed by past sends to bin j ahead (the load
// ledger), κ(j) the share of a send's requests arriving j bins after its own bin and
// K(j) = κ(0) + ... + κ(j). The plan: send at r for the next interval T, then at X* for ever
// after. Its predicted excess in bin j is
//
//   e_j(r) = U(j) + r·p_j + X*·K(j-1) - X*,      p_j = (T/Δ)·κ(j)
//
// A hard constraint e_j ≤ 0 for all j makes the rate jump to 0 whenever X* dips below the
// committed load by a hair, because bins where r has almost no influence (the next few
// seconds, the far tail) then bind. So the excess is a soft constraint with a quadratic
// penalty, and r maximises
//
//   J(r) = r - (1 / (2θ·X*)) · Σ_j max(0, e_j(r))²
//
// J is concave; its maximum solves Σ_j p_j·max(0, e_j(r)) = θ·X*, found by bisection. θ is
// set from the `softness` s as θ = s·Σ p_j², which makes the steady state r = X*·(1 + s):
// s is the share by which the plan lets predicted load exceed X* for the sake of a smooth
// rate; the planner aims at X*/(1 + s) to cancel it. With a small s the plan still fills
// the empty room at the start with a burst sized to the kernel's peak (the first sends'
// load arrives only minutes later) and, when X* drops by ε, lowers r smoothly in
// proportion to ε instead of stopping; when the committed load is far over X*, r is 0 until
// it has drained, exactly as long as the model says.
//
// When the devices still to send, R, are known, the continuation is not for ever: it sends
// the R - r·T left after this interval at X̃ and stops, M(r) = (R - r·T)/(X̃·Δ) bins, so
//
//   e_j(r) = U(j) + r·p_j + X̃·(K(j-1) - K(j-1-M(r))) - X̃
//
// The last sends' load then arrives when nothing else will, and the room it leaves lets the
// plan send faster towards the end (what the oracle does with its knowledge of the end).
// Sending more now shortens the continuation, so e_j is no longer increasing in r and J no
// longer concave: r comes from a grid over [0, maxRate], refined around the best point.

/**
 * @param {{ kernel: Float64Array, cumulative: Float64Array, binMs: number, softness: number }} model
 */
export function createRatePlanner({ kernel, cumulative, binMs, softness }) {
  let sumSquares = 0;
  for (const k of kernel) sumSquares += k * k;

  /**
   * @param {object} input
   * @param {number} input.nowMs
   * @param {number} input.maxUnitLoad  X*
   * @param {(bin: number) => number} input.committed  U: unit load per absolute bin
   * @param {number} input.intervalMs   how long the returned rate will hold
   * @param {number} input.maxRate      no need to look beyond this
   * @param {number} [input.remaining]  devices still to send; Infinity (the default) when unknown
   * @returns {number} sends per second
   */
  function plan({ nowMs, maxUnitLoad, committed, intervalMs, maxRate, remaining = Infinity }) {
    if (!(maxUnitLoad > 0)) return 0;
    const target = maxUnitLoad / (1 + softness);
    const currentBin = Math.floor(nowMs / binMs);
    const pulse = Math.min(1, intervalMs / binMs);
    const theta = softness * sumSquares * pulse * pulse * target;
    const intervalSeconds = intervalMs / 1000;
    const binSeconds = binMs / 1000;
    /** Continuation bins left after sending at r for this interval. @param {number} r */
    const continuationBins = (r) => Math.max(0, remaining - r * intervalSeconds) / (target * binSeconds);
    if (continuationBins(maxRate) < kernel.length) {
      return planToEnd({ currentBin, target, theta, pulse, committed, maxRate, continuationBins });
    }
    // Excess before r: e_j(0).
    const base = new Float64Array(kernel.length);
    for (let j = 0; j < kernel.length; j++) {
      base[j] = committed(currentBin + j) + target * (j === 0 ? 0 : cumulative[j - 1]) - target;
    }
    /** Σ p_j·max(0, e_j(r)) - θ·X*: increasing in r. @param {number} r */
    const marginal = (r) => {
      let sum = 0;
      for (let j = 0; j < kernel.length; j++) {
        const p = pulse * kernel[j];
        const e = base[j] + r * p;
        if (e > 0) sum += p * e;
      }
      return sum - theta;
    };
    if (marginal(0) >= 0) return 0;
    let hi = Math.max(1, target);
    while (marginal(hi) < 0) {
      if (hi >= maxRate) return maxRate;
      hi = Math.min(maxRate, hi * 2);
    }
    let lo = 0;
    for (let i = 0; i < 50 && hi - lo > 1e-6 * hi; i++) {
      const mid = (lo + hi) / 2;
      if (marginal(mid) < 0) lo = mid; else hi = mid;
    }
    return lo;
  }

  /** K at a fractional lag x (linear within a bin; 0 before lag 0, 1 past the kernel). @param {number} x */
  function cumulativeAt(x) {
    if (x < 0) return 0;
    const i = Math.floor(x);
    if (i >= kernel.length - 1) return cumulative[kernel.length - 1];
    return cumulative[i] + (x - i) * kernel[i + 1];
  }

  /**
   * The plan with a continuation that ends when the remaining devices are sent.
   * @param {{ currentBin: number, target: number, theta: number, pulse: number, committed: (bin: number) => number,
   *   maxRate: number, continuationBins: (r: number) => number }} input
   */
  function planToEnd({ currentBin, target, theta, pulse, committed, maxRate, continuationBins }) {
    const fixed = new Float64Array(kernel.length);
    for (let j = 0; j < kernel.length; j++) {
      fixed[j] = committed(currentBin + j) + target * (j === 0 ? 0 : cumulative[j - 1]) - target;
    }
    /** J(r)·2θX̃ (θX̃ is `theta` here). @param {number} r */
    const objective = (r) => {
      const m = continuationBins(r);
      let penalty = 0;
      for (let j = 0; j < kernel.length; j++) {
        const e = fixed[j] + r * pulse * kernel[j] - (j === 0 ? 0 : target * cumulativeAt(j - 1 - m));
        if (e > 0) penalty += e * e;
      }
      return 2 * theta * r - penalty;
    };
    const steps = 64;
    let best = 0;
    let bestValue = objective(0);
    for (let i = 1; i <= steps; i++) {
      const r = (maxRate * i) / steps;
      const value = objective(r);
      if (value > bestValue) { best = r; bestValue = value; }
    }
    // Golden-section search within the grid cells either side of the best point.
    let lo = Math.max(0, best - maxRate / steps);
    let hi = Math.min(maxRate, best + maxRate / steps);
    const ratio = (Math.sqrt(5) - 1) / 2;
    for (let i = 0; i < 80 && hi - lo > 1e-9 * maxRate; i++) {
      const a = hi - ratio * (hi - lo);
      const b = lo + ratio * (hi - lo);
      if (objective(a) >= objective(b)) hi = b; else lo = a;
    }
    const refined = (lo + hi) / 2;
    return objective(refined) >= bestValue ? refined : best;
  }

  return { plan };
}
