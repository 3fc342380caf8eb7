// The wake-up response learned from data: an online, non-negative estimate of the load one
// send causes at each lag (its impulse response h over the horizon), regularised towards
// the prior.
//
// Why: the model bank's members are log-normal delays that differ only in median and
// spread, and a log-normal cannot hold two humps or a power-law tail. An independent model
// with bimodal openers (a fast wave within a minute, a slow one a quarter of an hour later)
// made the bank read the fast half as a high open rate (4.0 requests per send against a true
// 0.8), and the campaign took 2.45× the oracle's time. Here every lag bin has its own weight:
//
//   y_w = B + Σ_j h_j · φ_{w,j} + v_w,        φ_{w,j} = mean over the window's bins b of n_{b−j}/Δ
//
// with n_b the sends in bin b, Δ the bin length and h_j the requests per send that arrive j
// bins after it (Σ_j h_j is requests per send). The state θ = (B, h_0 … h_{n−1}) is a random
// walk estimated by a Kalman filter, which is recursive least squares with a prior. The
// prior is what makes 360 weights from one number per window possible at all (kernel-based
// regularisation of impulse responses, Pillonetto & De Nicolao 2010; Chen, Ohlsson & Ljung
// 2012): its mean is the configured wake-up model's response h⁰ = a₀·κ, and its covariance
//
//   P⁰_ij = c · s_i · s_j · ρ^|i−j|,        s_j = h⁰_j + ε · max h⁰
//
// makes neighbouring lags move together (ρ, smoothness), lets the weight of every lag grow
// where the prior puts little (ε: a second hump, a heavy tail), and is scaled by c so that
// the prior standard deviation of Σ h is the configured one (priorUncertainty), as for the
// log-normal members. Non-negative: a load cannot be negative, so after each update the
// weights are projected onto h ≥ 0.
//
// While sends are steady, φ_{w,j} is the same for every j and only Σ h is identifiable: the
// filter then learns the gain, and the prior keeps the shape. A campaign's start, its end
// and any change in rate excite the lags one after another, which is when the shape is
// learned. One update is O(n²): about a millisecond for a one-hour horizon at 10-s bins
// (bench/RESULTS.md, "impulse response").

/**
 * @param {object} options
 * @param {Float64Array} options.prior       h⁰: requests per send per lag bin (a₀·κ)
 * @param {number} options.priorSd           prior standard deviation of Σ h (requests per send)
 * @param {number} options.binMs             Δ
 * @param {number} options.pastBins          bins before the current one that a late metrics window may cover
 * @param {number} options.baselineDrift     random walk of B, as a share of B per √minute
 * @param {number} options.gainDrift         random walk of each h_j, as a share per √minute
 * @param {number} options.rpsNoise          extra dispersion of measured rps, as a share
 * @param {number} options.windowSeconds     the metrics window (Poisson noise of its rate)
 * @param {number} [options.smoothness]      ρ: correlation of neighbouring lags in the prior (default 0.9)
 * @param {number} [options.floorShare]      ε: prior spread of every lag, as a share of the prior's peak (default 0.02)
 * @param {number} [options.maxLoad]         the baseline is kept below this
 */
export function createImpulseResponseEstimator({
  prior, priorSd, binMs, pastBins, baselineDrift, gainDrift, rpsNoise, windowSeconds,
  smoothness = 0.9, floorShare = 0.02, maxLoad = Infinity
}) {
  const n = prior.length;
  const dim = n + 1;
  const binSeconds = binMs / 1000;
  // θ[0] = B, θ[1 + j] = h_j; P is dim × dim, row-major.
  const theta = new Float64Array(dim);
  const cov = new Float64Array(dim * dim);
  const priorCov = priorCovariance(prior, priorSd, smoothness, floorShare);
  const work = new Float64Array(dim);
  const phi = new Float64Array(dim);
  let initialised = false;
  let priorPeak = 0;
  for (const h of prior) priorPeak = Math.max(priorPeak, h);

  // Sends per absolute bin, for the regressors and the committed load: the horizon behind the
  // oldest bin a window may cover, and the current bin.
  const historySize = n + pastBins + 2;
  const history = new Float64Array(historySize);
  let firstBin = 0;
  let started = false;
  /** @param {number} bin */
  const slot = (bin) => ((bin % historySize) + historySize) % historySize;

  resetGain();

  /** Keeps the bins from currentBin − n − pastBins on; older ones are recycled. @param {number} currentBin */
  function advanceTo(currentBin) {
    const keepFrom = currentBin - n - pastBins;
    if (!started) {
      firstBin = keepFrom;
      started = true;
      return;
    }
    if (keepFrom <= firstBin) return;
    const drop = Math.min(keepFrom - firstBin, historySize);
    for (let i = 0; i < drop; i++) history[slot(firstBin + i)] = 0;
    firstBin = keepFrom;
  }

  /** Sends in one bin (0 outside what is held). @param {number} bin */
  function sendsIn(bin) {
    return bin < firstBin || bin >= firstBin + historySize ? 0 : history[slot(bin)];
  }

  /**
   * Records `count` sends made at a constant pace over [fromMs, toMs).
   * @param {number} fromMs @param {number} toMs @param {number} count
   */
  function addSends(fromMs, toMs, count) {
    if (!(count > 0)) return;
    const add = (/** @type {number} */ bin, /** @type {number} */ c) => {
      if (bin >= firstBin && bin < firstBin + historySize) history[slot(bin)] += c;
    };
    if (!(toMs > fromMs)) { add(Math.floor(fromMs / binMs), count); return; }
    for (let b = Math.floor(fromMs / binMs); b * binMs < toMs; b++) {
      const overlap = Math.min(toMs, (b + 1) * binMs) - Math.max(fromMs, b * binMs);
      if (overlap > 0) add(b, (count * overlap) / (toMs - fromMs));
    }
  }

  /**
   * φ for the window [fromMs, toMs) into `phi` (φ₀ = 1 for the baseline).
   * @param {number} fromMs @param {number} toMs
   */
  function regressor(fromMs, toMs) {
    if (!(toMs > fromMs)) throw new RangeError(`a metrics window must have a length, got [${fromMs}, ${toMs})`);
    phi.fill(0);
    phi[0] = 1;
    const span = toMs - fromMs;
    for (let b = Math.floor(fromMs / binMs); b * binMs < toMs; b++) {
      const weight = (Math.min(toMs, (b + 1) * binMs) - Math.max(fromMs, b * binMs)) / span;
      if (!(weight > 0)) continue;
      for (let j = 0; j < n; j++) {
        const sends = sendsIn(b - j);
        if (sends > 0) phi[1 + j] += (weight * sends) / binSeconds;
      }
    }
    return phi;
  }

  /** Measurement variance of one window's rps. @param {number} rps */
  const measurementVariance = (rps) => rps / windowSeconds + (rpsNoise * rps) ** 2 + 1;

  /** Adds the random walk over dtMs to the covariance. @param {number} dtMs */
  function drift(dtMs) {
    const minutes = Math.max(0, dtMs) / 60_000;
    cov[0] += (baselineDrift * Math.max(theta[0], 1)) ** 2 * minutes;
    for (let j = 1; j < dim; j++) cov[j * dim + j] += (gainDrift * Math.max(theta[j], 1e-3 * priorPeak)) ** 2 * minutes;
  }
  /** P·φ into `work`; returns φᵀPφ. */
  function covTimesPhi() {
    let quad = 0;
    for (let i = 0; i < dim; i++) {
      let sum = 0;
      const row = i * dim;
      for (let j = 0; j < dim; j++) {
        const f = phi[j];
        if (f !== 0) sum += cov[row + j] * f;
      }
      work[i] = sum;
      quad += phi[i] * sum;
    }
    return quad;
  }

  /** θᵀφ for the current `phi`. */
  function predicted() {
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += theta[i] * phi[i];
    return sum;
  }

  /**
   * What the filter expects of a window before seeing it (for the bank's scores).
   * @param {{ rps: number, windowStartMs: number, windowEndMs: number, dtMs: number, variance?: number }} window
   */
  function predict({ rps, windowStartMs, windowEndMs, dtMs, variance }) {
    regressor(windowStartMs, windowEndMs);
    const minutes = Math.max(0, dtMs) / 60_000;
    // The drift's share of the variance, without changing the covariance.
    let driftVariance = (baselineDrift * Math.max(theta[0], 1)) ** 2 * minutes;
    for (let j = 1; j < dim; j++) if (phi[j] !== 0) driftVariance += (phi[j] * gainDrift * Math.max(theta[j], 1e-3 * priorPeak)) ** 2 * minutes;
    return { innovation: rps - predicted(), variance: covTimesPhi() + driftVariance + (variance ?? measurementVariance(rps)) };
  }

  /**
   * One metrics window; a censored one (saturated gateway) only corrects a prediction below it.
   * @param {{ rps: number, windowStartMs: number, windowEndMs: number, dtMs: number, variance?: number, censored?: boolean }} window
   */
  function update({ rps, windowStartMs, windowEndMs, dtMs, variance, censored = false }) {
    const noise = variance ?? measurementVariance(rps);
    regressor(windowStartMs, windowEndMs);
    if (!initialised) {
      let push = 0;
      for (let j = 1; j < dim; j++) push += theta[j] * phi[j];
      theta[0] = Math.min(maxLoad, Math.max(0, rps - push));
      cov[0] = noise + (0.2 * rps) ** 2;
      initialised = true;
      return;
    }
    drift(dtMs);
    const guess = predicted();
    if (censored && guess >= rps) return;
    const s = covTimesPhi() + noise;
    // Clipped at 3 standard deviations, as in the two-state filter: one odd window moves the
    // estimates a bounded step.
    const limit = 3 * Math.sqrt(s);
    const innovation = Math.max(-limit, Math.min(limit, rps - guess));
    const step = innovation / s;
    for (let i = 0; i < dim; i++) theta[i] += work[i] * step;
    for (let i = 0; i < dim; i++) {
      const wi = work[i] / s;
      if (wi === 0) continue;
      const row = i * dim;
      for (let j = 0; j < dim; j++) cov[row + j] -= wi * work[j];
    }
    for (let i = 0; i < dim; i++) if (cov[i * dim + i] < 1e-12) cov[i * dim + i] = 1e-12;
    theta[0] = Math.min(maxLoad, Math.max(0, theta[0]));
    // Non-negative: a send cannot take load away.
    for (let j = 1; j < dim; j++) if (theta[j] < 0) theta[j] = 0;
  }

  /** A baseline jump was detected: widen its variance (see model-bank.js). @param {number} jumpRps */
  function bumpBaseline(jumpRps) {
    cov[0] += jumpRps * jumpRps;
    for (let j = 1; j < dim; j++) { cov[j] = 0; cov[j * dim] = 0; }
  }

  /** Back to the prior response (the next campaign may engage users differently); the baseline stays. */
  function resetGain() {
    for (let j = 0; j < n; j++) theta[1 + j] = prior[j];
    const pBB = cov[0];
    cov.fill(0);
    cov[0] = pBB;
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) cov[(1 + i) * dim + 1 + j] = priorCov[i * n + j];
  }

  /** Requests per send, Σ h. */
  function gain() {
    let sum = 0;
    for (let j = 1; j < dim; j++) sum += theta[j];
    return sum;
  }

  /** The response's shape κ = h/Σh (the prior's when Σh is 0) and its gain. */
  function shape() {
    const a = gain();
    const kernel = new Float64Array(n);
    if (a > 0) for (let j = 0; j < n; j++) kernel[j] = theta[1 + j] / a;
    else {
      let total = 0;
      for (const h of prior) total += h;
      for (let j = 0; j < n; j++) kernel[j] = prior[j] / total;
    }
    return { gain: a, kernel };
  }

  /**
   * Var(B), Cov(B, Σh), Var(Σh): what the two-parameter bound over the steady push load needs.
   */
  function aggregateCovariance() {
    let pBa = 0;
    let paa = 0;
    for (let j = 1; j < dim; j++) {
      pBa += cov[j];
      const row = j * dim;
      for (let k = 1; k < dim; k++) paa += cov[row + k];
    }
    return { pBB: cov[0], pBa, paa: Math.max(paa, 1e-12) };
  }

  return {
    advanceTo,
    addSends,
    sendsIn,
    predict,
    update,
    bumpBaseline,
    resetGain,
    shape,
    aggregateCovariance,
    get baseline() { return theta[0]; },
    get initialised() { return initialised; },
    /** h (a copy): requests per send per lag bin. */
    response() { return theta.slice(1); }
  };
}

/**
 * The prior covariance of h: c·s_i·s_j·ρ^|i−j|, scaled so that Var(Σh) = priorSd².
 * @param {Float64Array} prior @param {number} priorSd @param {number} smoothness @param {number} floorShare
 */
function priorCovariance(prior, priorSd, smoothness, floorShare) {
  const n = prior.length;
  let peak = 0;
  for (const h of prior) peak = Math.max(peak, h);
  const s = Float64Array.from(prior, (h) => h + floorShare * peak);
  const out = new Float64Array(n * n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = s[i] * s[j] * smoothness ** Math.abs(i - j);
      out[i * n + j] = v;
      total += v;
    }
  }
  const c = total > 0 ? (priorSd * priorSd) / total : 0;
  for (let i = 0; i < out.length; i++) out[i] *= c;
  return out;
}

/** @typedef {ReturnType<typeof createImpulseResponseEstimator>} ImpulseResponseEstimator */
