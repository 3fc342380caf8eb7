// Online estimation of the two numbers the feedforward needs: the gateway's baseline (its
// traffic without this campaign) and the campaign's requests per send a = open probability
// × requests per open. The gateway only reports its total request rate y, so both come from
// one measurement model:
//
//   y_k = B_k + a_k · u_k + v_k
//
// where u_k is the unit load the send history predicts for the metrics window k (the
// load ledger), v_k the measurement noise (Poisson counting plus extra dispersion). B and a
// are a random walk (B drifts with time of day; a barely moves within a campaign), so a
// two-state Kalman filter estimates them, starting from the configured prior on a. Before
// the first send u = 0 and the filter learns B alone; when the first wake-ups arrive, u
// rises and a becomes identifiable. In steady sending u is nearly constant and B and a are
// confounded, which the filter shows as a strongly negative B–a covariance; it does no harm,
// because then the prediction B + a·u of the current load is still sharp, and the
// controller bounds the load it plans with the variance of exactly that prediction.

/**
 * @param {object} options
 * @param {number} options.requestsPerSend   prior mean of a
 * @param {number} options.requestsPerSendSd prior standard deviation of a
 * @param {number} options.baselineDrift     random walk of B, as a share of B per √minute
 * @param {number} options.gainDrift         random walk of a, as a share of a per √minute
 * @param {number} options.rpsNoise          extra dispersion of measured rps, as a share of rps
 * @param {number} options.windowSeconds     metrics window: Poisson noise of a rate over it is √(y/T)
 * @param {number} [options.maxLoad]         the most load the gateway can carry: the baseline is kept below it
 * @param {number} [options.maxGain]         the most requests per send that is plausible: the estimate is kept below it
 */
export function createParameterEstimator({ requestsPerSend, requestsPerSendSd, baselineDrift, gainDrift, rpsNoise, windowSeconds, maxLoad = Infinity, maxGain = Infinity }) {
  let baseline = 0;
  let gain = requestsPerSend;
  // Covariance [[pBB, pBa], [pBa, paa]].
  let pBB = 0;
  let pBa = 0;
  let paa = requestsPerSendSd ** 2;
  let initialised = false;
  const minGain = requestsPerSend * 1e-3;

  /** Measurement variance of one window's rps. @param {number} rps */
  const measurementVariance = (rps) => rps / windowSeconds + (rpsNoise * rps) ** 2 + 1;

  /** The covariance after the random walk over dtMs. @param {number} dtMs */
  function drifted(dtMs) {
    const minutes = Math.max(0, dtMs) / 60_000;
    return {
      pBB: pBB + (baselineDrift * Math.max(baseline, 1)) ** 2 * minutes,
      pBa,
      paa: paa + (gainDrift * gain) ** 2 * minutes
    };
  }

  /**
   * What the filter expects of a window, before seeing it: the innovation (observed minus
   * predicted rps) and its variance. The model bank scores its members with these.
   * @param {WindowObservation} observation
   */
  function predict({ rps, unitLoad: u, dtMs, variance, extraVariance = 0 }) {
    const p = drifted(dtMs);
    return {
      innovation: rps - (baseline + gain * u),
      variance: p.pBB + 2 * u * p.pBa + u * u * p.paa + (variance ?? measurementVariance(rps)) + extraVariance
    };
  }

  /**
   * One metrics window: observed total rps and the unit load predicted for the same window.
   * A censored window (the gateway saturated, so its counter shows throughput, or its latency
   * is a queue's) says only that the load was at least `rps`: it corrects the estimates when
   * they predict less, and is no evidence when they predict more (a Tobit-style update).
   * Leaving such windows out, as this filter first did, meant it never learned from the
   * overloads it caused: a flash sale's baseline stayed at 238 requests/s against a true
   * 550, and the plan overloaded the gateway again as soon as it recovered.
   * @param {WindowObservation} observation
   */
  function update({ rps, unitLoad, dtMs, variance, extraVariance = 0, censored = false }) {
    const noise = (variance ?? measurementVariance(rps)) + extraVariance;
    if (!initialised) {
      baseline = Math.min(maxLoad, Math.max(0, rps - gain * unitLoad));
      pBB = noise + (0.2 * rps) ** 2;
      initialised = true;
      return;
    }
    // Predict: both drift as random walks over the time since the last window.
    ({ pBB, pBa, paa } = drifted(dtMs));
    if (censored && baseline + gain * unitLoad >= rps) return;

    // Correct, with the innovation clipped at 3 standard deviations so that one odd window
    // (a spike of non-push traffic) moves the estimates only a bounded step.
    const u = unitLoad;
    const s = pBB + 2 * u * pBa + u * u * paa + noise;
    const limit = 3 * Math.sqrt(s);
    const innovation = Math.max(-limit, Math.min(limit, rps - (baseline + gain * u)));
    const kB = (pBB + u * pBa) / s;
    const ka = (pBa + u * paa) / s;
    // Plausible bounds: no load below 0 or beyond the gateway's saturation, and requests per
    // send within a factor of the prior that no campaign leaves (see maxGain).
    baseline = Math.min(maxLoad, Math.max(0, baseline + kB * innovation));
    gain = Math.min(maxGain, Math.max(minGain, gain + ka * innovation));
    const nBB = pBB - kB * kB * s;
    const nBa = pBa - kB * ka * s;
    const naa = paa - ka * ka * s;
    // Keep the matrix a covariance despite rounding.
    pBB = Math.max(nBB, 1e-9);
    paa = Math.max(naa, 1e-12);
    pBa = Math.max(-Math.sqrt(pBB * paa), Math.min(Math.sqrt(pBB * paa), nBa));
  }

  /** The estimate and its covariance, for the plan's load bound (loadBoundOf, maxUnitLoadOf). @returns {LoadEstimate} */
  function estimate() {
    return { baseline, gain, pBB, pBa, paa };
  }

  /**
   * A jump in the baseline was detected (a flash sale, another campaign's wake-ups): widen
   * its variance by the size of the jump seen, so the next windows re-estimate it instead of
   * creeping towards it at the random walk's pace, and so the jump is read as baseline,
   * not as requests per send.
   * @param {number} jumpRps
   */
  function bumpBaseline(jumpRps) {
    pBB += jumpRps * jumpRps;
    pBa = 0;
  }

  /**
   * Forgets what was learned about requests per send (a new campaign may engage users
   * differently); the baseline stays. The next campaign starts from `prior`: the configured
   * one, or what earlier campaigns taught (wake-up-memory.js).
   * @param {{ requestsPerSend: number, requestsPerSendSd: number }} [prior]
   */
  function resetGain(prior = { requestsPerSend, requestsPerSendSd }) {
    gain = Math.min(maxGain, Math.max(minGain, prior.requestsPerSend));
    paa = prior.requestsPerSendSd ** 2;
    pBa = 0;
  }

  return {
    predict,
    update,
    bumpBaseline,
    resetGain,
    estimate,
    get initialised() { return initialised; },
    /** Current estimates and standard deviations. */
    snapshot() {
      return { baseline, requestsPerSend: gain, baselineSd: Math.sqrt(pBB), requestsPerSendSd: Math.sqrt(paa), correlation: pBa / Math.sqrt(pBB * paa) };
    }
  };
}

/**
 * @typedef {object} LoadEstimate  baseline B, requests per send a, and their covariance
 * @property {number} baseline
 * @property {number} gain
 * @property {number} pBB
 * @property {number} pBa
 * @property {number} paa
 */

/**
 * Upper confidence bound of the total load B + a·x if the push-induced unit load is x.
 * @param {LoadEstimate} e
 * @param {number} x
 * @param {number} z  standard deviations
 */
export function loadBoundOf({ baseline, gain, pBB, pBa, paa }, x, z) {
  return baseline + gain * x + z * Math.sqrt(Math.max(0, pBB + 2 * x * pBa + x * x * paa));
}

/**
 * The largest unit load x ≥ 0 whose load bound stays within `capacity` (0 if even none
 * fits). The bound is convex in x, so the feasible set is an interval: find its lowest
 * point, then bisect for its upper end.
 * @param {LoadEstimate} e
 * @param {number} capacity
 * @param {number} z
 */
export function maxUnitLoadOf(e, capacity, z) {
  let hi = Math.max(0, (capacity - e.baseline) / e.gain);
  if (hi === 0) return 0;
  // Ternary search for the minimum of the convex bound on [0, hi].
  let a = 0;
  let b = hi;
  for (let i = 0; i < 60; i++) {
    const m1 = a + (b - a) / 3;
    const m2 = b - (b - a) / 3;
    if (loadBoundOf(e, m1, z) <= loadBoundOf(e, m2, z)) b = m2; else a = m1;
  }
  let lo = (a + b) / 2;
  if (loadBoundOf(e, lo, z) > capacity) return 0;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (loadBoundOf(e, mid, z) <= capacity) lo = mid; else hi = mid;
  }
  return lo;
}

/**
 * @typedef {object} WindowObservation
 * @property {number} rps        total requests/s over the window (measured, or read off the latency curve)
 * @property {number} unitLoad   the unit load the send history predicts for the window
 * @property {number} dtMs       time since the previous window
 * @property {number} [variance] the measurement's variance; default: Poisson counting plus `rpsNoise`
 * @property {boolean} [censored] the load was at least `rps` (a saturated gateway)
 * @property {number} [extraVariance] load noise beyond the measurement's, added to its variance (the bank's measured excess)
 */

/** @typedef {ReturnType<typeof createParameterEstimator>} ParameterEstimator */
