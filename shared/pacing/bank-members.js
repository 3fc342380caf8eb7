// The two kinds of member in the model bank (model-bank.js), behind one interface:
//
// - a shape member: a log-normal open delay of fixed median and spread, its load ledger and
//   its two-state filter of baseline and requests per send (parameter-estimator.js);
// - the learned member: the impulse response learned lag by lag (impulse-response.js),
//   whose shape follows the data, two humps and heavy tails included.
//
// Both turn the send history into the unit load it commits to each future bin, score a
// metrics window before seeing it, learn from it, and give the plan their baseline,
// requests per send and covariance (a LoadEstimate) and their kernel.
import { binKernel, cumulativeKernel, requestTimeMassPerSecond } from './wake-up-model.js';
import { createLoadLedger } from './load-ledger.js';
import { createParameterEstimator } from './parameter-estimator.js';
import { createImpulseResponseEstimator } from './impulse-response.js';
import { createRatePlanner } from './rate-planner.js';

/** @typedef {import('./controller-options.js').ControllerOptions} ControllerOptions */
/** @typedef {import('./parameter-estimator.js').LoadEstimate} LoadEstimate */
/**
 * @typedef {object} MetricsWindow
 * @property {number} rps
 * @property {number} windowStartMs
 * @property {number} windowEndMs
 * @property {number} dtMs
 * @property {number} [variance]
 * @property {boolean} [censored]
 * @property {number} [extraVariance]  load noise beyond the measurement's (the bank's measured excess)
 */

/** The prior's requests per send and its standard deviation. @param {Pick<ControllerOptions, 'openProbability' | 'requestsPerOpen' | 'priorUncertainty' | 'confidence'>} o */
export function priorGain(o) {
  const requestsPerSend = o.openProbability * o.requestsPerOpen;
  // priorUncertainty is where the upper confidence bound starts: prior + z·sd = prior × factor.
  return { requestsPerSend, requestsPerSendSd: (requestsPerSend * (o.priorUncertainty - 1)) / Math.max(o.confidence, 1) };
}

/**
 * Bins before the current one that a metrics window may cover.
 * @param {Readonly<ControllerOptions>} o
 */
export const pastBinsOf = (o) => Math.ceil((o.metricsLagMs + o.metricsWindowMs + o.timingErrorMs) / o.binMs) + 2;

/**
 * The request mass per second after a send for the configured delay with its median ×
 * medianFactor and σ × sigmaFactor (a member's shape; the forecast's world has one too).
 * @param {Readonly<ControllerOptions>} o
 * @param {number} medianFactor
 * @param {number} sigmaFactor
 */
export function shapeMassPerSecond(o, medianFactor, sigmaFactor) {
  return requestTimeMassPerSecond({
    openDelay: [{ share: 1, medianMs: o.openDelayMedianMs * medianFactor, sigma: o.openDelaySigma * sigmaFactor }],
    session: { kind: 'uniform', lengthMs: o.sessionMs }
  }, { tailMass: o.kernelTailMass });
}

/**
 * A log-normal member: the configured delay with its median × medianFactor, σ × sigmaFactor.
 * @param {Readonly<ControllerOptions>} o
 * @param {number} medianFactor
 * @param {number} sigmaFactor
 */
export function createShapeMember(o, medianFactor, sigmaFactor) {
  const massPerSecond = shapeMassPerSecond(o, medianFactor, sigmaFactor);
  const kernel = binKernel(massPerSecond, o.binMs / 1000);
  const ledger = createLoadLedger({ kernel, binMs: o.binMs, pastBins: pastBinsOf(o) });
  const params = createParameterEstimator({
    ...priorGain(o),
    baselineDrift: o.baselineDrift,
    gainDrift: o.gainDrift,
    rpsNoise: o.rpsNoise,
    windowSeconds: o.metricsWindowMs / 1000,
    ...plausibleBounds(o)
  });
  const planner = createRatePlanner({ kernel, cumulative: cumulativeKernel(kernel), binMs: o.binMs, softness: o.planSoftness, reserveShare: o.reserveShare });
  /** @param {MetricsWindow} w */
  const unitLoadOf = (w) => ledger.meanOver(w.windowStartMs, w.windowEndMs);
  const shapeErrors = shapeErrorLedgers(o, medianFactor, sigmaFactor);
  /**
   * The variance a window's prediction owes to an error in this member's shape: the gain times
   * the change in the window's unit load that the shape's median or σ off by shapeErrorFactor,
   * or its wake-ups timingErrorMs earlier or later, would make, squared (the gain's expected
   * square, since it is uncertain too).
   * @param {MetricsWindow} w
   */
  function shapeErrorVariance(w) {
    const shift = o.timingErrorMs;
    if (shapeErrors.length === 0 && shift === 0) return 0;
    const { gain, paa } = params.estimate();
    let change = 0;
    for (const l of shapeErrors) change += l.meanOver(w.windowStartMs, w.windowEndMs) ** 2;
    if (shift > 0) change += ((ledger.meanOver(w.windowStartMs + shift, w.windowEndMs + shift) - ledger.meanOver(w.windowStartMs - shift, w.windowEndMs - shift)) / 2) ** 2;
    return (gain * gain + paa) * change;
  }
  return {
    label: `median×${medianFactor.toFixed(2)} σ×${sigmaFactor.toFixed(2)}`,
    medianFactor,
    sigmaFactor,
    massPerSecond,
    kernel,
    committed: ledger.at,
    /** @param {number} nowMs @param {number} fromMs @param {number} toMs @param {number} count */
    record(nowMs, fromMs, toMs, count) {
      for (const l of [ledger, ...shapeErrors]) {
        l.advanceTo(Math.floor(nowMs / o.binMs));
        l.addSends(fromMs, toMs, count);
      }
    },
    /** @param {MetricsWindow} w */
    predict: (w) => params.predict({ ...w, unitLoad: unitLoadOf(w) }),
    /** The shape's own error counts as noise in what the window teaches, not in how the member is scored. @param {MetricsWindow} w */
    update: (w) => params.update({ ...w, unitLoad: unitLoadOf(w), extraVariance: (w.extraVariance ?? 0) + shapeErrorVariance(w) }),
    estimate: params.estimate,
    bumpBaseline: params.bumpBaseline,
    resetGain: params.resetGain,
    /** @param {Omit<Parameters<typeof planner.plan>[0], 'committed'>} input */
    plan: (input) => planner.plan({ ...input, committed: ledger.at }),
    /** @param {Omit<Parameters<typeof planner.shortCampaignRate>[0], 'committed'>} input */
    shortCampaignRate: (input) => planner.shortCampaignRate({ ...input, committed: ledger.at }),
    get initialised() { return params.initialised; },
    snapshot: params.snapshot
  };
}

/**
 * Ledgers of how a member's unit load changes when its median, or its σ, is off by
 * shapeErrorFactor either way: the send history convolved with half the difference of the
 * kernels at × and ÷ the factor (none when the factor is 1). Each kernel's mass is 1 whatever
 * the shape, so in steady sending the changes cancel; they are large while the load ramps up
 * and the window sees only the kernel's left tail.
 * @param {Readonly<ControllerOptions>} o
 * @param {number} medianFactor
 * @param {number} sigmaFactor
 */
function shapeErrorLedgers(o, medianFactor, sigmaFactor) {
  const f = o.shapeErrorFactor;
  if (!(f > 1)) return [];
  const kernelOf = (/** @type {number} */ m, /** @type {number} */ s) => binKernel(shapeMassPerSecond(o, m, s), o.binMs / 1000);
  return [[f, 1], [1, f]].map(([fm, fs]) => {
    const up = kernelOf(medianFactor * fm, sigmaFactor * fs);
    const down = kernelOf(medianFactor / fm, sigmaFactor / fs);
    const change = new Float64Array(Math.max(up.length, down.length));
    for (let j = 0; j < change.length; j++) change[j] = ((up[j] ?? 0) - (down[j] ?? 0)) / 2;
    return createLoadLedger({ kernel: change, binMs: o.binMs, pastBins: pastBinsOf(o) });
  });
}

/**
 * The learned member: starts from the nominal shape's response and learns every lag.
 * @param {Readonly<ControllerOptions>} o
 * @param {Float64Array} nominalKernel  the configured delay's kernel (the prior's shape)
 */
export function createLearnedMember(o, nominalKernel) {
  const { requestsPerSend, requestsPerSendSd } = priorGain(o);
  const bins = Math.max(nominalKernel.length, Math.min(Math.ceil(o.responseHorizonMs / o.binMs), o.responseMaxBins));
  const prior = new Float64Array(bins);
  for (let j = 0; j < Math.min(bins, nominalKernel.length); j++) prior[j] = requestsPerSend * nominalKernel[j];
  const estimator = createImpulseResponseEstimator({
    prior,
    priorSd: requestsPerSendSd,
    binMs: o.binMs,
    pastBins: pastBinsOf(o),
    baselineDrift: o.baselineDrift,
    gainDrift: o.gainDrift,
    rpsNoise: o.rpsNoise,
    windowSeconds: o.metricsWindowMs / 1000,
    floorShare: o.responseFloorShare,
    maxLoad: plausibleBounds(o).maxLoad
  });
  const binSeconds = o.binMs / 1000;
  let shape = estimator.shape();
  let planner = plannerFor(shape.kernel);
  let shapeChanged = false;

  /** @param {Float64Array} kernel */
  function plannerFor(kernel) {
    return createRatePlanner({ kernel, cumulative: cumulativeKernel(kernel), binMs: o.binMs, softness: o.planSoftness, reserveShare: o.reserveShare });
  }

  /** The planner for the learned shape as it is now (rebuilt only when an update changed it). */
  function currentPlanner() {
    if (shapeChanged) {
      planner = plannerFor(shape.kernel);
      shapeChanged = false;
    }
    return planner;
  }

  /** Unit load the sends so far commit to `bin`, with the learned shape. @param {number} bin */
  function committed(bin) {
    let sum = 0;
    const kernel = shape.kernel;
    for (let j = 0; j < kernel.length; j++) {
      const sends = estimator.sendsIn(bin - j);
      if (sends > 0) sum += sends * kernel[j];
    }
    return sum / binSeconds;
  }

  /** @returns {LoadEstimate} */
  function estimate() {
    const { pBB, pBa, paa } = estimator.aggregateCovariance();
    return { baseline: estimator.baseline, gain: Math.min(Math.max(shape.gain, requestsPerSend * 1e-3), plausibleBounds(o).maxGain), pBB, pBa, paa };
  }

  return {
    label: 'learned',
    medianFactor: NaN,
    sigmaFactor: NaN,
    get kernel() { return shape.kernel; },
    committed,
    /** @param {number} nowMs @param {number} fromMs @param {number} toMs @param {number} count */
    record(nowMs, fromMs, toMs, count) {
      estimator.advanceTo(Math.floor(nowMs / o.binMs));
      estimator.addSends(fromMs, toMs, count);
    },
    /** @param {MetricsWindow} w */
    predict: (w) => estimator.predict(w),
    /** @param {MetricsWindow} w */
    update(w) {
      estimator.update(w);
      shape = estimator.shape();
      shapeChanged = true;
    },
    estimate,
    bumpBaseline: estimator.bumpBaseline,
    /** The learned response starts from its own prior shape, whatever gain prior is given. */
    resetGain() {
      estimator.resetGain();
      shape = estimator.shape();
      shapeChanged = true;
    },
    /** @param {Omit<Parameters<typeof planner.plan>[0], 'committed'>} input */
    plan: (input) => currentPlanner().plan({ ...input, committed }),
    /** @param {Omit<Parameters<typeof planner.shortCampaignRate>[0], 'committed'>} input */
    shortCampaignRate: (input) => currentPlanner().shortCampaignRate({ ...input, committed }),
    get initialised() { return estimator.initialised; },
    snapshot() {
      const e = estimate();
      return { baseline: e.baseline, requestsPerSend: e.gain, baselineSd: Math.sqrt(e.pBB), requestsPerSendSd: Math.sqrt(e.paa), correlation: e.pBa / Math.sqrt(e.pBB * e.paa) };
    }
  };
}

/**
 * Plausible bounds on every member's estimates: every user opening the app and making 20×
 * the requests the operator expects per open; a baseline of 10× the prior capacity.
 * @param {Readonly<ControllerOptions>} o
 */
function plausibleBounds(o) {
  return { maxGain: 20 * o.requestsPerOpen, maxLoad: 10 * o.capacityRps };
}

/** @typedef {ReturnType<typeof createShapeMember> | ReturnType<typeof createLearnedMember>} BankMember */
