// When a campaign may send: a local wall-clock time per device time zone, and a
// deadline after which nothing is sent. pushctl send, schedule add and the scheduler
// all turn their text options into a CampaignTiming here, once, so a bad value gets
// the same message (naming the option) from each; everything after (the release plan,
// the enqueue) takes the parsed value. Nothing here touches Redis.
import { InputError } from '../errors.js';
import { checkTimezone } from '../zoned-time.js';
import { parseLocalTime } from './local-time.js';

/** @typedef {import('./local-time.js').LocalTime} LocalTime */

/**
 * @typedef {object} CampaignTiming a launch's timing, parsed and checked
 * @property {number | null} deadlineAt  absolute deadline, ms since the epoch
 * @property {number | null} ttlMs       time to live from each device group's start (the campaign's start, or its zone's release)
 * @property {LocalTime | null} localTime  the wall-clock time in each device's time zone; null sends at once
 * @property {string} defaultTimezone    the canonical zone of devices that name none
 */

/**
 * The option names used in messages; the scheduler may call them differently.
 * @typedef {{ deadline: string, ttl: string, localTime: string, defaultTimezone: string }} OptionNames
 */
const FLAGS = /** @type {OptionNames} */ ({ deadline: '--deadline', ttl: '--ttl', localTime: '--local-time', defaultTimezone: '--default-timezone' });

const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1000, 1];
// A zone designator is required: "18:00" alone would mean whatever zone the process
// runs in (UTC on Heroku), rarely what the person typing it meant.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A duration such as 90m, 2h, 1h30m, 45s, 1d or 1500ms, in ms; null when it is not one.
 * @param {string} text
 */
export function parseDuration(text) {
  const match = DURATION.exec(text.trim());
  if (!match || match.slice(1).every((part) => part === undefined)) return null;
  let ms = 0;
  for (let i = 0; i < UNIT_MS.length; i++) if (match[i + 1] !== undefined) ms += Number(match[i + 1]) * UNIT_MS[i];
  return Number.isSafeInteger(ms) ? ms : null;
}

/**
 * An ISO 8601 date-time with a zone designator (2025-06-01T18:00Z,
 * 2025-06-01T20:00:00+02:00), in ms since the epoch; null when it is not one,
 * including impossible dates such as February 30 (Date.parse would roll them over).
 * @param {string} text
 */
export function parseInstant(text) {
  const match = INSTANT.exec(text.trim());
  if (!match) return null;
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number);
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day || hour > 23 || minute > 59 || Number(match[6] ?? 0) > 59) return null;
  const ms = Date.parse(text.trim().replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isFinite(ms) ? ms : null;
}

/**
 * Validates timing options given as text and returns them parsed. Every
 * error is an InputError naming the option: a deadline in the past, a TTL of zero or
 * less, an unknown zone, a wall time that is not HH:MM[:SS].
 * @param {{ deadline?: string, ttl?: string, localTime?: string, defaultTimezone?: string }} options
 * @param {{ now: number, defaultTimezone: string, names?: Partial<OptionNames> }} context
 *   defaultTimezone: DEFAULT_TIMEZONE from the config, used when the option is absent
 * @returns {CampaignTiming}
 */
export function parseCampaignTiming(options, { now, defaultTimezone, names = {} }) {
  const flag = { ...FLAGS, ...names };
  /** @type {number | null} */
  let deadlineAt = null;
  if (options.deadline !== undefined) {
    deadlineAt = parseInstant(options.deadline);
    if (deadlineAt === null) {
      throw new InputError(`${flag.deadline} must be an ISO 8601 time with a zone, like 2025-06-01T18:00:00Z or 2025-06-01T20:00+02:00; got "${options.deadline}"`);
    }
    if (deadlineAt <= now) {
      throw new InputError(`${flag.deadline} ${options.deadline} is in the past (it is now ${new Date(now).toISOString()}); nothing was enqueued`);
    }
  }
  /** @type {number | null} */
  let ttlMs = null;
  if (options.ttl !== undefined) {
    ttlMs = parseDuration(options.ttl);
    const negative = ttlMs === null && parseDuration(options.ttl.trim().replace(/^-/, '')) !== null;
    if (negative) throw new InputError(`${flag.ttl} must be longer than zero; got "${options.ttl}"`);
    if (ttlMs === null) throw new InputError(`${flag.ttl} must be a duration like 90m, 2h, 1h30m or 45s; got "${options.ttl}"`);
    if (ttlMs <= 0) throw new InputError(`${flag.ttl} must be longer than zero; got "${options.ttl}"`);
  }
  /** @type {LocalTime | null} */
  let localTime = null;
  if (options.localTime !== undefined) {
    localTime = parseLocalTime(options.localTime);
    if (localTime === null) throw new InputError(`${flag.localTime} must be a 24-hour wall-clock time HH:MM or HH:MM:SS, like 09:00; got "${options.localTime}"`);
  }
  let zone = defaultTimezone;
  if (options.defaultTimezone !== undefined) {
    if (localTime === null) throw new InputError(`${flag.defaultTimezone} only applies with ${flag.localTime}`);
    zone = checkTimezone(options.defaultTimezone, flag.defaultTimezone);
  }
  return { deadlineAt, ttlMs, localTime, defaultTimezone: zone };
}

/**
 * The deadline of devices whose sending starts at `startAt` (the campaign's start, or
 * their zone's release): the earlier of the absolute deadline and startAt + TTL.
 * @param {{ deadlineAt: number | null, ttlMs: number | null }} timing
 * @param {number} startAt
 * @returns {number | null}
 */
export function deadlineFor({ deadlineAt, ttlMs }, startAt) {
  const fromTtl = ttlMs === null ? null : startAt + ttlMs;
  if (deadlineAt === null) return fromTtl;
  return fromTtl === null ? deadlineAt : Math.min(deadlineAt, fromTtl);
}
