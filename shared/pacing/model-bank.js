// A small bank of wake-up models that differ in the shape of the open-delay distribution,
// each with its own load ledger and its own baseline/requests-per-send filter (multiple-model
// adaptive estimation, Magill 1965). The configured prior is one member; the others have a
// faster and a slower median and a narrower and a wider spread, and two have a median several
// times the prior's (users who open far later than configured).
//
// Why: early in a campaign only the first few percent of the wake-ups have arrived, and
// those sit in the left tail of the delay distribution, where a small error in its shape is
// a large relative error (10% off in σ doubles or halves the mass in the first minute). One
// model alone then mistakes a shape error for a gain error, and if it underestimates the
// gain it commits far too many sends before the bulk of their load shows up (in the
// simulator: 5% of windows over the SLO with a true σ of 0.9 against a prior of 1.0).
//
// Each member scores its one-window-ahead predictions (the Gaussian log-likelihood ℓ_i of
// its filter's innovations, slowly forgotten, each window's term × likelihoodWeight because
// consecutive windows' errors are correlated); its posterior weight is w_i ∝ e^(ℓ_i). The
// plan must keep the chance of overload under α = 1 - Φ(z) (z = `confidence`) for the
// mixture of members: Σ w_i·p_i ≤ α. Splitting α evenly over the k members (a union bound)
// asks each member to keep its own overload chance p_i under α/(k·w_i): it plans at
// z_i = Φ⁻¹(1 - α/(k·w_i)) standard deviations, and the lowest plan wins. While the data
// cannot tell the shapes apart (equal weights) every member plans at z; a member the data
// make unlikely counts with less and less caution, and below w_i = 2α/k (0.65% with seven
// members and z = 2) not at all.
//
// Tried and rejected in the simulator (docs/pacing.md has the numbers): following only the
// most likely member; counting every member within a likelihood ratio of 20 of the best at
// full caution and dropping the rest at once, which on slow openers let a member fitted to
// the early left tail (σ 1.2 against a true 1.1, so a gain 20% too low) become the only one
// left after two minutes, send 175,000 devices in ten seconds and put 1.8% of the windows
// over the SLO; counting the members' disagreement as measurement noise (errors in
// variables), which made a wrong member win in a world with a narrower delay spread.

import { normalCdf, normalQuantile } from './wake-up-model.js';
import { maxUnitLoadOf, loadBoundOf } from './parameter-estimator.js';
import { createShapeMember, createLearnedMember } from './bank-members.js';
import { lossGuardRate } from './loss-guard.js';

/** @typedef {import('./bank-members.js').BankMember} BankMember */

/** @typedef {import('./controller-options.js').ControllerOptions} ControllerOptions */

/** The log-likelihoods forget with this time constant, so the bank can follow a change. */
const MEMORY_MS = 30 * 60_000;
/** The share of the old average each window's innovation replaces (about 20 windows' memory). */
const NOISE_SHARE = 0.05;
/** The learned member's complexity penalty, in log-likelihood (see score()). */
const LEARNED_PENALTY = 10;
/**
 * The most a remembered shape lowers a member's starting log-likelihood: memory alone rules
 * no shape out (e^-3: about 1/20 the odds), the data must.
 */
const SHAPE_PRIOR_FLOOR = -3;

/**
 * @typedef {object} ShapePrior  an open-delay shape earlier campaigns showed (wake-up-memory.js)
 * @property {number} medianFactor  as a factor of the configured median
 * @property {number} sigmaFactor   and of the configured σ
 * @property {number} weight        how far to trust it, 0 to 1 (the memory's share of the prior)
 */

/** @param {Readonly<ControllerOptions>} o */
export function createModelBank(o) {
  const f = 1 + o.shapeUncertainty;
  const shapes = o.shapeUncertainty > 0
    ? [[1, 1], [1 / f, 1], [f, 1], [1, 1 / f], [1, f]]
    : [[1, 1]];
  // Users who open much later than the prior says: the first minutes then show almost none of
  // their load, and every member near the prior reads that as a low gain (in the tuning worlds,
  // gains 80 times too low within three minutes, and campaigns sent at 20,000/s into a gateway
  // that took 300). A member at the prior's median × s and × s² keeps that reading possible
  // until its own wake-ups were due (docs/pacing.md, "Slow openers").
  if (o.slowOpenerFactor > 1) shapes.push([o.slowOpenerFactor, 1], [o.slowOpenerFactor ** 2, 1]);
  const shapeMembers = shapes.map(([medianFactor, sigmaFactor]) => createShapeMember(o, medianFactor, sigmaFactor));
  /** The member with the configured prior shape. */
  const nominal = shapeMembers[0];
  /** The learned response (0 responseHorizonMs: none). */
  const learned = o.responseHorizonMs > 0 ? createLearnedMember(o, nominal.kernel) : null;
  /** @type {BankMember[]} */
  const members = [...shapeMembers];
  if (learned) members.push(learned);
  /** @type {ShapePrior | null} */
  const configuredShape = o.shapePriorWeight > 0
    ? { medianFactor: o.shapePriorMedianFactor, sigmaFactor: o.shapePriorSigmaFactor, weight: o.shapePriorWeight }
    : null;
  const models = members.map((member) => ({
    member,
    logLikelihood: shapeLogPrior(member, configuredShape),
    /** Standard deviations this member plans at; null when it does not count. @type {number | null} */
    z: /** @type {number | null} */ (null),
    lastMaxUnitLoad: 0,
    lastPlan: 0
  }));
  const nominalModel = models[0];

  /** Sends made at a steady pace over [fromMs, toMs). @param {number} nowMs @param {number} fromMs @param {number} toMs @param {number} count */
  function record(nowMs, fromMs, toMs, count) {
    for (const m of models) m.member.record(nowMs, fromMs, toMs, count);
  }

  /** CUSUM of the likeliest member's standardised innovations, for baseline jumps. */
  const jump = { score: 0, sum: 0, count: 0 };
  /** Jumps detected so far, for logs. */
  let jumps = 0;
  /** The push load the likeliest member predicted for the last window. */
  let lastPush = 0;
  /** The likeliest member's innovations, averaged over about NOISE_WINDOWS windows (see excessNoise). */
  const noise = { mean: 0, square: 0, predicted: 0, weight: 0 };

  /**
   * One metrics window: every member scores its prediction, then updates its filter.
   * `variance` and `censored` as in the parameter estimator's WindowObservation.
   * @param {{ rps: number, windowStartMs: number, windowEndMs: number, dtMs: number, variance?: number, censored?: boolean }} window
   */
  function observe({ rps, windowStartMs, windowEndMs, dtMs, variance, censored = false }) {
    const decay = Math.exp(-Math.max(0, dtMs) / MEMORY_MS);
    const top = best();
    /** @type {{ innovation: number, variance: number, push: number } | null} */
    let topPrediction = null;
    const extraVariance = o.filterNoiseWeight * excessNoise();
    const window = { rps, windowStartMs, windowEndMs, dtMs, variance, censored, extraVariance };
    for (const m of models) {
      if (m.member.initialised) {
        const prediction = m.member.predict(window);
        const { innovation, variance: s } = prediction;
        if (m === top) topPrediction = { ...prediction, push: rps - prediction.innovation - m.member.estimate().baseline };
        // A censored window that the member predicted above says nothing about it.
        if (!censored || innovation > 0) m.logLikelihood = decay * m.logLikelihood - o.likelihoodWeight * 0.5 * (Math.min(innovation * innovation / s, 50) + Math.log(s));
      }
      m.member.update(window);
    }
    if (topPrediction) {
      // The excess is measured against the variance the filters expect without it.
      if (!censored) learnNoise({ innovation: topPrediction.innovation, variance: topPrediction.variance - extraVariance });
      detectJump(topPrediction, rps);
    }
  }

  /**
   * The window-to-window load noise the model does not explain. The filters assume Poisson
   * counting plus `rpsNoise` (2%) of dispersion; real baselines wander more (the families draw
   * up to 10%, correlated over seconds to minutes), and each window is judged against the SLO
   * on its own. The variance of the likeliest member's innovations around their mean, less
   * the variance it predicted for them, is that excess; the plan keeps room for
   * `excessNoiseWeight` of it (as baseline variance, at each member's caution). Around the
   * mean: a lasting offset is the baseline filter's to follow, not noise.
   * @param {{ innovation: number, variance: number }} prediction
   */
  function learnNoise({ innovation, variance }) {
    noise.mean += NOISE_SHARE * (innovation - noise.mean);
    noise.square += NOISE_SHARE * (innovation * innovation - noise.square);
    noise.predicted += NOISE_SHARE * (variance - noise.predicted);
    noise.weight += NOISE_SHARE * (1 - noise.weight);
  }

  /**
   * The window-to-window load noise in all (rps, one standard deviation): the likeliest
   * member's innovations around their mean, counting, baseline and model errors together.
   * Corrected for the averages' start at 0; null before any window.
   */
  function loadNoiseRps() {
    if (!(noise.weight > 0)) return null;
    const mean = noise.mean / noise.weight;
    return Math.sqrt(Math.max(0, noise.square / noise.weight - mean * mean));
  }

  /** The excess variance (rps²) of the innovations over the predicted, never below 0. */
  function excessNoise() {
    return Math.max(0, noise.square - noise.mean * noise.mean - noise.predicted);
  }

  /**
   * A baseline that jumps (a flash sale, a TV spot) shows as innovations that stay positive
   * window after window, which the filter's random walk follows only at its slow pace: an
   * independent model's flash sale kept the baseline estimate at 238 requests/s for minutes
   * against a true 550. A one-sided CUSUM (Page 1954) of the standardised innovations, with
   * slack k = 2.5 and threshold h = 5 (a step of 10% of the load is caught in one window, one
   * of 6% in three), widens every member's baseline variance by the mean innovation of the
   * run, so the next windows re-estimate it. Only upward: a baseline that falls leaves room,
   * and the filter's drift follows it.
   * @param {{ innovation: number, variance: number, push: number }} prediction  push: the push load it predicted
   * @param {number} rps  the window's load
   */
  function detectJump({ innovation, variance, push }, rps) {
    const pushStep = Math.abs(push - lastPush);
    lastPush = push;
    // Standardised by the larger of the innovation's deviation and 5% of the load: a wake-up
    // hump the model did not expect (a second wave of openers) also makes innovations of many
    // deviations, but it grows over minutes, a few percent of the load per window; a baseline
    // jump is a step. Read as a jump, such a hump let the baseline absorb push load.
    const predicted = rps - innovation;
    const standardised = innovation / Math.max(Math.sqrt(variance), 0.05 * Math.abs(predicted));
    jump.score = Math.max(0, jump.score + standardised - 2.5);
    if (jump.score === 0) {
      jump.sum = 0;
      jump.count = 0;
      return;
    }
    jump.sum += innovation;
    jump.count++;
    if (jump.score < 5) return;
    const size = jump.sum / jump.count;
    // While the model expects the push load itself to step (a burst's first wake-ups), a
    // step it did not expect may be those wake-ups: fast openers. Read as baseline, push load
    // would be forgotten and sent again. The plain filter is the cautious reading there.
    if (pushStep > 0.5 * size) {
      jump.score = 0;
      jump.sum = 0;
      jump.count = 0;
      return;
    }
    for (const m of models) m.member.bumpBaseline(size);
    jumps++;
    jump.score = 0;
    jump.sum = 0;
    jump.count = 0;
  }

  /**
   * Back to the prior gain and shape: the next sends may belong to another campaign.
   * @param {{ requestsPerSend: number, requestsPerSendSd: number, shape?: ShapePrior }} [prior]  the configured one if not given
   */
  function resetGain(prior) {
    const shape = prior?.shape ?? configuredShape;
    for (const m of models) {
      m.member.resetGain(prior);
      m.logLikelihood = shapeLogPrior(m.member, shape);
    }
  }

  /**
   * A member's starting log-likelihood under a remembered shape: a Gaussian in the logs of the
   * median and σ factors, one bank step (a factor 1 + shapeUncertainty) wide at full weight, so
   * the member one step away starts at e^-0.5 the odds, and never below SHAPE_PRIOR_FLOOR. The
   * learned member has no shape to compare; it starts at 0, as the remembered shape's member.
   * @param {BankMember} member
   * @param {ShapePrior | null} shape
   */
  function shapeLogPrior(member, shape) {
    if (!shape || !(shape.weight > 0) || !Number.isFinite(member.medianFactor)) return 0;
    const step = Math.log(1 + (o.shapeUncertainty || 0.2));
    const distance2 = (Math.log(member.medianFactor / shape.medianFactor) ** 2 + Math.log(member.sigmaFactor / shape.sigmaFactor) ** 2) / step ** 2;
    return Math.max(SHAPE_PRIOR_FLOOR, -0.5 * shape.weight * distance2);
  }

  /** The chance of overload the plan accepts, for the mixture of members. */
  const alpha = 1 - normalCdf(o.confidence);
  /** Bins sent at the planned rate before a capacity loss shows in the metrics. */
  const detectionBins = Math.ceil((o.metricsWindowMs + o.metricsLagMs) / o.binMs);

  /** Each member's caution z_i from its posterior weight (null: it no longer counts). */
  function weigh() {
    const top = best();
    let sum = 0;
    for (const m of models) sum += Math.exp(score(m) - score(top));
    for (const m of models) {
      const tail = alpha / (models.length * (Math.exp(score(m) - score(top)) / sum));
      // The likeliest member always counts, at its mean at least (with confidence 0).
      m.z = tail < 0.5 ? normalQuantile(1 - tail) : m === top ? 0 : null;
      if (m.member === learned && m.z !== null && o.responseConfidence !== null) m.z = Math.min(m.z, o.responseConfidence);
    }
  }

  /**
   * The lowest rate any member that still counts plans for capacity `capacityRps`, each at
   * its own caution; with `lossShare` set, also within what a sudden capacity loss allows.
   * @param {{ nowMs: number, capacityRps: number, intervalMs: number, remaining?: number, aimRps?: number, pushMargin?: number }} input
   *   remaining: devices still to send, Infinity when unknown; aimRps: the load the plan may
   *   reach, when it is not the capacity at the setpoint (the capacity at the SLO); pushMargin:
   *   the plan counts each send's load as (1 + this) × the estimate
   */
  function plan({ nowMs, capacityRps, intervalMs, remaining = Infinity, aimRps = capacityRps, pushMargin = 0 }) {
    let rate = Infinity;
    for (const { m, z, estimate, maxUnitLoad } of counting(aimRps, pushMargin)) {
      m.lastMaxUnitLoad = maxUnitLoad;
      m.lastPlan = m.member.plan({ nowMs, maxUnitLoad: m.lastMaxUnitLoad, intervalMs, maxRate: o.maxRate, remaining });
      if (o.lossShare > 0) {
        const { baseline, gain, paa } = estimate;
        const saturationRps = (1 - o.lossShare) * o.saturationRatio * capacityRps;
        m.lastPlan = Math.min(m.lastPlan, lossGuardRate({
          kernel: m.member.kernel,
          binMs: o.binMs,
          committed: m.member.committed,
          currentBin: Math.floor(nowMs / o.binMs),
          baselineRps: baseline,
          requestsPerSend: gain + z * Math.sqrt(paa),
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
   * The members that still count, after weighing them, each with its estimate as the plan
   * counts it (requests per send × (1 + pushMargin), and room in the baseline's variance for
   * the load noise the filters do not explain: see excessNoise) and the push load X* that
   * estimate allows under `aimRps` at the member's caution.
   * @param {number} aimRps @param {number} pushMargin
   */
  function counting(aimRps, pushMargin) {
    weigh();
    const noiseVariance = o.excessNoiseWeight * excessNoise();
    return models.flatMap((m) => {
      const z = m.z;
      if (z === null) return [];
      const learned = m.member.estimate();
      const estimate = { ...learned, gain: learned.gain * (1 + pushMargin), pBB: learned.pBB + noiseVariance };
      return [{ m, z, estimate, maxUnitLoad: maxUnitLoadOf(estimate, aimRps, z) }];
    });
  }

  /**
   * The short campaign's rate (rate-planner.js shortCampaignRate): the highest rate that sends the
   * `remaining` devices within `maxMs` with every member's predicted load, at its caution, at
   * or under `aimRps`; 0 if some member says it does not fit.
   * @param {{ nowMs: number, aimRps: number, remaining: number, maxMs: number, pushMargin?: number }} input
   */
  function shortCampaignRate({ nowMs, aimRps, remaining, maxMs, pushMargin = 0 }) {
    let rate = Infinity;
    for (const { m, maxUnitLoad } of counting(aimRps, pushMargin)) {
      rate = Math.min(rate, m.member.shortCampaignRate({ nowMs, maxUnitLoad, remaining, maxMs, maxRate: o.maxRate }));
      if (rate === 0) break;
    }
    return rate === Infinity ? 0 : rate;
  }

  /**
   * The highest load, in requests/s at the prior's upper bound of requests per send, that
   * sending `count` devices at once would cause, over the members' shapes.
   * @param {number} count
   */
  function coldStartLoad(count) {
    const upperGain = o.openProbability * o.requestsPerOpen * o.priorUncertainty;
    let peak = 0;
    for (const m of models) for (const k of m.member.kernel) peak = Math.max(peak, k);
    return (upperGain * count * peak) / (o.binMs / 1000);
  }

  /**
   * A member's log-likelihood, less a complexity penalty for the learned one: with a weight
   * per lag it fits every window's noise a little better than any two-parameter shape, and
   * its wider uncertainty would then set the plan in worlds the shapes describe well (in the
   * simulator: all-users' gain learned slower, bimodal openers 2.9× slower than the bank of
   * shapes alone). With the penalty it takes over only where the shapes clearly misfit: a
   * likelihood ratio of e^10.
   * @param {typeof models[number]} m
   */
  function score(m) {
    return m.member === learned ? m.logLikelihood - LEARNED_PENALTY : m.logLikelihood;
  }

  /**
   * The median open delay of the slowest shape that still counted in the last plan, as a
   * factor of the configured median (the slowest of all before any plan). The learned member
   * has no median and is left out.
   */
  function slowestCountingFactor() {
    const noneCounts = models.every((m) => m.z === null);
    let slowest = 0;
    for (const m of models) {
      if (!Number.isFinite(m.member.medianFactor)) continue;
      if (noneCounts || m.z !== null) slowest = Math.max(slowest, m.member.medianFactor);
    }
    return slowest;
  }

  /**
   * The widest deviation of requests per send among the members that counted in the last plan
   * (every member before any plan): how well the bank knows the gain, at its least sure.
   */
  function widestCountingGainSd() {
    const noneCounts = models.every((m) => m.z === null);
    let widest = 0;
    for (const m of models) if (noneCounts || m.z !== null) widest = Math.max(widest, Math.sqrt(m.member.estimate().paa));
    return widest;
  }

  /** The most likely member (the prior's shape until the data say otherwise). */
  function best() {
    let top = nominalModel;
    for (const m of models) if (score(m) > score(top)) top = m;
    return top;
  }

  return {
    record,
    observe,
    resetGain,
    plan,
    shortCampaignRate,
    best,
    slowestCountingFactor,
    widestCountingGainSd,
    coldStartLoad,
    /** The configured shape's wake-up mass per second (for the cut hold: one open delay). */
    nominalMassPerSecond: nominal.massPerSecond,
    loadNoiseRps,
    get initialised() { return nominal.initialised; },
    /** For logs and charts. */
    snapshot() {
      const top = best();
      const estimate = top.member.estimate();
      const members = models.map((m) => {
        const e = m.member.estimate();
        return {
          shape: m.member.label,
          medianFactor: m.member.medianFactor,
          sigmaFactor: m.member.sigmaFactor,
          requestsPerSend: e.gain,
          requestsPerSendSd: Math.sqrt(e.paa),
          logLikelihood: score(m) - score(top),
          z: m.z,
          baseline: e.baseline,
          maxUnitLoad: m.lastMaxUnitLoad,
          plannedRate: m.lastPlan
        };
      });
      const counted = members.filter((m) => m.z !== null);
      return {
        ...top.member.snapshot(),
        shape: top.member.label,
        medianFactor: top.member.medianFactor,
        sigmaFactor: top.member.sigmaFactor,
        plausibleModels: models.filter((m) => m.z !== null).length,
        baselineJumps: jumps,
        excessNoiseRps: Math.sqrt(excessNoise()),
        maxUnitLoad: top.lastMaxUnitLoad,
        uncertaintyRps: loadBoundOf(estimate, top.lastMaxUnitLoad, o.confidence) - loadBoundOf(estimate, top.lastMaxUnitLoad, 0),
        members,
        /** The member that still counts whose plan was the lowest: the one that set the last plan (null before any plan). */
        binding: counted.length === 0 ? null : counted.reduce((a, b) => (b.plannedRate < a.plannedRate ? b : a))
      };
    }
  };
}

/** @typedef {ReturnType<typeof createModelBank>} ModelBank */
