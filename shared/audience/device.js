// Validation of one audience record (a CSV line, an NDJSON object, a PostgreSQL row)
// into a Device. Every source funnels through parseDevice (or parseDeviceFields), so a
// device is valid in the same way whichever source it came from.

import { canonicalTimezone } from '../zoned-time.js';

/** @typedef {import('../types.js').Device} Device */
/** @typedef {import('../types.js').Platform} Platform */

/** Platforms a device may name, in the order reasons list them. */
export const PLATFORMS = /** @type {const} */ (['APNS', 'APNS_SANDBOX', 'GCM']);
const PLATFORM_SET = new Set(/** @type {readonly string[]} */ (PLATFORMS));

// Field names compared without case, "_", "-" or spaces, so "endpoint_arn" (a
// PostgreSQL column), "EndpointArn" (an export from the AWS console) and "endpointArn"
// all land on the same Device field.
const FIELD_NAMES = new Map([
  ['endpointarn', 'endpointArn'],
  ['platform', 'platform'],
  ['userid', 'userId'],
  ['locale', 'locale'],
  ['timezone', 'timezone']
]);

// Caches below are bounded: a hostile or broken file with a million distinct values
// must not turn a cache into the memory problem streaming was meant to avoid.
const CACHE_LIMIT = 10_000;

/** @type {Map<string, string | null>} */
const fieldNameCache = new Map();

/**
 * The Device field a column or key name stands for ("endpoint_arn" → "endpointArn"),
 * or undefined when the name is not one of them (extra columns are ignored).
 * @param {string} name
 * @returns {'endpointArn' | 'platform' | 'userId' | 'locale' | 'timezone' | undefined}
 */
export function canonicalField(name) {
  let field = fieldNameCache.get(name);
  if (field === undefined) {
    field = FIELD_NAMES.get(name.toLowerCase().replace(/[\s_-]/g, '')) ?? null;
    if (fieldNameCache.size < CACHE_LIMIT) fieldNameCache.set(name, field);
  }
  return /** @type {any} */ (field ?? undefined);
}

// arn:<partition>:sns:<region>:<account>:endpoint/<platform>/<application>/<id>.
// The partition may be aws, aws-cn or aws-us-gov; the platform segment is captured to
// check it against the platform field.
const ENDPOINT_ARN = /^arn:aws(?:-[a-z]+)*:sns:[a-z]{2}(?:-[a-z]+)+-\d+:\d{12}:endpoint\/([A-Z_]+)\/[^/\s]+\/[^/\s]+$/;

/**
 * The platform an SNS platform endpoint ARN names (`...:endpoint/GCM/app/id` → 'GCM'), or
 * null when the text is not such an ARN. Whether pushpace sends to that platform is
 * parseDeviceFields's to say.
 * @param {string} arn
 */
export function endpointArnPlatform(arn) {
  return ENDPOINT_ARN.exec(arn)?.[1] ?? null;
}

const INVALID = Symbol('invalid');

/** @type {Map<string, string | null>} */
const localeCache = new Map();

/**
 * Validates one record into a device, or says why it was skipped. `line` is the 1-based
 * line (file) or row (query) number the record came from. Field names may be written
 * any way canonicalField accepts; other fields are ignored.
 * @param {unknown} record a plain object, such as a parsed NDJSON line
 * @param {number} line
 * @returns {{ device: Device, line: number } | { skipped: { line: number, reason: string } }}
 */
export function parseDevice(record, line) {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return skip(line, 'not an object with endpointArn and platform fields');
  }
  /** @type {DeviceFields} */
  const fields = {};
  const source = /** @type {Record<string, unknown>} */ (record);
  for (const key of Object.keys(source)) {
    const name = canonicalField(key);
    // With both endpointArn and endpoint_arn present, the first non-empty one wins.
    if (name !== undefined && isEmpty(fields[name])) fields[name] = source[key];
  }
  return parseDeviceFields(fields, line);
}

/**
 * Values keyed by Device field name, as the CSV and query sources build them after
 * mapping their columns once.
 * @typedef {{ endpointArn?: unknown, platform?: unknown, userId?: unknown, locale?: unknown, timezone?: unknown }} DeviceFields
 */

/**
 * parseDevice for a record whose keys are already Device field names; the sources
 * use it to skip the per-key name mapping on every line.
 * @param {DeviceFields} fields
 * @param {number} line
 * @returns {{ device: Device, line: number } | { skipped: { line: number, reason: string } }}
 */
export function parseDeviceFields(fields, line) {
  const endpointArn = text(fields.endpointArn);
  if (endpointArn === undefined) return skip(line, 'endpointArn is missing');
  if (endpointArn === INVALID) return skip(line, 'endpointArn must be a string');
  const arnMatch = ENDPOINT_ARN.exec(endpointArn);
  // The ARN itself is not quoted: it identifies a person's phone, and reasons end up
  // in logs and reports.
  if (arnMatch === null) {
    return skip(line, 'endpointArn is not an SNS platform endpoint ARN (arn:aws:sns:<region>:<account>:endpoint/<platform>/<app>/<id>)');
  }

  const platformText = text(fields.platform);
  if (platformText === undefined) return skip(line, 'platform is missing');
  if (platformText === INVALID) return skip(line, 'platform must be a string');
  const platform = platformText.toUpperCase();
  if (!PLATFORM_SET.has(platform)) {
    return skip(line, `platform ${quote(platformText)} is not one of ${PLATFORMS.join(', ')}`);
  }
  // SNS picks the payload by the endpoint's own platform; a mismatch would send the
  // "default" text instead of the notification the renderer built for this platform.
  if (arnMatch[1] !== platform) {
    return skip(line, `platform ${platform} does not match the endpoint ARN, which is a ${arnMatch[1]} endpoint`);
  }

  /** @type {Device} */
  const device = { endpointArn, platform: /** @type {Platform} */ (platform) };

  const userId = text(fields.userId);
  if (userId === INVALID) return skip(line, 'userId must be a string');
  if (userId !== undefined) device.userId = userId;

  const localeText = text(fields.locale);
  if (localeText === INVALID) return skip(line, 'locale must be a string');
  if (localeText !== undefined) {
    const locale = canonicalLocale(localeText);
    if (locale === null) return skip(line, `locale ${quote(localeText)} is not a language tag like "fi" or "pt-BR"`);
    device.locale = locale;
  }

  const timezoneText = text(fields.timezone);
  if (timezoneText === INVALID) return skip(line, 'timezone must be a string');
  if (timezoneText !== undefined) {
    const timezone = canonicalTimezone(timezoneText);
    if (timezone === null) return skip(line, `timezone ${quote(timezoneText)} is not an IANA time zone like "Europe/Helsinki"`);
    device.timezone = timezone;
  }

  return { device, line };
}

/**
 * The canonical form of a BCP 47 tag ("pt_br" → "pt-BR"), or null when it is not one.
 * Underscores are accepted because Android and Java write locales that way.
 * @param {string} tag
 * @returns {string | null}
 */
export function canonicalLocale(tag) {
  let canonical = localeCache.get(tag);
  if (canonical === undefined) {
    try {
      canonical = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/.test(tag)
        ? Intl.getCanonicalLocales(tag.replaceAll('_', '-'))[0] ?? null
        : null;
    } catch {
      canonical = null;
    }
    if (localeCache.size < CACHE_LIMIT) localeCache.set(tag, canonical);
  }
  return canonical;
}

/**
 * A trimmed string, undefined for absent or empty values, INVALID for values that
 * cannot be text. Numbers are accepted because a user_id column is often an integer.
 * @param {unknown} value
 * @returns {string | undefined | typeof INVALID}
 */
function text(value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed === '' ? undefined : trimmed;
  }
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return String(value);
  return INVALID;
}

/** @param {unknown} value */
function isEmpty(value) {
  return value === undefined || value === null || value === '';
}

/**
 * A value for a reason, cut short so one absurd field cannot flood a report.
 * @param {string} value
 */
function quote(value) {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/**
 * @param {number} line
 * @param {string} reason
 */
function skip(line, reason) {
  return { skipped: { line, reason } };
}
