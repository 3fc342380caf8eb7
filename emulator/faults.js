// Faults (throttling, disabled or failing endpoints, 5xx, latency) are what a paced
// dispatcher exists to survive, so the emulator injects them, and they can be changed
// at runtime over the control API. This file validates a fault config and holds the
// mechanisms behind it: the sliding-second throttle and the seeded PRNG.
import { InputError } from '../shared/errors.js';
import { ENDPOINT_ARN } from './endpoint-store.js';

const MAX_LATENCY_MS = 60_000;

/**
 * @typedef {{ min: number, max: number }} LatencyRange
 * @typedef {{ code: string, status: number, message: string }} EndpointFailure
 * @typedef {object} Faults the normalized fault config, as GET /_emulator/faults shows it
 * @property {number | null} throttlePerSecond Publish requests admitted per sliding second; null is unlimited
 * @property {'Throttling' | 'Throttled'} throttleCode Throttling (400) as SNS answers API rate limits, or Throttled (429, ThrottledException)
 * @property {string[]} disabledEndpoints ARNs that start out with Enabled=false
 * @property {number | LatencyRange} latencyMs delay added to every SNS API answer
 * @property {number} errorShare share (0..1) of Publish requests answered 500 InternalError
 * @property {number} seed seeds the PRNG behind errorShare
 * @property {Record<string, EndpointFailure>} failEndpoints ARN -> permanent error answer
 * @typedef {{ [K in keyof Faults]?: K extends 'failEndpoints'
 *   ? Record<string, { code: string, status?: number, message?: string }> : Faults[K] | null }} FaultsInput
 */

/** @type {Faults} */
const NO_FAULTS = Object.freeze({
  throttlePerSecond: null, throttleCode: 'Throttling', disabledEndpoints: [], latencyMs: 0,
  errorShare: 0, seed: 1, failEndpoints: {}
});

/**
 * Validates a fault config and fills in defaults. Throws InputError whose message
 * and `field` name the offending field.
 * @param {unknown} input
 * @returns {Faults}
 */
export function normalizeFaults(input) {
  if (!isPlainObject(input)) throw fieldError('faults', 'faults must be a JSON object');
  for (const key of Object.keys(input)) {
    if (!(key in NO_FAULTS)) throw fieldError(key, `${key} is not a known fault; use ${Object.keys(NO_FAULTS).join(', ')}`);
  }
  const given = (/** @type {keyof Faults} */ key) => input[key] ?? NO_FAULTS[key];
  const throttlePerSecond = given('throttlePerSecond');
  if (throttlePerSecond !== null && !isIntegerIn(throttlePerSecond, 1, 1_000_000)) {
    throw fieldError('throttlePerSecond', 'throttlePerSecond must be a whole number from 1 to 1000000, or null for no limit');
  }
  const throttleCode = given('throttleCode');
  if (throttleCode !== 'Throttling' && throttleCode !== 'Throttled') {
    throw fieldError('throttleCode', 'throttleCode must be "Throttling" (400) or "Throttled" (429)');
  }
  const disabledEndpoints = given('disabledEndpoints');
  if (!Array.isArray(disabledEndpoints)) throw fieldError('disabledEndpoints', 'disabledEndpoints must be an array of endpoint ARNs');
  disabledEndpoints.forEach((arn, i) => {
    if (typeof arn !== 'string' || !ENDPOINT_ARN.test(arn)) {
      throw fieldError(`disabledEndpoints[${i}]`, `disabledEndpoints[${i}] is not an endpoint ARN: ${JSON.stringify(arn)}`);
    }
  });
  const latencyMs = normalizeLatency(given('latencyMs'));
  const errorShare = given('errorShare');
  if (typeof errorShare !== 'number' || !(errorShare >= 0 && errorShare <= 1)) {
    throw fieldError('errorShare', 'errorShare must be a number from 0 to 1');
  }
  const seed = given('seed');
  if (!isIntegerIn(seed, 0, 2 ** 32 - 1)) throw fieldError('seed', 'seed must be a whole number from 0 to 4294967295');
  const failEndpoints = normalizeFailures(given('failEndpoints'));
  return Object.freeze({
    throttlePerSecond: /** @type {number | null} */ (throttlePerSecond), throttleCode,
    disabledEndpoints: [...disabledEndpoints], latencyMs, errorShare, seed: /** @type {number} */ (seed), failEndpoints
  });
}

/** @param {unknown} value @returns {number | LatencyRange} */
function normalizeLatency(value) {
  if (isNumberIn(value, 0, MAX_LATENCY_MS)) return /** @type {number} */ (value);
  if (isPlainObject(value) && Object.keys(value).every((k) => k === 'min' || k === 'max')) {
    const { min, max } = value;
    if (isNumberIn(min, 0, MAX_LATENCY_MS) && isNumberIn(max, /** @type {number} */ (min), MAX_LATENCY_MS)) {
      return { min: /** @type {number} */ (min), max: /** @type {number} */ (max) };
    }
  }
  throw fieldError('latencyMs', `latencyMs must be a number of ms from 0 to ${MAX_LATENCY_MS}, or { "min": n, "max": m } with min <= max`);
}

/** @param {unknown} value @returns {Record<string, EndpointFailure>} */
function normalizeFailures(value) {
  if (!isPlainObject(value)) throw fieldError('failEndpoints', 'failEndpoints must be an object mapping endpoint ARNs to { code, status, message }');
  /** @type {Record<string, EndpointFailure>} */
  const failures = {};
  for (const [arn, failure] of Object.entries(value)) {
    const field = `failEndpoints[${JSON.stringify(arn)}]`;
    if (!ENDPOINT_ARN.test(arn)) throw fieldError(field, `${field}: the key is not an endpoint ARN`);
    if (!isPlainObject(failure) || typeof failure.code !== 'string' || !/^[A-Za-z][A-Za-z0-9.]{0,99}$/.test(failure.code)) {
      throw fieldError(`${field}.code`, `${field}.code must be an SNS error code such as "InvalidParameter"`);
    }
    const status = failure.status ?? 400;
    if (!isIntegerIn(status, 400, 599)) throw fieldError(`${field}.status`, `${field}.status must be an HTTP status from 400 to 599`);
    const message = failure.message ?? failure.code;
    if (typeof message !== 'string') throw fieldError(`${field}.message`, `${field}.message must be a string`);
    failures[arn] = { code: failure.code, status: /** @type {number} */ (status), message };
  }
  return failures;
}

/**
 * Admits at most `limit` calls in any sliding 1000-ms window. A ring of the last
 * `limit` admission times makes each check O(1): the oldest is the one to beat.
 * @param {number | null} limit
 */
export function createThrottle(limit) {
  if (limit === null) return { admit: (/** @type {number} */ _t) => true };
  const times = new Float64Array(limit);
  let next = 0, admitted = 0;
  return {
    /** @param {number} t */
    admit(t) {
      if (admitted < limit) admitted++;
      else if (times[next] > t - 1000) return false;
      times[next] = t;
      next = (next + 1) % limit;
      return true;
    }
  };
}

/** The delay for one answer: the fixed latency, or a uniform draw from the range. @param {number | LatencyRange} latency */
export function latencyOf(latency) {
  if (typeof latency === 'number') return latency;
  return latency.min + Math.random() * (latency.max - latency.min);
}

/** ARN lists are counted, not logged: endpoint ARNs identify a person's phone. @param {Faults} faults */
export function summarizeFaults(faults) {
  return { ...faults, disabledEndpoints: faults.disabledEndpoints.length, failEndpoints: Object.keys(faults.failEndpoints).length };
}

/** @param {string} field @param {string} message */
function fieldError(field, message) {
  return Object.assign(new InputError(`invalid fault config: ${message}`), { field });
}

/** True for a JSON object (not null, not an array). @param {unknown} value @returns {value is Record<string, any>} */
export function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** @param {unknown} value @param {number} min @param {number} max */
function isIntegerIn(value, min, max) {
  return Number.isInteger(value) && /** @type {number} */ (value) >= min && /** @type {number} */ (value) <= max;
}

/** @param {unknown} value @param {number} min @param {number} max */
function isNumberIn(value, min, max) {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}
