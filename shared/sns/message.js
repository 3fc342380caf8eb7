// Campaign messages: validation of message.json, and rendering into the SNS Message
// string for MessageStructure 'json' (a "default" text plus one JSON string per
// platform key). Validation renders every variant once, so a message that passes
// parseMessage cannot fail at send time for being too large.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { InputError } from '../errors.js';
import { PLATFORMS, canonicalLocale } from '../audience/device.js';

/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('../types.js').Platform} Platform */
/** @typedef {Record<string, { DataType: 'String', StringValue: string }>} MessageAttributes */

/** APNs rejects payloads over 4 KB; FCM's limit for notification plus data is the same. */
export const PAYLOAD_LIMIT_BYTES = 4096;
/** FCM keeps an undelivered message at most 28 days; APNs has no lower cap worth a second rule. */
export const MAX_TTL_SECONDS = 2_419_200;

const FIELDS = ['title', 'body', 'locales', 'data', 'deepLink', 'ttlSeconds', 'sound', 'badge'];
// Keys FCM reserves in data, plus the two this renderer places next to the data on APNs.
const RESERVED_DATA_KEYS = new Set(['from', 'notification', 'message_type', 'collapse_key', 'aps', 'deepLink']);

/**
 * Reads and validates a message file (pushctl send --message, schedule add --message).
 * An unreadable file is an InputError naming the option and the path.
 * @param {string} path
 * @returns {Promise<Message>}
 */
export async function readMessageFile(path) {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = /** @type {any} */ (error).code === 'ENOENT' ? 'no such file' : /** @type {Error} */ (error).message;
    throw new InputError(`--message ${path}: cannot read the file (${reason})`, { cause: error });
  }
  return parseMessage(text, basename(path));
}

/**
 * Parses and validates message.json. Every problem is an InputError naming `source`
 * and the field (`message.json: locales.fi.body must be a string`); unknown fields are
 * errors too, so a misspelt "titel" does not silently send a message without a title.
 * @param {string} jsonText
 * @param {string} [source] the file name used in messages
 * @returns {Message}
 */
export function parseMessage(jsonText, source = 'message.json') {
  /** @param {string} problem */
  const fail = (problem) => new InputError(`${source}: ${problem}`);
  let input;
  try {
    input = JSON.parse(jsonText);
  } catch (error) {
    throw new InputError(`${source}: not valid JSON (${/** @type {Error} */ (error).message})`, { cause: error });
  }
  if (!isObject(input)) throw fail('must be a JSON object with at least "title" and "body"');
  for (const key of Object.keys(input)) {
    if (!FIELDS.includes(key)) throw fail(`unknown field "${key}"; the fields are ${FIELDS.join(', ')}`);
  }

  /** @type {Message} */
  const message = { title: requiredText(input, 'title', fail), body: requiredText(input, 'body', fail) };

  if (input.locales !== undefined) message.locales = parseLocales(input.locales, fail);
  if (input.data !== undefined) {
    if (!isObject(input.data)) throw fail('data must be an object of string values');
    /** @type {Record<string, string>} */
    const data = {};
    for (const [key, value] of Object.entries(input.data)) {
      if (RESERVED_DATA_KEYS.has(key) || key.startsWith('google.') || key.startsWith('gcm.')) {
        throw fail(`data.${key} is a reserved key on APNs or FCM; choose another name`);
      }
      if (typeof value !== 'string') throw fail(`data.${key} must be a string (FCM delivers data values only as strings)`);
      data[key] = value;
    }
    message.data = data;
  }
  if (input.deepLink !== undefined) {
    const deepLink = input.deepLink;
    if (typeof deepLink !== 'string' || !URL.canParse(deepLink)) {
      throw fail('deepLink must be an absolute URL such as "myapp://offers/42" or "https://example.com/offers/42"');
    }
    message.deepLink = deepLink;
  }
  if (input.ttlSeconds !== undefined) {
    const ttl = input.ttlSeconds;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > MAX_TTL_SECONDS) {
      throw fail(`ttlSeconds must be a whole number of seconds from 0 to ${MAX_TTL_SECONDS} (28 days)`);
    }
    message.ttlSeconds = ttl;
  }
  if (input.sound !== undefined) message.sound = requiredText(input, 'sound', fail);
  if (input.badge !== undefined) {
    const badge = input.badge;
    if (typeof badge !== 'number' || !Number.isInteger(badge) || badge < 0 || badge > 2_147_483_647) throw fail('badge must be a whole number, 0 or more (0 clears the badge)');
    message.badge = badge;
  }

  validateMessageSize(message, source);
  return message;
}

/**
 * @param {unknown} locales
 * @param {(problem: string) => InputError} fail
 * @returns {NonNullable<Message['locales']>}
 */
function parseLocales(locales, fail) {
  if (!isObject(locales)) throw fail('locales must be an object keyed by language tag, e.g. { "fi": { "title": "...", "body": "..." } }');
  /** @type {NonNullable<Message['locales']>} */
  const parsed = {};
  /** @type {Map<string, string>} */
  const seen = new Map();
  for (const [tag, variant] of Object.entries(locales)) {
    const canonical = canonicalLocale(tag);
    if (canonical === null) throw fail(`locales."${tag}" is not a language tag like "fi" or "pt-BR"`);
    // Lookup ignores case, so "pt-BR" and "pt-br" would be the same variant twice.
    const earlier = seen.get(canonical.toLowerCase());
    if (earlier !== undefined) throw fail(`locales has both "${earlier}" and "${tag}"; keep one`);
    seen.set(canonical.toLowerCase(), tag);
    const path = `locales.${tag}`;
    if (!isObject(variant)) throw fail(`${path} must be an object with a title and/or a body`);
    for (const key of Object.keys(variant)) {
      if (key !== 'title' && key !== 'body') throw fail(`${path}: unknown field "${key}"; a locale has only title and body`);
    }
    /** @type {{ title?: string, body?: string }} */
    const text = {};
    for (const key of /** @type {const} */ (['title', 'body'])) {
      const value = variant[key];
      if (value === undefined) continue;
      if (typeof value !== 'string') throw fail(`${path}.${key} must be a string`);
      if (value.trim() === '') throw fail(`${path}.${key} is empty; leave it out to fall back to the default`);
      text[key] = value;
    }
    if (text.title === undefined && text.body === undefined) throw fail(`${path} needs a title or a body`);
    parsed[canonical] = text;
  }
  return parsed;
}

/**
 * Checks that every platform's payload, in the default and in every locale variant,
 * fits the 4096-byte limit of APNs and FCM. parseMessage runs it; a message built in
 * code can run it too.
 * @param {Message} message
 * @param {string} [source]
 */
export function validateMessageSize(message, source = 'message.json') {
  const lookup = localeLookup(message);
  for (const locale of [undefined, ...Object.keys(message.locales ?? {})]) {
    const text = resolveText(message, lookup, locale);
    for (const platform of PLATFORMS) {
      const bytes = Buffer.byteLength(platformPayload(message, platform, text));
      if (bytes > PAYLOAD_LIMIT_BYTES) {
        const where = locale === undefined ? 'the default locale' : `locale "${locale}"`;
        throw new InputError(`${source}: the ${platform} payload for ${where} is ${bytes} bytes; the limit is ${PAYLOAD_LIMIT_BYTES} (shorten the title, body or data)`);
      }
    }
  }
}

/**
 * The SNS `Message` for MessageStructure 'json': `default` is the body text, and the
 * platform's key holds its payload as a JSON string. The locale falls back from the
 * exact tag (any case) to its language, then to the top-level title and body, field
 * by field: a variant with only a body keeps the fallback's title.
 * @param {Message} message
 * @param {Platform} platform
 * @param {string} [locale] the device's locale
 * @returns {string}
 */
export function renderForPlatform(message, platform, locale) {
  const text = resolveText(message, localeLookup(message), locale);
  return JSON.stringify({ default: text.body, [platform]: platformPayload(message, platform, text) });
}

/**
 * SNS MessageAttributes carrying the time to live for every platform, or undefined
 * when the message has none (the platforms' defaults then apply).
 * @param {Message} message
 * @returns {MessageAttributes | undefined}
 */
export function messageAttributes(message) {
  return message.ttlSeconds === undefined ? undefined : ttlAttributes(message.ttlSeconds);
}

/**
 * The TTL message attributes SNS passes on to APNs and FCM (names from the SNS
 * developer guide, "time to live message attribute for mobile push": FCM is the
 * current name of what the message body still calls GCM). SNS gives an attribute
 * TTL precedence over a TTL in the payload. 0 means "deliver now or never" to APNs and FCM.
 * @param {number} seconds a whole number, 0 or more
 * @returns {MessageAttributes}
 */
export function ttlAttributes(seconds) {
  const ttl = { DataType: /** @type {const} */ ('String'), StringValue: String(seconds) };
  return {
    'AWS.SNS.MOBILE.APNS.TTL': ttl,
    'AWS.SNS.MOBILE.APNS_SANDBOX.TTL': { ...ttl },
    'AWS.SNS.MOBILE.FCM.TTL': { ...ttl }
  };
}

/**
 * A renderer for one message: `(platform, locale) => { message, attributes }`. The
 * worker calls it once per send, so after the first call for a platform and locale
 * it is one Map lookup. Results are frozen and shared between calls.
 * @param {Message} message
 * @returns {(platform: Platform, locale?: string) => Readonly<{ message: string, attributes: MessageAttributes | undefined }>}
 */
export function createRenderer(message) {
  const lookup = localeLookup(message);
  const attributes = messageAttributes(message);
  if (attributes) for (const value of [attributes, ...Object.values(attributes)]) Object.freeze(value);
  /** @type {Record<string, Map<string, Readonly<{ message: string, attributes: MessageAttributes | undefined }>>>} */
  const cache = {};
  for (const platform of PLATFORMS) cache[platform] = new Map();

  return (platform, locale) => {
    const byLocale = cache[platform];
    if (byLocale === undefined) throw new TypeError(`unknown platform ${platform}`);
    const key = locale ?? '';
    let rendered = byLocale.get(key);
    if (rendered === undefined) {
      const text = resolveText(message, lookup, locale);
      rendered = Object.freeze({
        message: JSON.stringify({ default: text.body, [platform]: platformPayload(message, platform, text) }),
        attributes
      });
      // Device locales are canonical tags, a few hundred at most; the bound only
      // guards against a pathological audience.
      if (byLocale.size < 10_000) byLocale.set(key, rendered);
    }
    return rendered;
  };
}

/**
 * The platform's payload as a JSON string (the value of its key in the SNS message).
 * @param {Message} message
 * @param {Platform} platform
 * @param {{ title: string, body: string }} text
 */
function platformPayload(message, platform, text) {
  if (platform === 'GCM') {
    /** @type {Record<string, unknown>} */
    const payload = { notification: { title: text.title, body: text.body } };
    if (message.data !== undefined || message.deepLink !== undefined) {
      payload.data = message.deepLink === undefined ? { ...message.data } : { ...message.data, deepLink: message.deepLink };
    }
    if (message.ttlSeconds !== undefined) payload.time_to_live = message.ttlSeconds;
    return JSON.stringify(payload);
  }
  /** @type {Record<string, unknown>} */
  const aps = { alert: { title: text.title, body: text.body } };
  if (message.sound !== undefined) aps.sound = message.sound;
  if (message.badge !== undefined) aps.badge = message.badge;
  /** @type {Record<string, unknown>} */
  const payload = { aps, ...message.data };
  if (message.deepLink !== undefined) payload.deepLink = message.deepLink;
  return JSON.stringify(payload);
}

/**
 * Locale variants keyed by lower-case tag, for lookups that ignore case.
 * @param {Message} message
 * @returns {Map<string, { title?: string, body?: string }>}
 */
function localeLookup(message) {
  return new Map(Object.entries(message.locales ?? {}).map(([tag, variant]) => [tag.toLowerCase(), variant]));
}

/**
 * @param {Message} message
 * @param {Map<string, { title?: string, body?: string }>} lookup
 * @param {string | undefined} locale
 * @returns {{ title: string, body: string }}
 */
function resolveText(message, lookup, locale) {
  if (!locale || lookup.size === 0) return { title: message.title, body: message.body };
  const tag = locale.replaceAll('_', '-').toLowerCase();
  const exact = lookup.get(tag);
  const dash = tag.indexOf('-');
  const language = dash === -1 ? undefined : lookup.get(tag.slice(0, dash));
  return {
    title: exact?.title ?? language?.title ?? message.title,
    body: exact?.body ?? language?.body ?? message.body
  };
}

/**
 * @param {Record<string, unknown>} input
 * @param {string} field
 * @param {(problem: string) => InputError} fail
 */
function requiredText(input, field, fail) {
  const value = input[field];
  if (value === undefined || value === null) throw fail(`${field} is missing`);
  if (typeof value !== 'string') throw fail(`${field} must be a string`);
  if (value.trim() === '') throw fail(`${field} is empty`);
  return value;
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
