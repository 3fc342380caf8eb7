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
// the R - r·T left after this interval at X̃, M(r) = (R - r·T)/(X̃·Δ) bins, and then goes
// on at a reserve ρ = reserveShare·X̃ for the sends that are not the campaigns' (transactional
// notifications, a campaign that starts later):
//
//   e_j(r) = U(j) + r·p_j + X̃·K(j-1) - (X̃ - ρ)·K(j-1-M(r)) - X̃
//
// The last sends' load then arrives when little else will, and the room it leaves lets the
// plan send faster towards the end (what the oracle does with its knowledge of the end).
// Sending more now shortens the continuation, so e_j is no longer increasing in r and J no
// longer concave: r comes from a search over candidate rates, refined around the best.
//
// Whatever R is, the plan "ρ now, ρ for ever" stays admissible once the committed load has
// room for it, and the reserve keeps that room at the end of a campaign; so the rate never
// falls below ρ while it fits (min(ρ, the rate of that plan)). Without that floor, an unknown
// R right after a campaign's last burst (its continuation X̃ for ever no longer fits) would
// stop every send, transactional ones too, until the burst's load had passed.
//
// The end plan keeps room for twice the reserve (END_RESERVE_FACTOR). Its best r balances the
// sends against the predicted excess exactly where "ρ for ever" stops fitting, so with room
// for ρ alone, one window's change in a member's estimates after the last burst could leave
// no room for the floor: a bank slower to rule out a wrong shape (likelihoodWeight 0.25) sent
// 1/s for a decision after a campaign in test/unit/controller.test.js, 32/s with the factor 2.
// On the tuning seeds' 597 worlds the factor changed no median by more than 0.001.

/** The end plan's reserve, as a multiple of the floor's (at most X̃): slack for the floor after the last burst. */
const END_RESERVE_FACTOR = 2;

/**
 * @param {{ kernel: Float64Array, cumulative: Float64Array, binMs: number, softness: number, reserveShare?: number }} model
 *   reserveShare: ρ/X̃, the room kept after the last remaining device for other sends (and the rate's floor)
 */
export function createRatePlanner({ kernel, cumulative, binMs, softness, reserveShare = 0 }) {
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
    const reserve = reserveShare * target;
    const pulse = Math.min(1, intervalMs / binMs);
    /** @type {Plan} */
    const p = {
      target,
      pulse,
      theta: softness * sumSquares * pulse * pulse * target,
      maxRate,
      // U(j) - X̃: the committed load's excess before r and the continuation.
      excess: Float64Array.from(kernel, (_, j) => committed(Math.floor(nowMs / binMs) + j) - target)
    };
    /** Continuation bins left after sending at r for this interval. @param {number} r */
    const continuationBins = (r) => Math.max(0, remaining - r * (intervalMs / 1000)) / (target * (binMs / 1000));
    const rate = continuationBins(maxRate) < kernel.length
      ? continuationToEnd(p, Math.min(target, END_RESERVE_FACTOR * reserve), continuationBins, remaining / (intervalMs / 1000))
      : steadyContinuation(p, target);
    // The floor: min(ρ, the plan "r now, ρ for ever"), needed only when the rate is under ρ.
    return rate >= reserve ? rate : Math.max(rate, Math.min(reserve, steadyContinuation(p, reserve)));
  }

  /**
   * The short campaign's rate: the highest s such that sending the `remaining` devices evenly
   * at s, within `maxMs`, keeps the committed load plus theirs, s·(K(j − φ) − K(j − φ − M))
   * when they start φ of the way into the current bin and last M = remaining/(s·Δ) bins, at
   * or under X* less the reserve ρ in every bin (a hard bound: this is one peak at the
   * capacity at the SLO, not the setpoint's long run, so no softness; ρ stays free for the
   * sends that are not the campaign's, as in plan). 0: it does not fit
   * within maxMs. A narrower box of the same area peaks higher, so the bound is monotone in s
   * (up to the committed load's shape) and bisection finds it.
   * @param {{ nowMs: number, maxUnitLoad: number, committed: (bin: number) => number, remaining: number, maxMs: number, maxRate: number }} input
   * @returns {number} sends per second
   */
  function shortCampaignRate({ nowMs, maxUnitLoad, committed, remaining, maxMs, maxRate }) {
    if (!(maxUnitLoad > 0) || !(remaining < Infinity) || !(maxMs > 0)) return 0;
    const room = (1 - reserveShare) * maxUnitLoad;
    const binSeconds = binMs / 1000;
    const first = Math.floor(nowMs / binMs);
    // The sends start φ of the way into the current bin.
    const phase = nowMs / binMs - first;
    const maxBins = maxMs / binMs;
    const span = kernel.length + Math.ceil(phase + maxBins) + 1;
    const load = Float64Array.from({ length: span }, (_, j) => committed(first + j));
    /** @param {number} s */
    const fits = (s) => {
      const m = remaining / (s * binSeconds);
      for (let j = 0; j < span; j++) {
        if (load[j] + s * (cumulativeAt(j - phase) - cumulativeAt(j - phase - m)) > room) return false;
      }
      return true;
    };
    let lo = remaining / (maxBins * binSeconds);
    if (lo > maxRate || !fits(lo)) return 0;
    let hi = maxRate;
    if (fits(hi)) return hi;
    for (let i = 0; i < 40 && hi - lo > 1e-6 * hi; i++) {
      const mid = (lo + hi) / 2;
      if (fits(mid)) lo = mid; else hi = mid;
    }
    return lo;
  }

  /**
   * The best r when the continuation is a steady rate c for ever: e_j(r) = U(j) + r·p_j +
   * c·K(j-1) - X̃ is increasing in r, J is concave, and its maximum solves
   * Σ_j p_j·max(0, e_j(r)) = θ·X̃ (bisection).
   * @param {Plan} p
   * @param {number} c  the continuation's rate, in unit load
   */
  function steadyContinuation({ excess, pulse, theta, maxRate, target }, c) {
    const base = withContinuation(excess, c);
    /** Σ p_j·max(0, e_j(r)) - θ·X̃: increasing in r. @param {number} r */
    const marginal = (r) => {
      let sum = 0;
      for (let j = 0; j < kernel.length; j++) {
        const pj = pulse * kernel[j];
        const e = base[j] + r * pj;
        if (e > 0) sum += pj * e;
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
    for (let i = 0; i < 60 && hi - lo > 1e-9 * hi; i++) {
      const mid = (lo + hi) / 2;
      if (marginal(mid) < 0) lo = mid; else hi = mid;
    }
    return lo;
  }

  /**
   * The best r when the continuation sends what is left at X̃ and then goes on at the reserve.
   * J is not concave here, so: candidates on a linear and a geometric grid over [0, maxRate],
   * plus the rates where its shape changes (the steady plan's answer; sending all that is
   * left now; beyond that J is concave again and its best is the plan with the reserve alone),
   * then golden-section search between the best candidate's neighbours.
   * @param {Plan} p
   * @param {number} reserve          ρ, unit load
   * @param {(r: number) => number} continuationBins
   * @param {number} allNow            the rate that sends everything left in this interval
   */
  function continuationToEnd(p, reserve, continuationBins, allNow) {
    const { excess, pulse, theta, maxRate, target } = p;
    const withTarget = withContinuation(excess, target);
    /** J(r)·2θX̃ (θX̃ is `theta` here). @param {number} r */
    const objective = (r) => {
      const m = continuationBins(r);
      let penalty = 0;
      for (let j = 0; j < kernel.length; j++) {
        const e = withTarget[j] + r * pulse * kernel[j] - (j === 0 ? 0 : (target - reserve) * cumulativeAt(j - 1 - m));
        if (e > 0) penalty += e * e;
      }
      return 2 * theta * r - penalty;
    };
    const candidates = [0, maxRate, steadyContinuation(p, target), Math.min(allNow, maxRate), steadyContinuation(p, reserve)];
    for (let i = 1; i < 16; i++) candidates.push((maxRate * i) / 16);
    const low = Math.min(maxRate, Math.max(1e-3, target / 16));
    for (let i = 0; i < 32; i++) candidates.push(low * Math.pow(maxRate / low, i / 31));
    candidates.sort((a, b) => a - b);
    let best = 0;
    let bestValue = -Infinity;
    for (let i = 0; i < candidates.length; i++) {
      const value = objective(candidates[i]);
      if (value > bestValue) { best = i; bestValue = value; }
    }
    let lo = candidates[Math.max(0, best - 1)];
    let hi = candidates[Math.min(candidates.length - 1, best + 1)];
    const ratio = (Math.sqrt(5) - 1) / 2;
    let a = hi - ratio * (hi - lo);
    let b = lo + ratio * (hi - lo);
    let fa = objective(a);
    let fb = objective(b);
    for (let i = 0; i < 50 && hi - lo > 1e-6 * maxRate; i++) {
      if (fa >= fb) { hi = b; b = a; fb = fa; a = hi - ratio * (hi - lo); fa = objective(a); }
      else { lo = a; a = b; fa = fb; b = lo + ratio * (hi - lo); fb = objective(b); }
    }
    const refined = fa >= fb ? a : b;
    return Math.max(fa, fb) >= bestValue ? refined : candidates[best];
  }

  /** e_j before r: the excess plus a continuation at c for ever from the next bin, c·K(j-1). @param {Float64Array} excess @param {number} c */
  function withContinuation(excess, c) {
    return Float64Array.from(excess, (e, j) => e + c * (j === 0 ? 0 : cumulative[j - 1]));
  }

  /** K at a fractional lag x, linear within a bin: K(-1) = 0, K(0) = κ(0), …, 1 past the kernel. @param {number} x */
  function cumulativeAt(x) {
    if (x <= -1) return 0;
    if (x < 0) return (x + 1) * kernel[0];
    const i = Math.floor(x);
    if (i >= kernel.length - 1) return cumulative[kernel.length - 1];
    return cumulative[i] + (x - i) * kernel[i + 1];
  }

  return { plan, shortCampaignRate };
}

/**
 * @typedef {object} Plan  what every candidate plan of one update shares
 * @property {Float64Array} excess  U(j) - X̃ for the kernel's bins from now
 * @property {number} target        X̃
 * @property {number} pulse         T/Δ, at most 1
 * @property {number} theta         θ·X̃
 * @property {number} maxRate
 */
