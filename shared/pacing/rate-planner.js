// Dead-time compensation: choose the send rate from the load it will cause, not from the
// load it causes now.
//
// In unit-load terms (requests per second per unit of requests-per-send), the gateway can
// take at most X* more push-induced load (X* from the parameter estimator's upper bound and
// the capacity estimate). U(j) is the load already committed by past sends to bin j ahead
// (the load ledger), κ(j) the share of a send's requests arriving j bins after its own bin,
// K(j) = κ(0) + ... + κ(j). The plan is: send at r for the next interval, then at X* for
// ever after. The largest admissible r keeps every future bin within X*:
//
//   U(j) + r·(T/Δ)·κ(j) + X*·K(j-1) ≤ X*      for all j ≥ 0
//   r = min_j  (X*·(1 - K(j-1)) - U(j)) / ((T/Δ)·κ(j))
//
// with T the interval and Δ the bin. The continuation at X* is what sending at the
// steady-state maximum would add, so the plan never spends future room that steady sending
// will need; but while that room is still empty (at the start, or after a pause) r may
// exceed X*: the first sends' load arrives only minutes later, and the plan fills the gap.
// In steady state the constraint reduces to r = X*. Since the previous plan's continuation
// is always admissible again, r ≥ X* whenever the estimates hold still (recursive
// feasibility), so the controller does not starve after a burst; when the estimates drop,
// the committed load is over the new X* and r is 0 until it has drained, exactly as long as
// the model says.

/**
 * @param {{ kernel: Float64Array, cumulative: Float64Array, binMs: number }} model
 */
export function createRatePlanner({ kernel, cumulative, binMs }) {
  let peak = 0;
  for (const k of kernel) peak = Math.max(peak, k);
  // Bins where a send puts under 1% of its peak share are left out: their constraint is
  // loose for any sensible r, and the far tail of committed load (which r can barely touch)
  // must not stop sending.
  const relevant = [];
  for (let j = 0; j < kernel.length; j++) if (kernel[j] >= 0.01 * peak) relevant.push(j);

  /**
   * @param {object} input
   * @param {number} input.nowMs
   * @param {number} input.maxUnitLoad  X*
   * @param {(bin: number) => number} input.committed  U: unit load per absolute bin
   * @param {number} input.intervalMs   how long the returned rate will hold
   * @returns {number} sends per second (may be Infinity if nothing constrains it)
   */
  function plan({ nowMs, maxUnitLoad, committed, intervalMs }) {
    if (!(maxUnitLoad > 0)) return 0;
    const currentBin = Math.floor(nowMs / binMs);
    const pulse = Math.min(1, intervalMs / binMs);
    let rate = Infinity;
    for (const j of relevant) {
      const continuation = j === 0 ? 0 : cumulative[j - 1];
      const room = maxUnitLoad * (1 - continuation) - committed(currentBin + j);
      if (room <= 0) return 0;
      rate = Math.min(rate, room / (pulse * kernel[j]));
    }
    return rate;
  }

  return { plan };
}
