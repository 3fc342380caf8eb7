// What a schedule is, and the checks that make one: when it fires (a cron expression
// in an IANA time zone, or one instant), what happens to fires no scheduler got to in
// time, and the stored pushctl send options it launches. Pure: the clock is a parameter.
import { randomBytes } from 'node:crypto';
import { InputError } from '../errors.js';
import { parseDuration } from '../campaign/campaign-timing.js';
import { parseCron, nextCronFire, cronFiresBetween, shortestCronGapMs } from './cron-expression.js';
import { checkTimezone, parseZonedTime, formatZoned } from '../zoned-time.js';

/** @typedef {import('../types.js').Message} Message */

/**
 * @typedef {object} Schedule
 * @property {string} id
 * @property {string | null} cron        a cron expression, or null for a one-off
 * @property {number | null} at          a one-off's instant (ms), or null
 * @property {string} timeZone           canonical IANA name the cron expression is read in
 * @property {'skip' | 'catch-up'} missed  what happens to a fire no scheduler launched on time
 * @property {number} graceMs            catch-up: how late the latest missed fire may still be launched
 * @property {Record<string, string | boolean>} send  pushctl send's options (audience as an absolute
 *   path, or query; name; rate; strict; and any other send flag), replayed at each fire
 * @property {Message} message           parsed when the schedule was added: a later edit of the file changes nothing
 * @property {string} messageSource      the file the message came from
 * @property {number} createdAt          ms
 * @property {string} rev                random per add: tells a schedule from an earlier one of the same id
 */

export const SCHEDULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
export const MISSED_POLICIES = /** @type {const} */ (['skip', 'catch-up']);
/** Longest catch-up grace: an announcement a week late is a different announcement. */
export const MAX_GRACE_MS = 7 * 86_400_000;

/** @typedef {Omit<Schedule, 'send' | 'message' | 'messageSource'>} ScheduleTiming */

/**
 * Validates a schedule's id and timing: when it fires and what happens to missed
 * fires. Every problem is an InputError naming the option.
 * @param {object} input
 * @param {string | undefined} input.id
 * @param {string | undefined} input.cron
 * @param {string | undefined} input.at
 * @param {string | undefined} input.timeZone
 * @param {string | undefined} input.missed
 * @param {string | undefined} input.grace
 * @param {object} context
 * @param {number} context.now             ms
 * @param {number} context.defaultGraceMs  SCHEDULE_GRACE_MINUTES
 * @param {number} context.minIntervalMs   SCHEDULE_MIN_INTERVAL_SECONDS
 * @returns {ScheduleTiming}
 */
export function scheduleTiming(input, { now, defaultGraceMs, minIntervalMs }) {
  const id = checkScheduleId(input.id);
  if (!input.cron === !input.at) throw new InputError('schedule add needs exactly one of --cron EXPR (repeating) or --at TIME (once)');
  const hasOffset = input.at !== undefined && /(Z|[+-]\d{2}:?\d{2})$/i.test(input.at.trim());
  if (!input.timeZone && !hasOffset) {
    throw new InputError('schedule add needs --timezone: the IANA time zone the schedule is read in, such as Europe/Helsinki or America/New_York');
  }
  const timeZone = checkTimezone(input.timeZone ?? 'UTC', '--timezone');

  let cron = null;
  let at = null;
  if (input.cron) {
    const parsed = parseCron(input.cron);
    const gapMs = shortestCronGapMs(parsed, timeZone, now);
    if (gapMs < minIntervalMs) {
      throw new InputError(`--cron "${input.cron}" fires every ${gapMs / 1000} s, and each fire is a campaign: schedules fire at most once every ` +
        `${minIntervalMs / 1000} s (SCHEDULE_MIN_INTERVAL_SECONDS). Nothing was stored`);
    }
    cron = parsed.expression;
  } else {
    at = parseZonedTime(/** @type {string} */ (input.at), timeZone);
    if (at === null) {
      throw new InputError(`--at "${input.at}" is not a date and time; use 2025-06-01T12:00 (read in --timezone) or an ISO time with an offset such as 2025-06-01T09:00:00Z`);
    }
    if (at <= now) {
      throw new InputError(`--at ${input.at} is in the past (${formatZoned(at, timeZone)}, ${new Date(at).toISOString()}); nothing was stored`);
    }
  }

  const missed = input.missed ?? 'skip';
  if (!MISSED_POLICIES.includes(/** @type {any} */ (missed))) {
    throw new InputError(`--missed must be skip or catch-up, got "${missed}"`);
  }
  if (input.grace !== undefined && missed !== 'catch-up') {
    throw new InputError('--grace applies to --missed catch-up only (with skip, a missed fire is never sent)');
  }
  const graceMs = input.grace === undefined ? defaultGraceMs : durationOption(input.grace, '--grace');
  if (graceMs > MAX_GRACE_MS) throw new InputError(`--grace must be at most 7d, got "${input.grace}"`);

  return {
    id, cron, at, timeZone, missed: /** @type {'skip' | 'catch-up'} */ (missed), graceMs,
    createdAt: now, rev: randomBytes(6).toString('hex')
  };
}

/**
 * @param {string | undefined} id
 * @param {string} [command]
 */
export function checkScheduleId(id, command = 'schedule add') {
  if (!id) throw new InputError(`${command} needs a schedule id (letters, digits, "-" and "_"), e.g. weekly-digest`);
  if (!SCHEDULE_ID_PATTERN.test(id)) {
    throw new InputError(`schedule id "${id}" must be 1-63 letters, digits, "-" or "_", starting with a letter or digit`);
  }
  return id;
}

/**
 * A positive duration option in ms, read as --ttl is ("90s", "30m", "2h", "1h30m", "1d").
 * @param {string} text
 * @param {string} field the option, for the message
 */
export function durationOption(text, field) {
  const ms = parseDuration(text);
  if (ms === null || ms === 0) {
    throw new InputError(`${field} must be a duration such as 90s, 30m, 2h, 1h30m or 1d, got "${text}"`);
  }
  return ms;
}

/** @type {Map<string, import('./cron-expression.js').CronSchedule>} */
const parsedCron = new Map();

/** @param {string} expression */
function cronOf(expression) {
  let parsed = parsedCron.get(expression);
  if (!parsed) {
    if (parsedCron.size >= 1000) parsedCron.clear();
    parsed = parseCron(expression);
    parsedCron.set(expression, parsed);
  }
  return parsed;
}

/**
 * The schedule's first fire strictly after `afterMs`, or null when there is none.
 * @param {Pick<Schedule, 'cron' | 'at' | 'timeZone'>} schedule
 * @param {number} afterMs
 */
export function nextFire(schedule, afterMs) {
  if (schedule.cron) return nextCronFire(cronOf(schedule.cron), schedule.timeZone, afterMs);
  return schedule.at !== null && schedule.at > afterMs ? schedule.at : null;
}

/**
 * The schedule's fires in (fromMs, toMs], earliest first, at most `limit`.
 * @param {Pick<Schedule, 'cron' | 'at' | 'timeZone'>} schedule
 * @param {number} fromMs
 * @param {number} toMs
 * @param {number} [limit]
 */
export function firesBetween(schedule, fromMs, toMs, limit = Infinity) {
  if (schedule.cron) return cronFiresBetween(cronOf(schedule.cron), schedule.timeZone, fromMs, toMs, limit);
  return schedule.at !== null && schedule.at > fromMs && schedule.at <= toMs && limit > 0 ? [schedule.at] : [];
}

/**
 * The id of the campaign a fire creates: the schedule's id and the fire's UTC time,
 * so every scheduler derives the same one and a repeated launch is recognised.
 * @param {string} scheduleId
 * @param {number} fireMs
 */
export function campaignIdFor(scheduleId, fireMs) {
  return `s-${scheduleId}-${new Date(fireMs).toISOString().replace(/[-:]|\.\d{3}/g, '')}`;
}
