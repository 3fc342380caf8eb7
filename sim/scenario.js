// Scenario files: the simulated world (gateway, baseline traffic, wake-up behaviour, metrics)
// and how each strategy is configured. docs/simulator.md documents every field; the
// defaults live here, in one place.
import { readFileSync } from 'node:fs';
import { InputError } from '../shared/errors.js';

/**
 * @typedef {object} Scenario
 * @property {string} name
 * @property {string} description
 * @property {number} seed
 * @property {number} audience            devices to send to
 * @property {number} warmupSeconds       metrics flow (and the adaptive controller runs) this long before the campaign starts
 * @property {number} maxSeconds          the run stops this long after the start even if the campaign has not finished
 * @property {{ p95Ms: number }} slo
 * @property {import('./gateway-model.js').GatewayConfig & { queueing: 'per-process' | 'shared', capacityChanges: CapacityChange[] }} gateway
 * @property {Baseline} baseline
 * @property {WakeUp} wakeUp
 * @property {{ windowSeconds: number, lagSeconds: number, outages: Interval[], reportsRps: boolean }} metrics
 *   reportsRps false: the source sees latency and errors only (an active probe), and the windows a strategy reads have rps null
 * @property {{ maxRate: number }} sns
 * @property {Strategies} strategies
 */

/** @typedef {{ atSeconds: number, durationSeconds: number }} Interval */
/**
 * A world event: capacity changes and baseline spikes. Unannounced unless `announced` is
 * true; the informed oracle learns of an unannounced one only when the metrics show it.
 * @typedef {Interval & { factor: number, announced?: boolean }} CapacityChange
 */
/**
 * @typedef {object} Baseline
 * @property {number} rps    mean non-push request rate
 * @property {{ amplitude: number, peakHour: number, startHour: number } | null} diurnal
 *   rps × (1 + amplitude·cos(2π(h - peakHour)/24)), h the hour of day; the campaign starts at startHour
 * @property {CapacityChange[]} spikes  rps multiplied by factor during each interval (same shape as a capacity change)
 * @property {{ sigma: number, correlationSeconds: number }} noise  multiplicative log-normal AR(1) noise
 */
/**
 * @typedef {object} WakeUp
 * @property {number} openProbability
 * @property {number} requestsPerOpen
 * @property {DelayComponent[]} openDelay  a mixture of open-delay components (sim/delay-kernel.js)
 * @property {number} sessionMeanSeconds  an open's requests spread exponentially with this mean
 * @property {number | null} maxDelaySeconds  the request-time kernel is cut here and renormalised (null: at 99.9% of its mass only)
 */
/**
 * @typedef {object} DelayComponent  one open-delay component
 * @property {'lognormal' | 'pareto' | 'exponential'} [kind]  default lognormal
 * @property {number} share
 * @property {number} medianSeconds
 * @property {number} [sigma]  lognormal: the shape
 * @property {number} [alpha]  pareto (Lomax): the tail index, P(D > t) = (1 + t/λ)^-α
 */
/**
 * @typedef {object} Strategies
 * @property {{ batchSize: number, pauseSeconds: number }} batches
 * @property {{ rate: number }} static
 * @property {{ controlIntervalSeconds: number, controller: Partial<import('../shared/pacing/controller-options.js').ControllerOptions> }} adaptive
 * @property {{ binSeconds: number, confidence: number, dropConfidence: number | null }} oracle  confidence: the oracles' margin at full capacity; dropConfidence: while the capacity is below it (null: the same)
 */

/** How requests queue at the gateway (sim/gateway-model.js). */
const QUEUEING = ['per-process', 'shared'];
/** Open-delay component kinds (sim/delay-kernel.js). */
const DELAY_KINDS = ['lognormal', 'pareto', 'exponential'];

/** Defaults for every field but name; a scenario file overrides what it states. */
export const SCENARIO_DEFAULTS = Object.freeze({
  description: '',
  seed: 1,
  audience: 1_000_000,
  warmupSeconds: 300,
  maxSeconds: 86_400,
  slo: { p95Ms: 400 },
  gateway: { processes: 20, serviceMs: 16, downstreamMs: 50, timeoutSeconds: 30, queueing: 'per-process', capacityChanges: [] },
  baseline: { rps: 417, diurnal: null, spikes: [], noise: { sigma: 0.02, correlationSeconds: 60 } },
  wakeUp: { openProbability: 0.1, requestsPerOpen: 15, openDelay: [{ share: 1, medianSeconds: 90, sigma: 1.1 }], sessionMeanSeconds: 40, maxDelaySeconds: null },
  metrics: { windowSeconds: 10, lagSeconds: 10, outages: [], reportsRps: true },
  sns: { maxRate: 30_000 },
  strategies: {
    batches: { batchSize: 50_000, pauseSeconds: 1400 },
    static: { rate: 400 },
    adaptive: { controlIntervalSeconds: 10, controller: {} },
    oracle: { binSeconds: 10, confidence: 1.3, dropConfidence: null }
  }
});

/**
 * Reads and validates a scenario file.
 * @param {string} file
 * @returns {Scenario}
 */
export function loadScenario(file) {
  let raw;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new InputError(`scenario ${file}: ${/** @type {Error} */ (err).message}`, { cause: err });
  }
  return resolveScenario(raw, file);
}

/**
 * Applies defaults (deeply, for plain objects) and checks the values.
 * @param {unknown} raw
 * @param {string} [source]  for error messages
 * @returns {Scenario}
 */
export function resolveScenario(raw, source = 'scenario') {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError(`${source}: must be a JSON object`);
  const s = /** @type {Scenario} */ (merge(SCENARIO_DEFAULTS, raw, source, ''));
  if (typeof s.name !== 'string' || !s.name) throw new InputError(`${source}: name is missing`);
  /** @param {string} path @param {unknown} v @param {number} [min] */
  const num = (path, v, min = 0) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw new InputError(`${source}: ${path} must be a number ≥ ${min}, got ${JSON.stringify(v)}`);
  };
  num('audience', s.audience, 1);
  num('warmupSeconds', s.warmupSeconds);
  num('maxSeconds', s.maxSeconds, 1);
  num('slo.p95Ms', s.slo.p95Ms, 1);
  num('gateway.processes', s.gateway.processes, 1);
  num('gateway.serviceMs', s.gateway.serviceMs, 0.001);
  num('gateway.downstreamMs', s.gateway.downstreamMs);
  num('gateway.timeoutSeconds', s.gateway.timeoutSeconds, 1);
  if (!QUEUEING.includes(s.gateway.queueing)) throw new InputError(`${source}: gateway.queueing must be one of ${QUEUEING.join(', ')}, got ${JSON.stringify(s.gateway.queueing)}`);
  /** @param {string} path @param {CapacityChange} c @param {number} minFactor */
  const event = (path, c, minFactor) => {
    num(`${path}.atSeconds`, c.atSeconds, -Infinity);
    num(`${path}.durationSeconds`, c.durationSeconds);
    num(`${path}.factor`, c.factor, minFactor);
    if (c.announced !== undefined && typeof c.announced !== 'boolean') throw new InputError(`${source}: ${path}.announced must be true or false`);
  };
  s.gateway.capacityChanges.forEach((c, i) => event(`gateway.capacityChanges[${i}]`, c, 0.01));
  num('baseline.rps', s.baseline.rps);
  num('baseline.noise.sigma', s.baseline.noise.sigma);
  num('baseline.noise.correlationSeconds', s.baseline.noise.correlationSeconds, 1);
  s.baseline.spikes.forEach((c, i) => event(`baseline.spikes[${i}]`, c, 0));
  num('wakeUp.openProbability', s.wakeUp.openProbability);
  if (s.wakeUp.openProbability > 1) throw new InputError(`${source}: wakeUp.openProbability must be ≤ 1`);
  num('wakeUp.requestsPerOpen', s.wakeUp.requestsPerOpen);
  num('wakeUp.sessionMeanSeconds', s.wakeUp.sessionMeanSeconds, 0.001);
  if (!Array.isArray(s.wakeUp.openDelay) || !s.wakeUp.openDelay.length) throw new InputError(`${source}: wakeUp.openDelay must be a non-empty array of { kind, share, medianSeconds, sigma | alpha }`);
  s.wakeUp.openDelay.forEach((c, i) => {
    const path = `wakeUp.openDelay[${i}]`;
    const kind = c.kind ?? 'lognormal';
    if (!DELAY_KINDS.includes(kind)) throw new InputError(`${source}: ${path}.kind must be one of ${DELAY_KINDS.join(', ')}, got ${JSON.stringify(c.kind)}`);
    num(`${path}.share`, c.share, 0.0001);
    num(`${path}.medianSeconds`, c.medianSeconds, 0.001);
    if (kind === 'lognormal') num(`${path}.sigma`, c.sigma, 0.01);
    // α ≤ 1 has no mean: a tail that long needs maxDelaySeconds, and 0.5 is far below anything seen.
    if (kind === 'pareto') num(`${path}.alpha`, c.alpha, 0.5);
  });
  if (s.wakeUp.maxDelaySeconds !== null) num('wakeUp.maxDelaySeconds', s.wakeUp.maxDelaySeconds, 1);
  if (s.wakeUp.openDelay.some((c) => c.kind === 'pareto' && /** @type {number} */ (c.alpha) <= 1) && s.wakeUp.maxDelaySeconds === null) {
    throw new InputError(`${source}: a pareto open delay with alpha ≤ 1 needs wakeUp.maxDelaySeconds (its tail has no mean)`);
  }
  num('metrics.windowSeconds', s.metrics.windowSeconds, 1);
  num('metrics.lagSeconds', s.metrics.lagSeconds);
  if (!Number.isInteger(s.metrics.windowSeconds)) throw new InputError(`${source}: metrics.windowSeconds must be a whole number`);
  if (typeof s.metrics.reportsRps !== 'boolean') throw new InputError(`${source}: metrics.reportsRps must be true or false`);
  num('sns.maxRate', s.sns.maxRate, 1);
  num('strategies.batches.batchSize', s.strategies.batches.batchSize, 1);
  num('strategies.batches.pauseSeconds', s.strategies.batches.pauseSeconds, 1);
  num('strategies.static.rate', s.strategies.static.rate, 0.001);
  num('strategies.adaptive.controlIntervalSeconds', s.strategies.adaptive.controlIntervalSeconds, 1);
  num('strategies.oracle.binSeconds', s.strategies.oracle.binSeconds, 1);
  num('strategies.oracle.confidence', s.strategies.oracle.confidence);
  if (s.strategies.oracle.dropConfidence !== null) num('strategies.oracle.dropConfidence', s.strategies.oracle.dropConfidence);
  if (s.baseline.diurnal) {
    num('baseline.diurnal.amplitude', s.baseline.diurnal.amplitude);
    num('baseline.diurnal.peakHour', s.baseline.diurnal.peakHour);
    num('baseline.diurnal.startHour', s.baseline.diurnal.startHour);
  }
  return s;
}

/**
 * Deep merge for plain objects; arrays and scalars in `over` replace the default. Unknown
 * keys are errors, so a typo does not silently fall back to a default.
 * @param {any} base
 * @param {any} over
 * @param {string} source
 * @param {string} path
 * @returns {any}
 */
function merge(base, over, source, path) {
  if (over === undefined) return structuredClone(base);
  const isPlain = (/** @type {unknown} */ v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isPlain(base) || !isPlain(over)) return over;
  /** @type {Record<string, unknown>} */
  const out = structuredClone(base);
  for (const [key, value] of Object.entries(over)) {
    const here = path ? `${path}.${key}` : key;
    // Open-ended maps: controller options are checked by the controller itself.
    if (!(key in base) && !(path === '' && key === 'name') && path !== 'strategies.adaptive.controller') {
      throw new InputError(`${source}: ${here} is not a scenario field (see docs/simulator.md)`);
    }
    out[key] = key in base && base[key] !== null ? merge(base[key], value, source, here) : value;
  }
  return out;
}
