// Every option of the pacing controller, with its default, in one place. docs/pacing.md
// explains each; keep the two in step.
import { InputError } from '../errors.js';

/**
 * @typedef {object} ControllerOptions
 *
 * The SLO and the guards
 * @property {number} sloP95Ms          the gateway's p95 latency objective; fixed, never learned
 * @property {number} setpointRatio     the capacity estimate aims the p95 at this share of the SLO (margin for noise)
 * @property {number} p99LimitMs        p99 above this cuts the rate at once
 * @property {number} maxErrorRatio     an error ratio above this cuts the rate at once
 * @property {number} cutFactor         a cut multiplies the rate by this
 * @property {number | null} cutHoldMs  a cut caps the rate this long, and no second cut comes within it (null: the wake-up model's median request delay, "one open delay")
 * @property {number} minRate           sends/s, never less
 * @property {number} maxRate           sends/s, never more
 * @property {number} staleAfterMs      gateway metrics missing for longer than this: decay to safeRate
 * @property {number} staleDecayMs      time constant of that decay
 * @property {number} safeRate          sends/s the controller decays to without metrics (kept within [minRate, maxRate])
 * @property {number} coldStartShare    with no metrics yet, a campaign whose whole wake-up load (prior upper bound) is under this share of capacityRps goes out at once
 *
 * The wake-up model's priors
 * @property {number} openProbability   share of sends whose user opens the app
 * @property {number} requestsPerOpen   gateway requests per open
 * @property {number} openDelayMedianMs median delay from send to open
 * @property {number} openDelaySigma    log-normal shape of the open delay
 * @property {number} sessionMs         an open's requests spread uniformly over this long
 * @property {number} priorUncertainty  requests per send is believed to lie below prior × this (at `confidence` standard deviations)
 * @property {number} idleResetMs       no sends for this long: requests per send goes back to the prior (the next campaign may differ)
 * @property {number} shapeUncertainty  the open delay's median and σ may be off by a factor 1 + this; the model bank covers both ways (0: one model)
 * @property {number} shapeErrorFactor  each shape member's median and σ may be off by this factor: the part of a window's predicted load such an error would change counts as noise in what the window teaches the member's gain (1: none, the default; docs/pacing.md has the held-out price of 1.728)
 * @property {number} timingErrorMs     the wake-ups may come this much earlier or later than a shape member's kernel says (push delivery, the open delay's left tail): the part of a window's predicted load such a shift would change counts as noise in what the window teaches the member's gain (0: none)
 * @property {number} slowOpenerFactor  the bank also holds members whose median is this and its square times the prior's (users who open far later than configured); ≤ 1: none
 * @property {number} likelihoodWeight  what one metrics window counts for in the bank's shape likelihoods (0 < w ≤ 1; 1: independent windows): consecutive windows' errors are correlated, so each is worth less than an independent observation
 * @property {number} shapePriorMedianFactor  a remembered open-delay median, as a factor of openDelayMedianMs (wake-up-memory.js): members near it start likelier
 * @property {number} shapePriorSigmaFactor   and σ, as a factor of openDelaySigma
 * @property {number} shapePriorWeight  how far the bank trusts that remembered shape, 0 (not at all: every member starts equal) to 1 (the memory's share of the prior)
 * @property {number} responseHorizonMs the learned wake-up response (impulse-response.js) covers lags up to this long (0: no learned member)
 * @property {number} responseMaxBins   and at most this many bins of binMs (its update costs O(bins²))
 * @property {number} responseFloorShare  the learned response's prior lets every lag carry load up to about this share of the prior's peak (room for a second hump or a heavy tail; more room learns them sooner and plans more cautiously until it has)
 * @property {number | null} responseConfidence  the most standard deviations the learned member plans at (null: the bank's own rule, like every member)
 *
 * Capacity
 * @property {number} capacityRps       prior: gateway requests/s at the setpoint p95, total (all traffic)
 * @property {number | null} baseLatencyMs  p95 of the idle gateway; null learns it
 * @property {number} capacityRiseLimit largest relative rise of the capacity estimate per metrics window
 * @property {number} capacityDropLimit largest relative drop per metrics window
 * @property {number} capacityRiseGain  share of the way to the observed capacity moved up per window
 * @property {number} capacityDropGain  share of the way moved down per window below the SLO (0.5 above it, 1 above twice it)
 * @property {number} missShare         target share of metrics windows that start a run over the SLO; more often, the plan fills less of the capacity estimate (0: off)
 * @property {number} missStep          relative cut of that trim per run of windows over the SLO
 * @property {number} missFloor         the trim's lowest value
 * @property {number} capacityActiveShare  load above this share of the estimate makes its latency evidence for raising it
 * @property {number} capacityEdgeRelax  relative rise per metrics window of the edge a crossing of the SLO sets on the capacity estimate, just after the crossing
 * @property {number} capacityEdgeProbeWindows  that rise grows as (1 + n / this)² with the windows n since the crossing
 * @property {number | null} capacityEdgeRestoreMs  after the run over the SLO that set the edge, a capacity estimate the fit took under 0.7 of the run's floor returns to that floor over this long of windows under the setpoint (0: off, it climbs at capacityRiseLimit; null: one open delay, as cutHoldMs)
 * @property {number} capacityTrialShare  the share of the prior capacityRps the plan may fill before the gateway has shown it (1: the whole prior at once, no trial)
 * @property {number} capacityTrialGrowth during the trial, each window under the setpoint lets the plan fill this multiple of the load it showed
 * @property {number | null} capacityTrialHoldShare  with a latency-only source, a window whose p95 is this share of the way from the base latency to the setpoint lets the trial grow at most once an open delay, as TCP's HyStart leaves slow start when the delay rises (null: off)
 * @property {number} baseLoadRps  with a latency-only source, the least the users' own traffic sends through the gateway, requests/s (0: not known): the curve reads its floor as this load
 * @property {number} capacityEnvelopeMs  on a gateway whose p95 jumps between windows, the plan fills the lowest capacity estimate of this long, in whole windows (0: off)
 * @property {number} sloCapacityRatio  the gateway's capacity at the SLO p95 over its capacity at the setpoint (capacityRps), from the same load test (≥ 1; 1: not known). Above 1, a campaign not yet started whose whole wake-up load fits under the capacity at the SLO goes out at once, and the plan keeps at most sloMargin of the capacity at the SLO free
 * @property {number} sloMargin         with sloCapacityRatio known, the most of the capacity at the SLO the plan keeps free: it aims at the larger of the capacity at the setpoint and (1 − sloMargin) × the capacity at the SLO
 * @property {number | null} settledMargin  with sloCapacityRatio known, the margin a campaign's plan settles to, from sloMargin, while its windows stay under the SLO (null, or at least sloMargin: off, sloMargin throughout; docs/pacing.md "A margin that settles")
 * @property {number} marginSettleMs    the time constant of that settling (> 0); a campaign's start and each window over the SLO put the margin back at sloMargin
 * @property {number} noiseMarginZ      with the margin settling and the request rate seen, a campaign whose windows have all stayed under the SLO settles further, to this many standard deviations of the measured load noise as a share of the capacity at the SLO, where that is under settledMargin (0: off; docs/pacing.md "A margin sized by the noise")
 * @property {number} noiseMarginFloor  and never under this share of the capacity at the SLO
 * @property {number | null} noiseMarginAfterMs  and only from this long after the campaign's first send (null: noiseMarginWaitFactor × the median open delay of the slowest shape the bank still counts)
 * @property {number} noiseMarginWaitFactor  with noiseMarginAfterMs null, the margin sized by the noise waits this many × the median open delay of the slowest shape the bank still counts (0: a fixed 30 minutes, or twice the slowest openers' median, slowOpenerFactor² × openDelayMedianMs, where that is longer)
 * @property {number} noiseMarginPoissonMs  the margin sized by the noise also counts the Poisson count of the load near the SLO over this long, √(λ/τ) requests/s (0: off)
 * @property {number} shortCampaignMs   with sloCapacityRatio known, a campaign whose whole wake-up load, planned at each member's caution, fits under the capacity at the SLO when sent evenly within this long of its first send goes out that fast (0: off; docs/pacing.md "A short campaign")
 * @property {number} pushMargin        with sloCapacityRatio known, the plan counts each send's predicted load as (1 + this) × the estimate: a margin in proportion to the push load, not to the capacity (0: none; off by default, docs/pacing.md "A margin in proportion to the push load")
 *
 * Robustness against a sudden capacity loss (off by default: lossShare 0)
 * @property {number} lossShare         plan so that losing this share of the gateway's capacity at any moment queues no request longer than lossQueueMs (0: off)
 * @property {number} saturationRatio   the gateway's throughput at full CPU over its capacity at the setpoint (capacityRps), from the same load test
 * @property {number} lossQueueMs       the longest queueing delay that such a loss may cause (keep it under the router's timeout, 30 s on Heroku)
 *
 * Estimation
 * @property {number} confidence        standard deviations of the predicted load kept under capacity
 * @property {number} planSoftness      share by which the plan lets predicted load exceed its bound, for a smooth rate (soft constraint)
 * @property {number} reserveShare      with the devices remaining known, the plan keeps room after the campaigns' last sends for this share of the steady rate (transactional sends, the next campaign), and the rate never falls below it while it fits
 * @property {number} baselineDrift     random walk of the baseline, share per √minute
 * @property {number} gainDrift         random walk of requests per send, share per √minute
 * @property {number} rpsNoise          measured rps dispersion beyond Poisson, as a share
 * @property {number} excessNoiseWeight the share of the load noise the filters do not explain (measured from their innovations) that the plan keeps room for, as baseline variance (0: none)
 * @property {number} filterNoiseWeight the share of that excess noise the filters count as measurement noise, so that one noisy window moves no estimate far (0: none)
 * @property {number} latencyNoise      the least dispersion of a window's p95, as a share (more is measured from the windows): with a latency-only source it sets how much one window's load, read off the latency curve, is trusted
 *
 * Timing
 * @property {number} binMs             time step of the send history and the plan
 * @property {number} metricsWindowMs   length of the window a gateway observation covers
 * @property {number} metricsLagMs      how long after its window's end an observation arrives
 * @property {number} kernelTailMass    the wake-up kernel is cut where less than this share of its requests remain
 */

/** @type {Readonly<ControllerOptions>} */
export const CONTROLLER_DEFAULTS = Object.freeze({
  sloP95Ms: 400,
  setpointRatio: 0.8,
  p99LimitMs: 1000,
  maxErrorRatio: 0.01,
  cutFactor: 0.5,
  cutHoldMs: null,
  minRate: 1,
  maxRate: 5000,
  staleAfterMs: 60_000,
  staleDecayMs: 60_000,
  safeRate: 20,
  coldStartShare: 0.1,

  openProbability: 0.1,
  requestsPerOpen: 15,
  openDelayMedianMs: 90_000,
  openDelaySigma: 1,
  sessionMs: 60_000,
  priorUncertainty: 3,
  shapeUncertainty: 0.2,
  shapeErrorFactor: 1,
  timingErrorMs: 0,
  slowOpenerFactor: 3,
  likelihoodWeight: 0.25,
  shapePriorMedianFactor: 1,
  shapePriorSigmaFactor: 1,
  shapePriorWeight: 0,
  responseHorizonMs: 0,
  responseMaxBins: 360,
  responseFloorShare: 0.02,
  responseConfidence: null,
  idleResetMs: 300_000,

  capacityRps: 1000,
  baseLatencyMs: null,
  capacityRiseLimit: 0.02,
  capacityDropLimit: 0.4,
  capacityRiseGain: 0.1,
  capacityDropGain: 0.1,
  capacityActiveShare: 0.9,
  capacityEdgeRelax: 0.0003,
  capacityEdgeProbeWindows: 360,
  capacityEdgeRestoreMs: null,
  capacityTrialShare: 0.5,
  capacityTrialGrowth: 1.5,
  capacityTrialHoldShare: 0.25,
  capacityEnvelopeMs: 60_000,
  baseLoadRps: 0,
  sloCapacityRatio: 1,
  sloMargin: 0.2,
  settledMargin: 0.15,
  marginSettleMs: 600_000,
  noiseMarginZ: 2.5,
  noiseMarginFloor: 0.05,
  noiseMarginAfterMs: null,
  noiseMarginWaitFactor: 2,
  noiseMarginPoissonMs: 1000,
  shortCampaignMs: 300_000,
  pushMargin: 0,

  missShare: 0.02,
  missStep: 0.15,
  missFloor: 0.5,

  lossShare: 0,
  saturationRatio: 1.2,
  lossQueueMs: 20_000,

  confidence: 2,
  planSoftness: 0.01,
  reserveShare: 0.1,
  baselineDrift: 0.005,
  gainDrift: 0.003,
  rpsNoise: 0.02,
  excessNoiseWeight: 0.3,
  filterNoiseWeight: 1,
  latencyNoise: 0.15,

  binMs: 10_000,
  metricsWindowMs: 10_000,
  metricsLagMs: 10_000,
  kernelTailMass: 1e-3
});

/** Options that may be null. */
const NULLABLE = new Set(['settledMargin', 'noiseMarginAfterMs', 'cutHoldMs', 'baseLatencyMs', 'responseConfidence', 'capacityEdgeRestoreMs', 'capacityTrialHoldShare']);

/**
 * The rules every single option obeys: a known name, and a finite number ≥ 0 (or null where
 * it may be). Throws an InputError naming the option, after `source` (such as "--options: ").
 * @param {string} key @param {unknown} value @param {string} [source]
 */
function checkOption(key, value, source = '') {
  if (!(key in CONTROLLER_DEFAULTS)) throw new InputError(`${source}controller option ${key} is unknown; known: ${Object.keys(CONTROLLER_DEFAULTS).join(', ')}`);
  if (value === null && NULLABLE.has(key)) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InputError(`${source}controller option ${key} must be a finite number ≥ 0, got ${JSON.stringify(value)}`);
  }
}

/**
 * Defaults applied and every value checked; throws an InputError naming the option.
 * @param {Partial<ControllerOptions>} [options]
 * @returns {Readonly<ControllerOptions>}
 */
export function resolveControllerOptions(options = {}) {
  /** @type {Record<string, unknown>} */
  const merged = { ...CONTROLLER_DEFAULTS };
  for (const [key, value] of Object.entries(options)) {
    if (!(key in CONTROLLER_DEFAULTS)) checkOption(key, value);
    if (value === undefined) continue;
    merged[key] = value;
  }
  for (const [key, value] of Object.entries(merged)) checkOption(key, value);
  const o = /** @type {ControllerOptions} */ (merged);
  const positive = /** @type {const} */ (['sloP95Ms', 'setpointRatio', 'openProbability', 'requestsPerOpen', 'openDelayMedianMs', 'openDelaySigma', 'capacityRps', 'binMs', 'metricsWindowMs', 'staleDecayMs', 'priorUncertainty', 'shapePriorMedianFactor', 'shapePriorSigmaFactor', 'likelihoodWeight', 'capacityEdgeProbeWindows', 'capacityTrialShare', 'marginSettleMs']);
  for (const key of positive) if (!(o[key] > 0)) throw new InputError(`controller option ${key} must be > 0, got ${o[key]}`);
  if (o.setpointRatio > 1) throw new InputError(`controller option setpointRatio must be ≤ 1 (a share of the SLO), got ${o.setpointRatio}`);
  if (o.cutFactor >= 1) throw new InputError(`controller option cutFactor must be < 1, got ${o.cutFactor}`);
  if (o.minRate > o.maxRate) throw new InputError(`controller option minRate (${o.minRate}) is above maxRate (${o.maxRate})`);
  if (o.binMs % 1000 !== 0) throw new InputError(`controller option binMs must be a whole number of seconds, got ${o.binMs}`);
  if (o.reserveShare > 1) throw new InputError(`controller option reserveShare must be ≤ 1 (a share of the steady rate), got ${o.reserveShare}`);
  if (o.capacityTrialShare > 1) throw new InputError(`controller option capacityTrialShare must be ≤ 1 (a share of capacityRps), got ${o.capacityTrialShare}`);
  if (o.capacityTrialGrowth <= 1) throw new InputError(`controller option capacityTrialGrowth must be > 1, got ${o.capacityTrialGrowth}`);
  if (o.coldStartShare > 1) throw new InputError(`controller option coldStartShare must be ≤ 1 (a share of capacityRps), got ${o.coldStartShare}`);
  if (o.missShare >= 1) throw new InputError(`controller option missShare must be < 1 (a share of the metrics windows), got ${o.missShare}`);
  if (o.missStep >= 1) throw new InputError(`controller option missStep must be < 1 (a relative cut), got ${o.missStep}`);
  if (o.missFloor > 1) throw new InputError(`controller option missFloor must be ≤ 1 (a share of the capacity estimate), got ${o.missFloor}`);
  if (o.lossShare >= 1) throw new InputError(`controller option lossShare must be < 1 (a share of the capacity), got ${o.lossShare}`);
  if (o.sloMargin >= 1) throw new InputError(`controller option sloMargin must be < 1 (a share of the capacity at the SLO), got ${o.sloMargin}`);
  if (o.sloCapacityRatio < 1) throw new InputError(`controller option sloCapacityRatio must be ≥ 1 (the capacity at the SLO over the capacity at the setpoint), got ${o.sloCapacityRatio}`);
  if (o.saturationRatio < 1) throw new InputError(`controller option saturationRatio must be ≥ 1 (full-CPU throughput over the capacity at the setpoint), got ${o.saturationRatio}`);
  if (o.likelihoodWeight > 1) throw new InputError(`controller option likelihoodWeight must be ≤ 1 (a window counts at most as one independent observation), got ${o.likelihoodWeight}`);
  if (o.shapePriorWeight > 1) throw new InputError(`controller option shapePriorWeight must be ≤ 1 (a share), got ${o.shapePriorWeight}`);
  if (o.shapeErrorFactor < 1) throw new InputError(`controller option shapeErrorFactor must be ≥ 1 (a factor; 1: none), got ${o.shapeErrorFactor}`);
  if (o.priorUncertainty < 1) throw new InputError(`controller option priorUncertainty must be ≥ 1 (a factor), got ${o.priorUncertainty}`);
  return Object.freeze(o);
}

/**
 * Controller options given on a command line as JSON (`--options '{"sloMargin":0.1}'` of
 * sim/tune.js, sim/trace-world.js, demo/replay.js): an object whose every key is an option
 * and every value a finite number ≥ 0 (or null where the option may be). The whole set is
 * checked again when a controller is built from it with the rest of its options.
 * @param {string} text
 * @returns {Partial<ControllerOptions>}
 */
export function parseControllerOptions(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InputError(`--options must be a JSON object of controller options: ${/** @type {Error} */ (error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InputError('--options must be a JSON object of controller options, such as \'{"setpointRatio":0.5}\'');
  for (const [key, value] of Object.entries(parsed)) checkOption(key, value, '--options: ');
  return parsed;
}
