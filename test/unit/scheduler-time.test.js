// Fire instants of schedules: cron expressions in IANA time zones across daylight-saving
// changes, one-off times, and the checks that reject a bad schedule. Pure: no Redis.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCron, cronFiresBetween } from '../../shared/scheduler/cron-expression.js';
import { parseZonedTime, checkTimezone, formatZoned } from '../../shared/zoned-time.js';
import { scheduleTiming, campaignIdFor, durationOption, nextFire } from '../../shared/scheduler/schedule-spec.js';

/**
 * The fires of `expression` in `zone` between two UTC times, as ISO strings.
 * @param {string} expression @param {string} zone @param {string} from @param {string} to
 */
const fires = (expression, zone, from, to) =>
  cronFiresBetween(parseCron(expression), zone, Date.parse(from), Date.parse(to)).map((t) => new Date(t).toISOString().slice(0, 16) + 'Z');

test('Helsinki 03:30 daily: on the spring-forward day (03:30 does not exist) it fires once, when the clocks jump to 04:00', () => {
  // 30 March 2025: 03:00 EET becomes 04:00 EEST (01:00 UTC).
  assert.deepEqual(fires('30 3 * * *', 'Europe/Helsinki', '2025-03-28T00:00Z', '2025-04-01T00:00Z'), [
    '2025-03-28T01:30Z', '2025-03-29T01:30Z',
    '2025-03-30T01:00Z', // 04:00 EEST: the first valid instant after the skipped 03:30
    '2025-03-31T00:30Z'
  ]);
});

test('Helsinki 03:30 daily: on the fall-back day (03:30 happens twice) it fires at the first occurrence only', () => {
  // 26 October 2025: 04:00 EEST becomes 03:00 EET (01:00 UTC); 03:30 is 00:30 and 01:30 UTC.
  assert.deepEqual(fires('30 3 * * *', 'Europe/Helsinki', '2025-10-24T00:00Z', '2025-10-28T00:00Z'),
    ['2025-10-24T00:30Z', '2025-10-25T00:30Z', '2025-10-26T00:30Z', '2025-10-27T01:30Z']);
});

test('New York 02:30 daily: fires at 03:00 EDT when 02:30 is skipped, once when the clocks go back', () => {
  // 9 March 2025: 02:00 EST becomes 03:00 EDT (07:00 UTC).
  assert.deepEqual(fires('30 2 * * *', 'America/New_York', '2025-03-07T00:00Z', '2025-03-11T00:00Z'),
    ['2025-03-07T07:30Z', '2025-03-08T07:30Z', '2025-03-09T07:00Z', '2025-03-10T06:30Z']);
  // 2 November 2025: 02:00 EDT becomes 01:00 EST; 02:30 exists once (EST).
  assert.deepEqual(fires('30 2 * * *', 'America/New_York', '2025-10-31T00:00Z', '2025-11-04T00:00Z'),
    ['2025-10-31T06:30Z', '2025-11-01T06:30Z', '2025-11-02T07:30Z', '2025-11-03T07:30Z']);
});

test('New York 01:30 daily: the repeated 01:30 fires at its first occurrence (EDT) only', () => {
  assert.deepEqual(fires('30 1 * * *', 'America/New_York', '2025-10-31T00:00Z', '2025-11-04T00:00Z'),
    ['2025-10-31T05:30Z', '2025-11-01T05:30Z', '2025-11-02T05:30Z', '2025-11-03T06:30Z']);
});

test('interval schedules ("*" in minute or hour) follow elapsed time: a skipped hour does not fire, a repeated hour does', () => {
  // Hourly at :30 in Helsinki: 03:30 does not exist on 30 March; the fires stay an hour apart.
  assert.deepEqual(fires('30 * * * *', 'Europe/Helsinki', '2025-03-29T23:00Z', '2025-03-30T02:00Z'),
    ['2025-03-29T23:30Z', '2025-03-30T00:30Z', '2025-03-30T01:30Z']);
  // Hourly on the hour through the repeated 03:00-03:59 on 26 October: every real hour, once.
  assert.deepEqual(fires('0 * * * *', 'Europe/Helsinki', '2025-10-25T22:30Z', '2025-10-26T02:30Z'),
    ['2025-10-25T23:00Z', '2025-10-26T00:00Z', '2025-10-26T01:00Z', '2025-10-26T02:00Z']);
  // Every 30 minutes in New York through the repeated 01:00-01:59: every 30 real minutes.
  assert.deepEqual(fires('*/30 * * * *', 'America/New_York', '2025-11-02T04:45Z', '2025-11-02T07:00Z'),
    ['2025-11-02T05:00Z', '2025-11-02T05:30Z', '2025-11-02T06:00Z', '2025-11-02T06:30Z', '2025-11-02T07:00Z']);
});

test('a fixed schedule with several times inside the skipped hour fires once at the jump', () => {
  assert.deepEqual(fires('0,30 3 * * *', 'Europe/Helsinki', '2025-03-29T22:00Z', '2025-03-30T06:00Z'), ['2025-03-30T01:00Z']);
});

test('weekly 09:00 Monday keeps 09:00 local across the change: 07:00 UTC, then 06:00 UTC', () => {
  assert.deepEqual(fires('0 9 * * mon', 'Europe/Helsinki', '2025-03-20T00:00Z', '2025-04-08T00:00Z'),
    ['2025-03-24T07:00Z', '2025-03-31T06:00Z', '2025-04-07T06:00Z']);
});

test('node-cron syntax: last day of month, nth weekday, nearest weekday, seconds, nicknames', () => {
  assert.deepEqual(fires('0 12 L * *', 'UTC', '2025-01-01T00:00Z', '2025-04-01T00:00Z'), ['2025-01-31T12:00Z', '2025-02-28T12:00Z', '2025-03-31T12:00Z']);
  assert.deepEqual(fires('0 9 * * 1#2', 'UTC', '2025-05-01T00:00Z', '2025-07-01T00:00Z'), ['2025-05-12T09:00Z', '2025-06-09T09:00Z']);
  // 15 March 2025 is a Saturday: the nearest weekday is Friday the 14th.
  assert.deepEqual(fires('0 9 15W * *', 'UTC', '2025-03-01T00:00Z', '2025-04-01T00:00Z'), ['2025-03-14T09:00Z']);
  assert.equal(cronFiresBetween(parseCron('*/15 * * * * *'), 'UTC', Date.parse('2025-01-01T00:00:00Z'), Date.parse('2025-01-01T00:01:00Z')).length, 4);
  assert.deepEqual(fires('@daily', 'Europe/Helsinki', '2025-06-01T00:00Z', '2025-06-02T00:00Z'), ['2025-06-01T21:00Z']);
});

test('one-off times are read in the zone, with the same DST rules; an explicit offset wins', () => {
  const at = (/** @type {string} */ text, /** @type {string} */ zone) => new Date(/** @type {number} */ (parseZonedTime(text, zone))).toISOString();
  assert.equal(at('2025-06-01T12:00', 'Europe/Helsinki'), '2025-06-01T09:00:00.000Z');
  assert.equal(at('2025-06-01 12:00:30', 'America/New_York'), '2025-06-01T16:00:30.000Z');
  assert.equal(at('2025-03-30T03:30', 'Europe/Helsinki'), '2025-03-30T01:00:00.000Z'); // skipped: at the jump
  assert.equal(at('2025-10-26T03:30', 'Europe/Helsinki'), '2025-10-26T00:30:00.000Z'); // repeated: first occurrence
  assert.equal(at('2025-06-01T12:00+03:00', 'America/New_York'), '2025-06-01T09:00:00.000Z');
  assert.equal(at('2025-06-01T12:00Z', 'Europe/Helsinki'), '2025-06-01T12:00:00.000Z');
  assert.equal(parseZonedTime('2025-02-30T12:00', 'UTC'), null);
  assert.equal(parseZonedTime('tomorrow noon', 'UTC'), null);
  assert.equal(formatZoned(Date.parse('2025-06-01T09:00Z'), 'Europe/Helsinki'), '2025-06-01 12:00 Europe/Helsinki (+03:00)');
});

const NOW = Date.parse('2025-05-01T12:00:00Z');
const DEFAULTS = { now: NOW, defaultGraceMs: 3_600_000, minIntervalMs: 60_000 };
/** @param {Record<string, string>} input */
const timing = (input) => scheduleTiming({ id: 'digest', cron: undefined, at: undefined, timeZone: 'Europe/Helsinki', missed: undefined, grace: undefined, ...input }, DEFAULTS);

test('a valid schedule: canonical zone, defaults, and its fires', () => {
  const s = timing({ cron: '0 9 * * 1', timeZone: 'europe/helsinki' });
  assert.equal(s.timeZone, 'Europe/Helsinki');
  assert.equal(s.missed, 'skip');
  assert.equal(s.graceMs, 3_600_000);
  assert.equal(new Date(/** @type {number} */ (nextFire(s, NOW))).toISOString(), '2025-05-05T06:00:00.000Z');
  const once = timing({ at: '2025-05-02T09:00', missed: 'catch-up', grace: '90m' });
  assert.equal(once.at, Date.parse('2025-05-02T06:00:00Z'));
  assert.equal(once.graceMs, 90 * 60_000);
  assert.equal(nextFire(once, /** @type {number} */ (once.at)), null);
  assert.equal(checkTimezone('utc', '--timezone'), 'UTC');
});

test('bad schedules are refused with a message naming the option', () => {
  /** @param {Record<string, string | undefined>} input @param {RegExp} message */
  const refused = (input, message) => assert.throws(() => timing(/** @type {Record<string, string>} */ (input)), (error) => {
    assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_INPUT');
    assert.match(/** @type {Error} */ (error).message, message);
    return true;
  });
  refused({ cron: '61 * * * *' }, /^--cron "61 \* \* \* \*" is not a valid cron expression \(minute: 61/);
  refused({ cron: 'every monday' }, /^--cron "every monday" is not a valid cron expression \(expected 5 or 6 fields/);
  refused({ cron: '0 9 * * 8' }, /day of week/);
  refused({ cron: '0 0 L-29 2 *' }, /never fires/);
  refused({ cron: '0 9 * * 1', timeZone: 'Mars/Olympus' }, /^--timezone "Mars\/Olympus" is not an IANA time zone such as/);
  refused({ cron: '0 9 * * 1', timeZone: undefined }, /needs --timezone/);
  refused({ at: '2025-05-01T14:59' }, /^--at 2025-05-01T14:59 is in the past \(2025-05-01 14:59 Europe\/Helsinki/);
  refused({ at: '2025-04-01T12:00:00Z', timeZone: undefined }, /--at 2025-04-01T12:00:00Z is in the past/);
  refused({ at: 'next friday' }, /^--at "next friday" is not a date and time/);
  refused({}, /exactly one of --cron EXPR .* or --at TIME/);
  refused({ cron: '0 9 * * 1', at: '2026-01-01T00:00' }, /exactly one of --cron/);
  refused({ cron: '0 9 * * 1', missed: 'later' }, /^--missed must be skip or catch-up, got "later"/);
  refused({ cron: '0 9 * * 1', grace: '1h' }, /--grace applies to --missed catch-up only/);
  refused({ cron: '0 9 * * 1', missed: 'catch-up', grace: 'soon' }, /^--grace must be a duration such as 90s, 30m, 2h, 1h30m or 1d/);
  refused({ cron: '0 9 * * 1', missed: 'catch-up', grace: '8d' }, /^--grace must be at most 7d/);
  refused({ id: 'weekly digest', cron: '0 9 * * 1' }, /^schedule id "weekly digest" must be/);
  refused({ id: '', cron: '0 9 * * 1' }, /^schedule add needs a schedule id/);
});

test('no sub-minute schedule: a seconds field that fires more often than SCHEDULE_MIN_INTERVAL_SECONDS is refused', () => {
  const refusedBecause = (/** @type {string} */ cron, /** @type {RegExp} */ message, minIntervalMs = 60_000) =>
    assert.throws(() => scheduleTiming({ id: 'tick', cron, at: undefined, timeZone: 'UTC', missed: undefined, grace: undefined }, { ...DEFAULTS, minIntervalMs }), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_INPUT');
      assert.match(/** @type {Error} */ (error).message, message);
      return true;
    });
  refusedBecause('*/5 * * * * *', /^--cron "\*\/5 \* \* \* \* \*" fires every 5 s, and each fire is a campaign: schedules fire at most once every 60 s \(SCHEDULE_MIN_INTERVAL_SECONDS\)/);
  refusedBecause('* * * * * *', /fires every 1 s/);
  refusedBecause('0,30 * * * * *', /fires every 30 s/);
  // Only in hour 9, every 10 s: found though the next such hour is a day away.
  refusedBecause('*/10 * 9 * * *', /fires every 10 s/);
  // A wider limit refuses minutely schedules too; a narrower one lets a test fire each second.
  refusedBecause('* * * * *', /fires every 60 s, .* at most once every 300 s/, 300_000);
  assert.equal(scheduleTiming({ id: 'tick', cron: '* * * * * *', at: undefined, timeZone: 'UTC', missed: undefined, grace: undefined }, { ...DEFAULTS, minIntervalMs: 1000 }).cron, '* * * * * *');
  // A seconds field that names one second fires once a minute: allowed.
  for (const cron of ['30 * * * * *', '0 0 9 * * 1', '* * * * *']) {
    assert.equal(scheduleTiming({ id: 'ok', cron, at: undefined, timeZone: 'Europe/Helsinki', missed: undefined, grace: undefined }, DEFAULTS).cron, cron);
  }
});

test('campaign ids derive from schedule id and fire time; durations parse', () => {
  assert.equal(campaignIdFor('weekly-digest', Date.parse('2025-06-02T06:00:00Z')), 's-weekly-digest-20250602T060000Z');
  // --grace reads durations as --ttl does (shared/campaign/campaign-timing.js).
  assert.equal(durationOption('90s', '--grace'), 90_000);
  assert.equal(durationOption('2h', '--grace'), 7_200_000);
  assert.equal(durationOption('1h30m', '--grace'), 5_400_000);
  assert.equal(durationOption('1d', '--grace'), 86_400_000);
  assert.throws(() => durationOption('0m', '--grace'), /^InputError: --grace must be a duration/);
});
