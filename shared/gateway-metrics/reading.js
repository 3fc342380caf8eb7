// The shape every gateway metric source answers with, and the few rules they share.
import { InputError } from '../errors.js';

/**
 * One gateway window as a source measured it. A field is null when the source has no value
 * for it (Prometheus answered NaN or an empty vector; no requests in the window, so no
 * latency quantile). Note that the pacing controller uses a sample only when the latency
 * and error fields are numbers (the governor fills a missing p99 and error ratio); a null
 * rps means latency-only, and the controller reads the load off the latency.
 * @typedef {object} GatewayMeasurement
 * @property {number | null} p95Ms
 * @property {number | null} p99Ms
 * @property {number | null} errorRatio  failed / all requests in the window, 0..1
 * @property {number | null} rps         requests per second over the window; always null from a
 *   source that sees latency only (the active probe)
 */

/**
 * What `read()` answers. `gateway` is null whenever `stale` is true or the source could not
 * measure (then `error` says why). `ageMs` is how old the data behind the answer is:
 * Infinity when the source has never had any.
 * @typedef {object} GatewayReading
 * @property {GatewayMeasurement | null} gateway
 * @property {boolean} stale
 * @property {number} ageMs
 * @property {string} [error]
 * @property {number} [probes]  the active probe: results in the window behind the answer
 */

/**
 * The interface of every source.
 * @typedef {object} GatewayMetricSource
 * @property {() => Promise<GatewayReading>} read
 * @property {() => Promise<void>} close
 */

/**
 * A reading without a measurement. Stale when the last good data is older than allowed.
 * @param {number} ageMs
 * @param {number} staleAfterMs
 * @param {string} [error]
 * @returns {GatewayReading}
 */
export function unavailable(ageMs, staleAfterMs, error) {
  /** @type {GatewayReading} */
  const reading = { gateway: null, stale: !(ageMs <= staleAfterMs), ageMs };
  if (error !== undefined) reading.error = error;
  return reading;
}

/**
 * A number, or null for NaN, ±Infinity and anything that is not a number.
 * @param {unknown} value
 * @returns {number | null}
 */
export function finiteOrNull(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * A message for any thrown value.
 * @param {unknown} err
 */
export function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Checks that an option is a positive finite number.
 * @param {string} name
 * @param {unknown} value
 */
export function positive(name, value) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InputError(`${name} must be a positive number, got ${value}`);
  }
  return value;
}
