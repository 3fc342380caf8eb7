// A small bank of wake-up models that differ in the shape of the open-delay distribution,
// each with its own load ledger and its own baseline/requests-per-send filter (multiple-model
// adaptive estimation, Magill 1965). The configured prior is one member; the others have a
// faster and a slower median and a narrower and a wider spread.
//
// Why: early in a campaign only the first few percent of the wake-ups have arrived, and
// those sit in the left tail of the delay distribution, where a small error in its shape is
// a large relative error (10% off in σ doubles or halves the mass in the first minute). One
// model alone then mistakes a shape error for a gain error, and if it underestimates the
// gain it commits far too many sends before the bulk of their load shows up (in the
// simulator: 5% of windows over the SLO with a true σ of 0.9 against a prior of 1.0).
//
// Each member scores its one-window-ahead predictions (the Gaussian log-likelihood ℓ_i of
// its filter's innovations, slowly forgotten); its posterior weight is w_i ∝ e^(ℓ_i). The
// plan must keep the chance of overload under α = 1 - Φ(z) (z = `confidence`) for the
// mixture of members: Σ w_i·p_i ≤ α. Splitting α evenly over the k members (a union bound)
// asks each member to keep its own overload chance p_i under α/(k·w_i): it plans at
// z_i = Φ⁻¹(1 - α/(k·w_i)) standard deviations, and the lowest plan wins. While the data
// cannot tell the shapes apart (equal weights) every member plans at z; a member the data
// make unlikely counts with less and less caution, and below w_i = 2α/k (0.9% with five
// members and z = 2) not at all.
//
// Tried and rejected in the simulator (docs/pacing.md has the numbers): following only the
// most likely member; counting every member within a likelihood ratio of 20 of the best at
// full caution and dropping the rest at once, which on slow openers let a member fitted to
// the early left tail (σ 1.2 against a true 1.1, so a gain 20% too low) become the only one
// left after two minutes, send 175,000 devices in ten seconds and put 1.8% of the windows
// over the SLO; counting the members' disagreement as measurement noise (errors in
// variables), which made a wrong member win in a world with a narrower delay spread.

import { binKernel, cumulativeKernel, normalCdf, normalQuantile, requestTimeMassPerSecond } from './wake-up-model.js';
import { createLoadLedger } from './load-ledger.js';
import { createParameterEstimator } from './parameter-estimator.js';
import { createRatePlanner } from './rate-planner.js';
import { lossGuardRate } from './loss-guard.js';

/** @typedef {import('./controller-options.js').ControllerOptions} ControllerOptions */

/** The log-likelihoods forget with this time constant, so the bank can follow a change. */
const MEMORY_MS = 30 * 60_000;

/** @param {Readonly<ControllerOptions>} o */
export function createModelBank(o) {
  const f = 1 + o.shapeUncertainty;
  const shapes = o.shapeUncertainty > 0
    ? [[1, 1], [1 / f, 1], [f, 1], [1, 1 / f], [1, f]]
    : [[1, 1]];
  const requestsPerSend = o.openProbability * o.requestsPerOpen;
  const pastBins = Math.ceil((o.metricsLagMs + o.metricsWindowMs) / o.binMs) + 2;
  const models = shapes.map(([medianFactor, sigmaFactor]) => {
    const massPerSecond = requestTimeMassPerSecond({
      openDelay: [{ share: 1, medianMs: o.openDelayMedianMs * medianFactor, sigma: o.openDelaySigma * sigmaFactor }],
      session: { kind: 'uniform', lengthMs: o.sessionMs }
    }, { tailMass: o.kernelTailMass });
    const kernel = binKernel(massPerSecond, o.binMs / 1000);
    const cumulative = cumulativeKernel(kernel);
    return {
      medianFactor,
      sigmaFactor,
      massPerSecond,
      kernel,
      ledger: createLoadLedger({ kernel, binMs: o.binMs, pastBins }),
      params: createParameterEstimator({
        requestsPerSend,
        // priorUncertainty is where the upper confidence bound starts: prior + z·sd = prior × factor.
        requestsPerSendSd: (requestsPerSend * (o.priorUncertainty - 1)) / Math.max(o.confidence, 1),
        baselineDrift: o.baselineDrift,
        gainDrift: o.gainDrift,
        rpsNoise: o.rpsNoise,
        windowSeconds: o.metricsWindowMs / 1000,
        // Plausible bounds: every user opening the app and making 20× the requests the
        // operator expects per open; a baseline of 10× the prior capacity.
        maxGain: 20 * o.requestsPerOpen,
        maxLoad: 10 * o.capacityRps
      }),
      planner: createRatePlanner({ kernel, cumulative, binMs: o.binMs, softness: o.planSoftness, reserveShare: o.reserveShare }),
      logLikelihood: 0,
      /** Standard deviations this member plans at; null when it does not count. @type {number | null} */
      z: null,
      lastMaxUnitLoad: 0,
      lastPlan: 0
    };
  });

  /** The member with the configured prior shape. */
  const nominal = models[0];

  /** Sends made at a steady pace over [fromMs, toMs). @param {number} nowMs @param {number} fromMs @param {number} toMs @param {number} count */
  function record(nowMs, fromMs, toMs, count) {
    for (const m of models) {
      m.ledger.advanceTo(Math.floor(nowMs / o.binMs));
      m.ledger.addSends(fromMs, toMs, count);
    }
  }

  /** CUSUM of the likeliest member's standardised innovations, for baseline jumps. */
  const jump = { score: 0, sum: 0, count: 0 };
  /** Jumps detected so far, for logs. */
  let jumps = 0;

  /**
   * One metrics window: every member scores its prediction, then updates its filter.
   * `variance` and `censored` as in the parameter estimator's WindowObservation.
   * @param {{ rps: number, windowStartMs: number, windowEndMs: number, dtMs: number, variance?: number, censored?: boolean }} window
   */
  function observe({ rps, windowStartMs, windowEndMs, dtMs, variance, censored = false }) {
    const decay = Math.exp(-Math.max(0, dtMs) / MEMORY_MS);
    const top = best();
    /** @type {{ innovation: number, variance: number } | null} */
    let topPrediction = null;
    for (const m of models) {
      const unitLoad = m.ledger.meanOver(windowStartMs, windowEndMs);
      if (m.params.initialised) {
        const prediction = m.params.predict({ rps, unitLoad, dtMs, variance });
        const { innovation, variance: s } = prediction;
        if (m === top) topPrediction = prediction;
        // A censored window that the member predicted above says nothing about it.
        if (!censored || innovation > 0) m.logLikelihood = decay * m.logLikelihood - 0.5 * (Math.min(innovation * innovation / s, 50) + Math.log(s));
      }
      m.params.update({ rps, unitLoad, dtMs, variance, censored });
    }
    if (topPrediction) detectJump(topPrediction);
  }

  /**
   * A baseline that jumps (a flash sale, a TV spot) shows as innovations that stay positive
   * window after window, which the filter's random walk follows only at its slow pace: an
   * independent model's flash sale kept the baseline estimate at 238 requests/s for minutes
   * against a true 550. A one-sided CUSUM (Page 1954) of the standardised innovations,
   * with slack k = 0.5 and threshold h = 5 (about one false alarm in 900 windows of pure
   * noise; a jump of 3 standard deviations is caught in two windows), widens every member's
   * baseline variance by the mean innovation of the run, so the next windows re-estimate it.
   * Only upward: a baseline that falls leaves room, and the filter's drift follows it.
   * @param {{ innovation: number, variance: number }} prediction
   */
  function detectJump({ innovation, variance }) {
    const standardised = innovation / Math.sqrt(variance);
    jump.score = Math.max(0, jump.score + standardised - 0.5);
    if (jump.score === 0) {
      jump.sum = 0;
      jump.count = 0;
      return;
    }
    jump.sum += innovation;
    jump.count++;
    if (jump.score < 5) return;
    const size = jump.sum / jump.count;
    for (const m of models) m.params.bumpBaseline(size);
    jumps++;
    jump.score = 0;
    jump.sum = 0;
    jump.count = 0;
  }

  /** Back to the prior gain and shape: the next sends may belong to another campaign. */
  function resetGain() {
    for (const m of models) {
      m.params.resetGain();
      m.logLikelihood = 0;
    }
  }

  /** The chance of overload the plan accepts, for the mixture of members. */
  const alpha = 1 - normalCdf(o.confidence);
  /** Bins sent at the planned rate before a capacity loss shows in the metrics. */
  const detectionBins = Math.ceil((o.metricsWindowMs + o.metricsLagMs) / o.binMs);

  /** Each member's caution z_i from its posterior weight (null: it no longer counts). */
  function weigh() {
    const top = best();
    let sum = 0;
    for (const m of models) sum += Math.exp(m.logLikelihood - top.logLikelihood);
    for (const m of models) {
      const tail = alpha / (models.length * (Math.exp(m.logLikelihood - top.logLikelihood) / sum));
      // The likeliest member always counts, at its mean at least (with confidence 0).
      m.z = tail < 0.5 ? normalQuantile(1 - tail) : m === top ? 0 : null;
    }
  }

  /**
   * The lowest rate any member that still counts plans for capacity `capacityRps`, each at
   * its own caution; with `lossShare` set, also within what a sudden capacity loss allows.
   * @param {{ nowMs: number, capacityRps: number, intervalMs: number, remaining?: number }} input
   *   remaining: devices still to send, Infinity when unknown
   */
  function plan({ nowMs, capacityRps, intervalMs, remaining = Infinity }) {
    weigh();
    let rate = Infinity;
    for (const m of models) {
      if (m.z === null) continue;
      m.lastMaxUnitLoad = m.params.maxUnitLoad(capacityRps, m.z);
      m.lastPlan = m.planner.plan({ nowMs, maxUnitLoad: m.lastMaxUnitLoad, committed: m.ledger.at, intervalMs, maxRate: o.maxRate, remaining });
      if (o.lossShare > 0) {
        const { baseline, requestsPerSend: gain, requestsPerSendSd } = m.params.snapshot();
        const saturationRps = (1 - o.lossShare) * o.saturationRatio * capacityRps;
        m.lastPlan = Math.min(m.lastPlan, lossGuardRate({
          kernel: m.kernel,
          binMs: o.binMs,
          committed: m.ledger.at,
          currentBin: Math.floor(nowMs / o.binMs),
          baselineRps: baseline,
          requestsPerSend: gain + m.z * requestsPerSendSd,
          saturationRps,
          queueLimit: (saturationRps * o.lossQueueMs) / 1000,
          detectionBins,
          maxRate: o.maxRate
        }));
      }
      rate = Math.min(rate, m.lastPlan);
    }
    return rate;
  }

  /**
   * The highest load, in requests/s at the prior's upper bound of requests per send, that
   * sending `count` devices at once would cause, over the members' shapes.
   * @param {number} count
   */
  function coldStartLoad(count) {
    const upperGain = o.openProbability * o.requestsPerOpen * o.priorUncertainty;
    let peak = 0;
    for (const m of models) for (const k of m.kernel) peak = Math.max(peak, k);
    return (upperGain * count * peak) / (o.binMs / 1000);
  }

  /** The most likely member (the prior's shape until the data say otherwise). */
  function best() {
    let top = nominal;
    for (const m of models) if (m.logLikelihood > top.logLikelihood) top = m;
    return top;
  }

  return {
    record,
    observe,
    resetGain,
    plan,
    best,
    coldStartLoad,
    get initialised() { return nominal.params.initialised; },
    /** For logs and charts. */
    snapshot() {
      const top = best();
      return {
        ...top.params.snapshot(),
        medianFactor: top.medianFactor,
        sigmaFactor: top.sigmaFactor,
        plausibleModels: models.filter((m) => m.z !== null).length,
        baselineJumps: jumps,
        maxUnitLoad: top.lastMaxUnitLoad,
        uncertaintyRps: top.params.loadBound(top.lastMaxUnitLoad, o.confidence) - top.params.loadBound(top.lastMaxUnitLoad, 0),
        members: models.map((m) => ({
          medianFactor: m.medianFactor,
          sigmaFactor: m.sigmaFactor,
          requestsPerSend: m.params.snapshot().requestsPerSend,
          logLikelihood: m.logLikelihood - top.logLikelihood,
          z: m.z,
          plannedRate: m.lastPlan
        }))
      };
    }
  };
}

/** @typedef {ReturnType<typeof createModelBank>} ModelBank */
