// Online estimation of the two numbers the feedforward needs: the gateway's baseline (its
// traffic without this campaign) and the campaign's requests per send a = open probability
// × requests per open. The gateway only reports its total request rate y, so both come from
// one measurement model:
//
//   y_k = B_k + n_k + a_k · u_k + v_k
//
// where u_k is the unit load the send history predicts for the metrics window k (the
// load ledger), v_k the measurement noise (Poisson counting plus extra dispersion). B and a
// are a random walk (B drifts with time of day; a barely moves within a campaign). n is the
// baseline's wandering around B, correlated from one window to the next (an AR(1) process
// whose variance and correlation the model bank measures where the baseline is alone,
// baseline-wander.js; none where it measured none). A three-state Kalman filter estimates
// them, starting from the configured prior on a. Before the first send u = 0 and the filter
// learns B alone; when the first wake-ups arrive, u rises and a becomes identifiable. In
// steady sending u is nearly constant and B and a are confounded, which the filter shows as a
// strongly negative B–a covariance; it does no harm, because then the prediction B + a·u of
// the current load is still sharp, and the controller bounds the load it plans with the
// variance of exactly that prediction.
//
// Why the wandering has a state of its own: counted as white noise, a run of windows below
// the baseline reads as evidence on a. While the predicted push load is small next to the
// wandering (the first minutes of a campaign whose users open late) such a run drove a to
// its floor within three windows, and the plan sent thousands of devices per second before
// their wake-ups were due (docs/pacing.md, "The baseline's wandering").

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
  // The state: the baseline's slow level B, its fast wandering n (an AR(1) process) and a.
  let baseline = 0;
  let wander = 0;
  let gain = requestsPerSend;
  // Covariance of (B, n, a), row-major 3 × 3.
  let P = [0, 0, 0, 0, 0, 0, 0, 0, requestsPerSendSd ** 2];
  let initialised = false;
  const minGain = requestsPerSend * 1e-3;

  /** Measurement variance of one window's rps. @param {number} rps */
  const measurementVariance = (rps) => rps / windowSeconds + (rpsNoise * rps) ** 2 + 1;

  /**
   * The state and covariance after dtMs: B and a drift as random walks, n decays by
   * `wanderCorrelation` towards 0 and is renewed so that its variance tends to `wanderVariance`.
   * @param {number} dtMs @param {number} wanderVariance @param {number} wanderCorrelation
   */
  function drifted(dtMs, wanderVariance, wanderCorrelation) {
    const minutes = Math.max(0, dtMs) / 60_000;
    const f = [1, wanderCorrelation, 1];
    const p = P.map((v, k) => v * f[Math.floor(k / 3)] * f[k % 3]);
    p[0] += (baselineDrift * Math.max(baseline, 1)) ** 2 * minutes;
    p[4] += wanderVariance * (1 - wanderCorrelation * wanderCorrelation);
    p[8] += (gainDrift * gain) ** 2 * minutes;
    return { p, wander: wanderCorrelation * wander };
  }

  /**
   * What the filter expects of a window, before seeing it. The model bank scores its members
   * with the innovation (observed minus predicted rps) and its variance; it measures the load
   * noise the model does not explain from the residual against the slow part alone (B + a·u,
   * without the wandering) and its variance, and the wandering itself from the residual where
   * no wake-up is due (push 0) against the measurement's variance. The variances include
   * `extraVariance`.
   * @param {WindowObservation} observation
   * @returns {WindowPrediction}
   */
  function predict({ rps, unitLoad: u, dtMs, variance, extraVariance = 0, wanderVariance = 0, wanderCorrelation = 0 }) {
    const { p, wander: n } = drifted(dtMs, wanderVariance, wanderCorrelation);
    const r = (variance ?? measurementVariance(rps)) + extraVariance;
    const slow = p[0] + 2 * u * p[2] + u * u * p[8] + r;
    return {
      innovation: rps - (baseline + n + gain * u),
      variance: slow + p[4] + 2 * p[1] + 2 * u * p[5],
      residual: rps - (baseline + gain * u),
      residualVariance: slow,
      push: gain * u,
      measurementVariance: r
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
  function update({ rps, unitLoad, dtMs, variance, extraVariance = 0, wanderVariance = 0, wanderCorrelation = 0, censored = false }) {
    const noise = (variance ?? measurementVariance(rps)) + extraVariance;
    if (!initialised) {
      baseline = Math.min(maxLoad, Math.max(0, rps - gain * unitLoad));
      P[0] = noise + (0.2 * rps) ** 2;
      P[4] = wanderVariance;
      initialised = true;
      return;
    }
    // Predict: B and a drift, n decays, over the time since the last window.
    ({ p: P, wander } = drifted(dtMs, wanderVariance, wanderCorrelation));
    if (censored && baseline + wander + gain * unitLoad >= rps) return;

    // Correct, with the innovation clipped at 3 standard deviations so that one odd window
    // (a spike of non-push traffic) moves the estimates only a bounded step.
    const h = [1, 1, unitLoad];
    const ph = [0, 1, 2].map((i) => P[3 * i] * h[0] + P[3 * i + 1] * h[1] + P[3 * i + 2] * h[2]);
    const s = h[0] * ph[0] + h[1] * ph[1] + h[2] * ph[2] + noise;
    const limit = 3 * Math.sqrt(s);
    const innovation = Math.max(-limit, Math.min(limit, rps - (baseline + wander + gain * unitLoad)));
    const k = ph.map((v) => v / s);
    // Plausible bounds: no load below 0 or beyond the gateway's saturation, and requests per
    // send within a factor of the prior that no campaign leaves (see maxGain).
    baseline = Math.min(maxLoad, Math.max(0, baseline + k[0] * innovation));
    wander += k[1] * innovation;
    gain = Math.min(maxGain, Math.max(minGain, gain + k[2] * innovation));
    P = P.map((v, idx) => v - k[Math.floor(idx / 3)] * k[idx % 3] * s);
    // Keep the matrix a covariance despite rounding.
    P[0] = Math.max(P[0], 1e-9);
    P[4] = Math.max(P[4], 0);
    P[8] = Math.max(P[8], 1e-12);
    for (const [i, j] of [[0, 1], [0, 2], [1, 2]]) {
      const bound = Math.sqrt(P[4 * i] * P[4 * j]);
      P[3 * i + j] = P[3 * j + i] = Math.max(-bound, Math.min(bound, P[3 * i + j]));
    }
  }

  /**
   * The estimate and its covariance, for the plan's load bound (loadBoundOf, maxUnitLoadOf).
   * The baseline is the slow level and the wandering above it: a dip is not room to plan
   * for, it passes within the wandering's correlation time. The wandering's variance is not
   * added: the plan keeps room for the load noise already (model-bank.js, excessNoise).
   * @returns {LoadEstimate}
   */
  function estimate() {
    return { baseline: baseline + Math.max(0, wander), gain, pBB: P[0], pBa: P[2], paa: P[8] };
  }

  /**
   * A jump in the baseline was detected (a flash sale, another campaign's wake-ups): widen
   * its variance by the size of the jump seen, so the next windows re-estimate it instead of
   * creeping towards it at the random walk's pace, and so the jump is read as baseline,
   * not as requests per send.
   * @param {number} jumpRps
   */
  function bumpBaseline(jumpRps) {
    P[0] += jumpRps * jumpRps;
    P[1] = P[3] = 0;
    P[2] = P[6] = 0;
  }

  /**
   * Forgets what was learned about requests per send (a new campaign may engage users
   * differently); the baseline stays. The next campaign starts from `prior`: the configured
   * one, or what earlier campaigns taught (wake-up-memory.js).
   * @param {{ requestsPerSend: number, requestsPerSendSd: number }} [prior]
   */
  function resetGain(prior = { requestsPerSend, requestsPerSendSd }) {
    gain = Math.min(maxGain, Math.max(minGain, prior.requestsPerSend));
    P[8] = prior.requestsPerSendSd ** 2;
    P[2] = P[6] = P[5] = P[7] = 0;
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
      return { baseline, requestsPerSend: gain, baselineSd: Math.sqrt(P[0]), requestsPerSendSd: Math.sqrt(P[8]), correlation: P[2] / Math.sqrt(P[0] * P[8]) };
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
 * @property {number} [wanderVariance] the variance of the baseline's wandering n (rps²); 0: none
 * @property {number} [wanderCorrelation] its correlation from one window to the next, 0 to 1
 */

/**
 * @typedef {object} WindowPrediction  what a bank member expects of a window before seeing it
 *   (the learned member, impulse-response.js, gives the first two)
 * @property {number} innovation             observed minus predicted rps
 * @property {number} variance               the innovation's variance
 * @property {number} [residual]             observed rps minus the slow part B + a·u (without the wandering)
 * @property {number} [residualVariance]     its variance
 * @property {number} [measurementVariance]  the measurement's own variance (counting noise and extraVariance)
 * @property {number} [push]                 the wake-up load predicted, a·u
 */

/** @typedef {ReturnType<typeof createParameterEstimator>} ParameterEstimator */
