// Cron expressions: node-cron parses and validates them (its syntax: 5 fields, or 6
// with seconds first; L, W, #, names, nicknames such as @daily), and the fire instants
// are computed here, in the schedule's time zone, with the daylight-saving rules of
// cron(8) (Vixie/ISC cron), which are also the whole product's (shared/zoned-time.js):
//   - a fixed-time schedule (no "*" in its minute or hour field, e.g. "30 3 * * *") fires
//     once per local date and time: a local time the clocks skip fires at the instant
//     they jump (03:30 on the spring-forward day fires at 04:00), a repeated local time
//     fires at its first occurrence only;
//   - an interval schedule ("*" in the minute or hour field, e.g. "0 * * * *" or
//     "*/15 9-17 * * *") follows the wall clock: skipped local times do not fire, a
//     repeated hour fires again, so it keeps firing once per elapsed interval.
// node-cron's own next-run computation (v4.6) differs: it drops a fixed-time fire whose
// local time is skipped (no 03:30 run on the spring-forward day at all) and, for zones
// east of UTC, picks the second occurrence of a repeated time. So node-cron is used
// here for the syntax only, and by the scheduler process as its once-a-second trigger.
import cron from 'node-cron';
import { InputError } from '../errors.js';
import { localTimeOf, offsetsAround, instantsAt, wallTimeInstants } from '../zoned-time.js';

/**
 * @typedef {object} CronSchedule
 * @property {string} expression  as given
 * @property {number[]} seconds   sorted
 * @property {number[]} minutes   sorted
 * @property {number[]} hours     sorted
 * @property {(number | string)[]} daysOfMonth  numbers, 'L', 'L-n', 'nW', 'LW'
 * @property {number[]} months
 * @property {(number | string)[]} daysOfWeek   0-6 (Sunday 0), 'n#k', 'nL'
 * @property {boolean} interval   "*" in the minute or hour field: DST follows the wall clock
 */

const NICKNAMES = /** @type {Record<string, string>} */ ({
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *'
});
// No valid expression fires less often than once in 8 years (29 February on a given
// weekday recurs within 28); searching further would only hide a schedule that never fires.
const SEARCH_DAYS = 366 * 8;
const DAY_MS = 86_400_000;

/**
 * Parses and validates a cron expression. Errors are InputErrors naming `field` and
 * the part of the expression that is wrong.
 * @param {string} expression
 * @param {string} [field]
 * @returns {CronSchedule}
 */
export function parseCron(expression, field = '--cron') {
  const text = expression.trim();
  const resolved = NICKNAMES[text.toLowerCase()] ?? text;
  const shape = 'expected 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first';
  if (text === '') throw new InputError(`${field} is empty; ${shape}`);
  /** @type {ReturnType<typeof cron.validateDetailed>} */
  let result;
  try {
    result = cron.validateDetailed(resolved);
  } catch (error) {
    throw new InputError(`${field} "${expression}" is not a valid cron expression (${/** @type {Error} */ (error).message}); ${shape}`);
  }
  if (!result.valid || !result.fields) {
    const reasons = result.errors.map((e) => e.field === 'expression' ? e.message : `${fieldName(e.field)}: ${e.message}`).join('; ');
    throw new InputError(`${field} "${expression}" is not a valid cron expression (${reasons}); ${shape}`);
  }
  const raw = resolved.split(/\s+/);
  const [minuteField, hourField] = raw.length === 6 ? raw.slice(1) : raw;
  const f = result.fields;
  /** @param {number[]} values */
  const sorted = (values) => [...new Set(values)].sort((a, b) => a - b);
  const schedule = {
    expression: text,
    seconds: sorted(f.second),
    minutes: sorted(f.minute),
    hours: sorted(f.hour),
    daysOfMonth: f.dayOfMonth,
    months: f.month,
    daysOfWeek: f.dayOfWeek.map((d) => d === 7 ? 0 : d),
    interval: minuteField.startsWith('*') || hourField.startsWith('*')
  };
  if (nextCronFire(schedule, 'UTC', Date.UTC(2000, 0, 1)) === null) {
    throw new InputError(`${field} "${expression}" never fires: no date matches its day-of-month, month and day-of-week together`);
  }
  return schedule;
}

/**
 * The first fire strictly after `afterMs`, or null if none within 8 years.
 * @param {CronSchedule} schedule
 * @param {string} timeZone  canonical IANA name
 * @param {number} afterMs
 */
export function nextCronFire(schedule, timeZone, afterMs) {
  // Start a day early: the local date of an instant near a change can run behind.
  let day = localTimeOf(afterMs - DAY_MS, timeZone);
  for (let i = 0; i < SEARCH_DAYS; i++) {
    if (schedule.months.includes(day.month) && dayMatches(schedule, day.year, day.month, day.day)) {
      const fire = firstFireOnDay(schedule, timeZone, day, afterMs);
      if (fire !== null) return fire;
    }
    day = nextDate(day);
  }
  return null;
}

/**
 * The fires in (fromMs, toMs], earliest first, at most `limit` of them (the earliest).
 * @param {CronSchedule} schedule
 * @param {string} timeZone
 * @param {number} fromMs
 * @param {number} toMs
 * @param {number} [limit]
 */
export function cronFiresBetween(schedule, timeZone, fromMs, toMs, limit = Infinity) {
  const fires = [];
  let t = fromMs;
  while (fires.length < limit) {
    const next = nextCronFire(schedule, timeZone, t);
    if (next === null || next > toMs) break;
    fires.push(next);
    t = next;
  }
  return fires;
}

/**
 * The earliest fire after `afterMs` on one local date, or null.
 * @param {CronSchedule} schedule
 * @param {string} timeZone
 * @param {{ year: number, month: number, day: number }} date
 * @param {number} afterMs
 */
function firstFireOnDay(schedule, timeZone, { year, month, day }, afterMs) {
  const midnight = Date.UTC(year, month - 1, day);
  const offsets = offsetsOn(midnight, timeZone);
  const minOffset = Math.min(offsets.before, offsets.after);
  const maxOffset = Math.max(offsets.before, offsets.after);
  let best = Infinity;
  for (const hour of schedule.hours) {
    // Local times in this hour map to instants within [wall - maxOffset, wall + 1 h - minOffset).
    if (midnight + (hour + 1) * 3_600_000 - minOffset <= afterMs) continue;
    if (midnight + hour * 3_600_000 - maxOffset > best) break;
    for (const minute of schedule.minutes) {
      if (midnight + hour * 3_600_000 + (minute + 1) * 60_000 - minOffset <= afterMs) continue;
      for (const second of schedule.seconds) {
        const wall = midnight + hour * 3_600_000 + minute * 60_000 + second * 1000;
        for (const t of fireInstants(schedule, wall, offsets)) {
          if (t > afterMs && t < best) best = t;
        }
        // Without a change on this date instants grow with local time: the first is the earliest.
        if (offsets.at === null && best !== Infinity) return best;
      }
    }
  }
  return best === Infinity ? null : best;
}

/**
 * The offsets around one local date, cached: one Intl search per zone and date, after
 * which every local time on it maps to instants by arithmetic.
 * @param {number} midnight  the date's 00:00 read as UTC
 * @param {string} timeZone
 */
function offsetsOn(midnight, timeZone) {
  const key = `${timeZone} ${midnight}`;
  let offsets = offsetCache.get(key);
  if (!offsets) {
    if (offsetCache.size >= 4096) offsetCache.clear();
    offsets = offsetsAround(midnight + DAY_MS / 2, timeZone);
    offsetCache.set(key, offsets);
  }
  return offsets;
}

/** @type {Map<string, ReturnType<typeof offsetsAround>>} */
const offsetCache = new Map();

/**
 * The instants one matching local time fires at, by the DST rules at the top.
 * @param {CronSchedule} schedule
 * @param {number} wall
 * @param {ReturnType<typeof offsetsAround>} offsets
 */
function fireInstants(schedule, wall, offsets) {
  // Interval schedules follow elapsed time; a fixed time means one instant, as everywhere
  // in the product (zoned-time.js): the jump when skipped, the first when repeated.
  return schedule.interval ? instantsAt(wall, offsets) : wallTimeInstants(wall, offsets).slice(0, 1);
}

/**
 * Day-of-month and day-of-week must both match (node-cron's rule, unlike Vixie cron's OR).
 * @param {CronSchedule} schedule
 * @param {number} year
 * @param {number} month
 * @param {number} day
 */
function dayMatches(schedule, year, month, day) {
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  const domOk = schedule.daysOfMonth.some((value) => {
    if (value === day) return true;
    if (typeof value !== 'string') return false;
    if (value === 'L') return day === last;
    const offset = /^L-(\d{1,2})$/.exec(value);
    if (offset) return day === last - Number(offset[1]);
    const nearest = /^(\d{1,2}|L)W$/.exec(value);
    if (nearest) return day === nearestWeekday(year, month, nearest[1] === 'L' ? last : Number(nearest[1]), last);
    return false;
  });
  if (!domOk) return false;
  return schedule.daysOfWeek.some((value) => {
    if (value === weekday) return true;
    if (typeof value !== 'string') return false;
    const nth = /^([0-7])#([1-5])$/.exec(value);
    if (nth) return Number(nth[1]) % 7 === weekday && Math.floor((day - 1) / 7) + 1 === Number(nth[2]);
    const lastOf = /^([0-7])L$/i.exec(value);
    if (lastOf) return Number(lastOf[1]) % 7 === weekday && day + 7 > last;
    return false;
  });
}

/**
 * The weekday nearest to `target` within its month (cron's W): Saturday moves to
 * Friday, Sunday to Monday, without leaving the month.
 * @param {number} year
 * @param {number} month
 * @param {number} target
 * @param {number} last
 */
function nearestWeekday(year, month, target, last) {
  if (target < 1 || target > last) return -1;
  const weekday = new Date(Date.UTC(year, month - 1, target)).getUTCDay();
  if (weekday === 6) return target === 1 ? 3 : target - 1;
  if (weekday === 0) return target === last ? target - 2 : target + 1;
  return target;
}

/** @param {{ year: number, month: number, day: number }} date */
function nextDate({ year, month, day }) {
  const d = new Date(Date.UTC(year, month - 1, day + 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 0, minute: 0, second: 0 };
}

/** @param {string} name node-cron's field name */
function fieldName(name) {
  return ({ dayOfMonth: 'day of month', dayOfWeek: 'day of week' })[name] ?? name;
}


/**
 * The shortest time between two fires, from the next 2,000 fires within 8 days of
 * `fromMs` (every pattern a cron can make repeats within them, down to a seconds field
 * restricted to one hour of the day); Infinity for one that fires once or never there.
 * @param {CronSchedule} schedule
 * @param {string} timeZone  canonical IANA name
 * @param {number} fromMs
 */
export function shortestCronGapMs(schedule, timeZone, fromMs) {
  const fires = cronFiresBetween(schedule, timeZone, fromMs, fromMs + 8 * DAY_MS, 2000);
  let shortest = Infinity;
  for (let i = 1; i < fires.length; i++) shortest = Math.min(shortest, fires[i] - fires[i - 1]);
  return shortest;
}
