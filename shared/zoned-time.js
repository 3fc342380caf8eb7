// Wall-clock time in IANA time zones, computed with Intl only (no time-zone library):
// which zone names are valid, an instant's local date and time, and the instant a local
// date and time stands for. Local-time delivery (local-time.js), the scheduler's cron
// and one-off times (scheduler/) and the audience readers all use this one module, so
// "02:30 on the spring-forward day" means the same instant everywhere.
//
// The product's one rule for clock changes is cron(8)'s (Vixie/ISC cron):
//   - a local time the clocks skip (spring forward) means the instant they jump:
//     02:30 in New York on 9 March 2025 is 03:00 EDT, 03:30 in Helsinki on 30 March
//     2025 is 04:00 EEST;
//   - a local time the clocks repeat (fall back) means its first occurrence.
// The jump is the first instant at which the clock reads the asked-for time or later.
// Temporal's 'compatible' rule (calendars') would move a skipped 02:30 forward by the gap,
// to 03:30 EDT: an hour after the clocks passed 02:30, and unlike what cron users expect.
import { InputError } from './errors.js';

/** @typedef {{ year: number, month: number, day: number, hour: number, minute: number, second: number }} LocalDateTime */
/**
 * The offsets in force around a wall-clock moment: one steady offset (`at` null), or
 * the offsets before and after the one change near it, and the instant it happens.
 * @typedef {{ before: number, after: number, at: number | null }} ZoneOffsets
 */

const DAY_MS = 86_400_000;
// Caches are bounded: a hostile or broken audience file with a million distinct zone
// values must not turn a cache into the memory problem streaming was meant to avoid.
const CACHE_LIMIT = 10_000;

/** @type {Map<string, string | null>} */
const canonicalCache = new Map();
/** @type {Map<string, Intl.DateTimeFormat>} */
const formatters = new Map();

/**
 * The canonical IANA name of a time zone ("europe/helsinki" → "Europe/Helsinki"), or
 * null when ICU does not know it. Constructing a DateTimeFormat costs tens of
 * microseconds, far more than the rest of an audience line, hence the cache.
 * @param {string} name
 * @returns {string | null}
 */
export function canonicalTimezone(name) {
  let canonical = canonicalCache.get(name);
  if (canonical === undefined) {
    try {
      canonical = new Intl.DateTimeFormat(undefined, { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      canonical = null;
    }
    if (canonicalCache.size < CACHE_LIMIT) canonicalCache.set(name, canonical);
  }
  return canonical;
}

/**
 * The canonical name of a zone a person typed, or an InputError naming the option.
 * @param {string} name
 * @param {string} option  e.g. '--timezone', '--default-timezone'
 */
export function checkTimezone(name, option) {
  const canonical = canonicalTimezone(name.trim());
  if (canonical === null) {
    throw new InputError(`${option} "${name}" is not an IANA time zone such as Europe/Helsinki, America/New_York or UTC`);
  }
  return canonical;
}

/**
 * The local date and time of an instant in a zone, to the second.
 * @param {number} ms
 * @param {string} timeZone canonical IANA name
 * @returns {LocalDateTime}
 */
export function localTimeOf(ms, timeZone) {
  /** @type {Record<string, number>} */
  const parts = {};
  for (const part of formatterFor(timeZone).formatToParts(ms)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/**
 * The zone's offset from UTC at an instant, in ms (Helsinki in summer: +3 h).
 * @param {number} ms
 * @param {string} timeZone
 */
export function offsetAt(ms, timeZone) {
  const wholeSecond = Math.floor(ms / 1000) * 1000;
  return utcOf(localTimeOf(wholeSecond, timeZone)) - wholeSecond;
}

/**
 * A local date and time read as if it were UTC: the "wall-clock number" offsets apply to.
 * @param {LocalDateTime} t
 */
export function utcOf(t) {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

/**
 * The offsets in force around a wall-clock moment (a local time read as UTC): either
 * one steady offset, or the one change of offset within 36 h either side of it, with
 * the instant it happens. Zones change their offset at most a few times a year, never
 * twice within three days, so one change is all there can be.
 * @param {number} wall
 * @param {string} timeZone
 * @returns {ZoneOffsets}
 */
export function offsetsAround(wall, timeZone) {
  // Instants whose local time is near this wall moment lie within ±14 h of it (the widest
  // offsets); the scheduler passes a day's noon for the whole day, hence ±36 h.
  let lo = Math.floor((wall - 1.5 * DAY_MS) / 1000);
  let hi = Math.ceil((wall + 1.5 * DAY_MS) / 1000);
  const before = offsetAt(lo * 1000, timeZone);
  const after = offsetAt(hi * 1000, timeZone);
  if (before === after) return { before, after, at: null };
  // Binary search, to the second, for the first instant with the new offset.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * 1000, timeZone) === before) lo = mid;
    else hi = mid;
  }
  return { before, after, at: hi * 1000 };
}

/**
 * The instants at which the zone's clocks actually read a wall-clock moment, earliest
 * first: none when the clocks skip it (spring forward), two when they repeat it (fall
 * back). Interval schedules use this as it is: they follow elapsed time.
 * @param {number} wall  the local time read as UTC (utcOf)
 * @param {ZoneOffsets} offsets  from offsetsAround, near `wall`
 * @returns {number[]}
 */
export function instantsAt(wall, { before, after, at }) {
  if (at === null) return [wall - before];
  const instants = [];
  // Read with the old offset it must fall before the change, with the new one after it.
  if (wall - before < at) instants.push(wall - before);
  if (wall - after >= at) instants.push(wall - after);
  return instants;
}

/**
 * The instants a wall-clock moment means by the product's rule (top of this file),
 * earliest first: a skipped time means the instant the clocks jump; a repeated time
 * has both occurrences (a fixed time takes the first; local-time delivery takes the
 * first still ahead of the launch).
 * @param {number} wall
 * @param {ZoneOffsets} offsets
 * @returns {number[]}
 */
export function wallTimeInstants(wall, offsets) {
  const instants = instantsAt(wall, offsets);
  return instants.length > 0 ? instants : [/** @type {number} */ (offsets.at)];
}

/**
 * The one instant a local date and time in a zone means: its first occurrence, or the
 * jump when the clocks skip it.
 * @param {LocalDateTime} local
 * @param {string} timeZone
 */
export function instantOf(local, timeZone) {
  const wall = utcOf(local);
  return wallTimeInstants(wall, offsetsAround(wall, timeZone))[0];
}

/**
 * Parses "2025-06-01T12:00", "2025-06-01 12:00:30" (local time in `timeZone`, by the
 * rule at the top) or an ISO time with an offset ("2025-06-01T09:00:00Z", "...+03:00",
 * taken as is). Null when the text is neither.
 * @param {string} text
 * @param {string} timeZone
 * @returns {number | null}
 */
export function parseZonedTime(text, timeZone) {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?$/i.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour, minute, second = '0', zone] = match;
  /** @type {LocalDateTime} */
  const local = { year: +year, month: +month, day: +day, hour: +hour, minute: +minute, second: +second };
  const wall = utcOf(local);
  // Date.UTC rolls 31 April over into May; a real date reads back unchanged.
  const check = new Date(wall);
  if (check.getUTCMonth() + 1 !== local.month || check.getUTCDate() !== local.day || local.hour > 23 || local.minute > 59 || local.second > 59) return null;
  if (zone) {
    if (zone.toUpperCase() === 'Z') return wall;
    const [, sign, hh, mm] = /** @type {RegExpExecArray} */ (/^([+-])(\d{2}):?(\d{2})$/.exec(zone));
    return wall - (sign === '-' ? -1 : 1) * (Number(hh) * 60 + Number(mm)) * 60_000;
  }
  return instantOf(local, timeZone);
}

/**
 * "2025-06-02 09:00 Europe/Helsinki (+03:00)"-style text of an instant in a zone, for people.
 * @param {number} ms
 * @param {string} timeZone
 */
export function formatZoned(ms, timeZone) {
  const t = localTimeOf(ms, timeZone);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  const seconds = t.second ? `:${pad(t.second)}` : '';
  const offset = offsetAt(ms, timeZone) / 60_000;
  const sign = offset < 0 ? '-' : '+';
  const zone = offset === 0 ? 'Z' : `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${t.year}-${pad(t.month)}-${pad(t.day)} ${pad(t.hour)}:${pad(t.minute)}${seconds} ${timeZone} (${zone})`;
}

/** @param {string} timeZone */
function formatterFor(timeZone) {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric',
      hour: 'numeric', minute: 'numeric', second: 'numeric'
    });
    // Keyed by canonical names, a few hundred at most; the bound guards against callers that are not.
    if (formatters.size >= CACHE_LIMIT) formatters.clear();
    formatters.set(timeZone, formatter);
  }
  return formatter;
}
