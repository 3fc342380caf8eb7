// Robustness against a sudden loss of gateway capacity (a noisy neighbour on a shared dyno):
// the largest send rate for which, if the gateway lost a share of its capacity right now,
// the load already committed by past sends plus the sends made before the loss shows in the
// metrics would not queue requests past a limit.
//
// The load a send causes arrives minutes later and cannot be recalled. After a sudden loss
// the controller sees it one metrics window plus the metrics lag later, stops sending, and
// the gateway must still serve everything already committed. With saturation throughput μ'
// after the loss, baseline B, requests per send a (its upper bound), committed unit load
// U_j in bin j ahead and P_j the unit load of sending at r for the D bins until detection,
// the queue evolves as
//
//   Q_{j+1} = max(0, Q_j + (B + a·(U_j + r·P_j) - μ')·Δ)
//
// (Lindley's recursion on bin totals). The guard allows the largest r with max_j Q_j ≤
// Q_max, where Q_max is `lossQueueMs` of waiting at μ'. Q is nondecreasing in r, so the
// bound comes from bisection; when even r = 0 breaks it, the committed load alone is too
// much and the rate is 0 until it has drained.
//
// Off by default (controller option lossShare 0): with slow openers the committed load
// lingers for most of an hour and the guard halves the campaign's pace; docs/pacing.md has
// the measured price.

/**
 * @param {object} input
 * @param {Float64Array} input.kernel   share of a send's requests per lag bin
 * @param {number} input.binMs
 * @param {(bin: number) => number} input.committed  U per absolute bin
 * @param {number} input.currentBin
 * @param {number} input.baselineRps    B
 * @param {number} input.requestsPerSend  a (an upper bound)
 * @param {number} input.saturationRps  μ' after the loss
 * @param {number} input.queueLimit     Q_max, requests
 * @param {number} input.detectionBins  D: bins sent at r before the loss is seen
 * @param {number} input.maxRate
 * @returns {number} sends per second (Infinity when the guard does not bind below maxRate)
 */
export function lossGuardRate({ kernel, binMs, committed, currentBin, baselineRps, requestsPerSend, saturationRps, queueLimit, detectionBins, maxRate }) {
  const n = kernel.length + detectionBins;
  const dt = binMs / 1000;
  const base = new Float64Array(n);
  const pulse = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    base[j] = (baselineRps + requestsPerSend * committed(currentBin + j) - saturationRps) * dt;
    let p = 0;
    for (let i = 0; i < detectionBins && i <= j; i++) if (j - i < kernel.length) p += kernel[j - i];
    pulse[j] = requestsPerSend * p * dt;
  }
  /** @param {number} r */
  const peakQueue = (r) => {
    let q = 0;
    let peak = 0;
    for (let j = 0; j < n; j++) {
      q = Math.max(0, q + base[j] + r * pulse[j]);
      if (q > peak) peak = q;
    }
    return peak;
  };
  if (peakQueue(maxRate) <= queueLimit) return Infinity;
  if (peakQueue(0) > queueLimit) return 0;
  let lo = 0;
  let hi = maxRate;
  for (let i = 0; i < 40 && hi - lo > 1e-3 * Math.max(1, lo); i++) {
    const mid = (lo + hi) / 2;
    if (peakQueue(mid) <= queueLimit) lo = mid; else hi = mid;
  }
  return lo;
}
