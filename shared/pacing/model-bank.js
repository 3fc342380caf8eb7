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
// Each member scores its one-window-ahead predictions (the Gaussian log-likelihood of its
// filter's innovations, slowly forgotten). Every member within a likelihood ratio of about
// 20 of the best plans a rate, and the lowest wins: while the data cannot yet tell a slow
// shape with a high gain from a fast shape with a low gain, the plan respects both.
//
// Tried and rejected in the simulator (docs/pacing.md has the numbers): following only the
// most likely member, or pruning at a likelihood ratio of 3 or 10, sent 100,000-250,000
// devices in ten seconds on the word of a confidently wrong member in some seeds and
// overloaded the gateway minutes later; counting the members' disagreement as measurement
// noise (errors in variables) made a wrong member win in a world with a narrower delay
// spread; keeping every member always is safe but 10-15% slower on slow openers.

import { binKernel, cumulativeKernel, requestTimeMassPerSecond } from './wake-up-model.js';
import { createLoadLedger } from './load-ledger.js';
import { createParameterEstimator } from './parameter-estimator.js';
import { createRatePlanner } from './rate-planner.js';

/** @typedef {import('./controller-options.js').ControllerOptions} ControllerOptions */

/** Members whose log-likelihood is at most this far below the best's (a likelihood ratio of e³ ≈ 20) still plan. */
const PLAUSIBILITY = 3;
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
      ledger: createLoadLedger({ kernel, binMs: o.binMs, pastBins }),
      params: createParameterEstimator({
        requestsPerSend,
        // priorUncertainty is where the upper confidence bound starts: prior + z·sd = prior × factor.
        requestsPerSendSd: (requestsPerSend * (o.priorUncertainty - 1)) / Math.max(o.confidence, 1),
        baselineDrift: o.baselineDrift,
        gainDrift: o.gainDrift,
        rpsNoise: o.rpsNoise,
        windowSeconds: o.metricsWindowMs / 1000
      }),
      planner: createRatePlanner({ kernel, cumulative, binMs: o.binMs, softness: o.planSoftness }),
      logLikelihood: 0,
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

  /**
   * One metrics window: every member scores its prediction, then updates its filter.
   * @param {{ rps: number, windowStartMs: number, windowEndMs: number, dtMs: number }} window
   */
  function observe({ rps, windowStartMs, windowEndMs, dtMs }) {
    const decay = Math.exp(-Math.max(0, dtMs) / MEMORY_MS);
    for (const m of models) {
      const unitLoad = m.ledger.meanOver(windowStartMs, windowEndMs);
      if (m.params.initialised) {
        const { innovation, variance } = m.params.predict({ rps, unitLoad, dtMs });
        m.logLikelihood = decay * m.logLikelihood - 0.5 * (Math.min(innovation * innovation / variance, 50) + Math.log(variance));
      }
      m.params.update({ rps, unitLoad, dtMs });
    }
  }

  /** Back to the prior gain and shape: the next sends may belong to another campaign. */
  function resetGain() {
    for (const m of models) {
      m.params.resetGain();
      m.logLikelihood = 0;
    }
  }

  /** Members still consistent with the data. */
  function plausible() {
    let best = -Infinity;
    for (const m of models) best = Math.max(best, m.logLikelihood);
    return models.filter((m) => m.logLikelihood >= best - PLAUSIBILITY);
  }

  /**
   * The lowest rate any plausible member plans for capacity `capacityRps`.
   * @param {{ nowMs: number, capacityRps: number, intervalMs: number }} input
   */
  function plan({ nowMs, capacityRps, intervalMs }) {
    let rate = Infinity;
    for (const m of plausible()) {
      m.lastMaxUnitLoad = m.params.maxUnitLoad(capacityRps, o.confidence);
      m.lastPlan = m.planner.plan({ nowMs, maxUnitLoad: m.lastMaxUnitLoad, committed: m.ledger.at, intervalMs, maxRate: o.maxRate });
      rate = Math.min(rate, m.lastPlan);
    }
    return rate;
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
    get initialised() { return nominal.params.initialised; },
    /** For logs and charts. */
    snapshot() {
      const top = best();
      return {
        ...top.params.snapshot(),
        medianFactor: top.medianFactor,
        sigmaFactor: top.sigmaFactor,
        plausibleModels: plausible().length,
        maxUnitLoad: top.lastMaxUnitLoad,
        uncertaintyRps: top.params.loadBound(top.lastMaxUnitLoad, o.confidence) - top.params.loadBound(top.lastMaxUnitLoad, 0),
        members: models.map((m) => ({
          medianFactor: m.medianFactor,
          sigmaFactor: m.sigmaFactor,
          requestsPerSend: m.params.snapshot().requestsPerSend,
          logLikelihood: m.logLikelihood - top.logLikelihood,
          plannedRate: m.lastPlan
        }))
      };
    }
  };
}

/** @typedef {ReturnType<typeof createModelBank>} ModelBank */
