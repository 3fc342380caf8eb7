// Local-time delivery in virtual time: when each zone's wall clock reads the
// campaign's local time, across days and daylight-saving changes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseLocalTime, nextLocalOccurrence, groupReleases } from '../../shared/campaign/local-time.js';
import { offsetAt, parseZonedTime } from '../../shared/zoned-time.js';
import { parseCron, nextCronFire } from '../../shared/scheduler/cron-expression.js';
import { planReleases } from '../../shared/campaign/enqueue-campaign.js';

/** @param {string} text */
const time = (text) => /** @type {import('../../shared/campaign/local-time.js').LocalTime} */ (parseLocalTime(text));
/** @param {string} zone @param {string} local @param {string} after */
const next = (zone, local, after) => new Date(nextLocalOccurrence(zone, time(local), Date.parse(after))).toISOString();

describe('parseLocalTime', () => {
  it('reads HH:MM and HH:MM:SS on a 24-hour clock', () => {
    assert.deepEqual(parseLocalTime('09:00'), { hour: 9, minute: 0, second: 0, text: '09:00' });
    assert.deepEqual(parseLocalTime('23:59:59'), { hour: 23, minute: 59, second: 59, text: '23:59:59' });
    for (const bad of ['9:00', '24:00', '12:60', '12:00:60', '12', 'noon', '12:00pm']) assert.equal(parseLocalTime(bad), null, bad);
  });
});

describe('nextLocalOccurrence', () => {
  it('is today when the local time is still ahead, else tomorrow', () => {
    // 12:00Z is 15:00 in Helsinki (summer) and 08:00 in New York.
    assert.equal(next('America/New_York', '09:00', '2025-06-02T12:00:00Z'), '2025-06-02T13:00:00.000Z');
    assert.equal(next('Europe/Helsinki', '09:00', '2025-06-02T12:00:00Z'), '2025-06-03T06:00:00.000Z');
    assert.equal(next('Europe/Helsinki', '15:00', '2025-06-02T12:00:00Z'), '2025-06-02T12:00:00.000Z', 'at the launch instant itself: at once');
    assert.equal(next('Asia/Kathmandu', '09:00', '2025-06-02T00:00:00Z'), '2025-06-02T03:15:00.000Z', 'a +05:45 zone');
  });

  it('follows daylight-saving time in Helsinki and New York', () => {
    // Helsinki: winter +2, summer +3 from 2025-03-30 03:00 local; New York -5 / -4 from 2025-03-09 02:00.
    assert.equal(next('Europe/Helsinki', '09:00', '2025-03-29T12:00:00Z'), '2025-03-30T06:00:00.000Z');
    assert.equal(next('Europe/Helsinki', '09:00', '2025-03-28T12:00:00Z'), '2025-03-29T07:00:00.000Z');
    assert.equal(next('America/New_York', '09:00', '2025-03-08T15:00:00Z'), '2025-03-09T13:00:00.000Z');
    assert.equal(next('America/New_York', '09:00', '2025-11-01T14:00:00Z'), '2025-11-02T14:00:00.000Z');
  });

  it('sends a time in the spring-forward gap at the instant the clocks jump, as cron schedules fire', () => {
    assert.equal(next('Europe/Helsinki', '03:30', '2025-03-29T23:00:00Z'), '2025-03-30T01:00:00.000Z', '03:30 does not exist: 04:00 summer time');
    assert.equal(next('America/New_York', '02:30', '2025-03-09T05:00:00Z'), '2025-03-09T07:00:00.000Z', '02:30 does not exist: 03:00 EDT');
    assert.equal(next('Australia/Lord_Howe', '02:15', '2025-10-04T12:00:00Z'), '2025-10-04T15:30:00.000Z', 'a 30-minute shift: 02:30 LHDT');
    // Launched after the jump, the skipped time has passed for the day: tomorrow's.
    assert.equal(next('America/New_York', '02:30', '2025-03-09T07:00:01Z'), '2025-03-10T06:30:00.000Z');
  });

  it('takes the first of a repeated time, or the second when launched between them', () => {
    // Helsinki, 2025-10-26: 04:00 summer time becomes 03:00, so 03:30 happens at 00:30Z and 01:30Z.
    assert.equal(next('Europe/Helsinki', '03:30', '2025-10-25T23:00:00Z'), '2025-10-26T00:30:00.000Z');
    assert.equal(next('Europe/Helsinki', '03:30', '2025-10-26T00:31:00Z'), '2025-10-26T01:30:00.000Z');
    assert.equal(next('Europe/Helsinki', '03:30', '2025-10-26T01:31:00Z'), '2025-10-27T01:30:00.000Z');
  });

  it('survives a skipped calendar day (Samoa, 2011-12-30): the jump to 31 December', () => {
    assert.equal(next('Pacific/Apia', '12:00', '2011-12-29T23:00:00Z'), '2011-12-30T10:00:00.000Z');
  });

  it('knows zone offsets to the minute', () => {
    assert.equal(offsetAt(Date.parse('2025-06-01T00:00:00Z'), 'Asia/Kathmandu'), (5 * 60 + 45) * 60_000);
    assert.equal(offsetAt(Date.parse('2025-01-01T00:00:00Z'), 'America/St_Johns'), -(3 * 60 + 30) * 60_000);
  });

  it('means the same instant as pushctl schedule add --at and a cron schedule, skipped and repeated times included', () => {
    // [zone, date, local time]: ordinary days, spring-forward gaps and fall-back repeats of 2025.
    const cases = [
      ['Europe/Helsinki', '2025-06-02', '09:00'], ['Europe/Helsinki', '2025-03-30', '03:30'], ['Europe/Helsinki', '2025-03-30', '03:00'],
      ['Europe/Helsinki', '2025-10-26', '03:30'], ['America/New_York', '2025-03-09', '02:30'], ['America/New_York', '2025-03-09', '02:00'],
      ['America/New_York', '2025-11-02', '01:30'], ['Australia/Lord_Howe', '2025-10-05', '02:15'], ['Australia/Lord_Howe', '2025-04-06', '01:45']
    ];
    for (const [zone, date, local] of cases) {
      // From the local midnight before (read with the day's first offset), so the time is still ahead.
      const midnight = /** @type {number} */ (parseZonedTime(`${date}T00:00`, zone));
      const delivery = nextLocalOccurrence(zone, time(local), midnight);
      const [hour, minute] = local.split(':').map(Number);
      assert.equal(delivery, parseZonedTime(`${date}T${local}`, zone), `--local-time ${local} and --at ${date}T${local} in ${zone}`);
      assert.equal(delivery, nextCronFire(parseCron(`${minute} ${hour} * * *`), zone, midnight), `cron "${minute} ${hour} * * *" in ${zone} on ${date}`);
    }
  });
});

describe('release groups', () => {
  it('groups zones that share an instant and orders the groups', () => {
    const start = Date.parse('2025-06-02T12:00:00Z');
    const groups = planReleases(new Map([['Europe/Paris', 10], ['Europe/Berlin', 5], ['America/New_York', 7], ['', 3]]),
      { localTime: parseLocalTime('09:00'), defaultTimezone: 'Europe/Helsinki', startAt: start });
    assert.deepEqual(groups.map((g) => ({ ...g, at: new Date(g.at).toISOString() })), [
      { at: '2025-06-02T13:00:00.000Z', zones: ['America/New_York'], devices: 7 },
      { at: '2025-06-03T06:00:00.000Z', zones: ['Europe/Helsinki'], devices: 3 },
      { at: '2025-06-03T07:00:00.000Z', zones: ['Europe/Berlin', 'Europe/Paris'], devices: 15 }
    ]);
  });

  it('is one group at the start without a local time', () => {
    assert.deepEqual(planReleases(new Map([['Europe/Paris', 10], ['', 3]]), { localTime: null, defaultTimezone: 'UTC', startAt: 42 }),
      [{ at: 42, zones: [], devices: 13 }]);
  });

  it('uses the injected clock', () => {
    const groups = groupReleases(new Map([['a', 1], ['b', 2], ['c', 4]]), (zone) => (zone === 'b' ? 1 : 2));
    assert.deepEqual(groups, [{ at: 1, zones: ['b'], devices: 2 }, { at: 2, zones: ['a', 'c'], devices: 5 }]);
  });
});
