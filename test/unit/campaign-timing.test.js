// Timing options of a campaign: deadlines, TTLs, local time, default zone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseCampaignTiming, parseDuration, parseInstant, deadlineFor } from '../../shared/campaign/campaign-timing.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const context = { now: NOW, defaultTimezone: 'UTC' };

/** @param {Parameters<typeof parseCampaignTiming>[0]} options @param {RegExp} message */
const rejects = (options, message) => assert.throws(() => parseCampaignTiming(options, context), (error) => {
  assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_INPUT');
  assert.match(/** @type {Error} */ (error).message, message);
  return true;
});

describe('parseDuration', () => {
  it('reads units and combinations, and refuses bare numbers', () => {
    assert.equal(parseDuration('90m'), 5_400_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('45s'), 45_000);
    assert.equal(parseDuration('1d'), 86_400_000);
    assert.equal(parseDuration('1500ms'), 1500);
    assert.equal(parseDuration('0m'), 0);
    for (const bad of ['', '90', 'm', '2h-1', '1.5h', 'soon', '-5m']) assert.equal(parseDuration(bad), null, bad);
  });
});

describe('parseInstant', () => {
  it('needs a zone designator and a real date', () => {
    assert.equal(parseInstant('2025-06-01T18:00Z'), Date.parse('2025-06-01T18:00:00Z'));
    assert.equal(parseInstant('2025-06-01T20:00+02:00'), Date.parse('2025-06-01T18:00:00Z'));
    assert.equal(parseInstant('2025-06-01T20:00:00.250+0200'), Date.parse('2025-06-01T18:00:00.250Z'));
    for (const bad of ['2025-06-01T18:00', '2025-06-01 18:00Z', '2025-02-30T10:00Z', '2025-06-01T24:00Z', 'tomorrow']) {
      assert.equal(parseInstant(bad), null, bad);
    }
  });
});

describe('parseCampaignTiming', () => {
  it('returns the timing parsed', () => {
    assert.deepEqual(parseCampaignTiming({}, context), { deadlineAt: null, ttlMs: null, localTime: null, defaultTimezone: 'UTC' });
    assert.deepEqual(parseCampaignTiming({ deadline: '2025-06-01T18:00Z', ttl: '2h', localTime: '09:00', defaultTimezone: 'europe/helsinki' }, context),
      { deadlineAt: Date.parse('2025-06-01T18:00Z'), ttlMs: 7_200_000, localTime: { hour: 9, minute: 0, second: 0, text: '09:00' }, defaultTimezone: 'Europe/Helsinki' });
    assert.equal(parseCampaignTiming({ localTime: '07:05:09' }, context).localTime?.text, '07:05:09');
  });

  it('names the flag in every refusal', () => {
    rejects({ deadline: '2025-06-01T11:59Z' }, /^--deadline 2025-06-01T11:59Z is in the past \(it is now 2025-06-01T12:00:00.000Z\); nothing was enqueued$/);
    rejects({ deadline: '2025-06-01T12:00Z' }, /--deadline .* is in the past/);
    rejects({ deadline: 'tomorrow' }, /^--deadline must be an ISO 8601 time with a zone, like 2025-06-01T18:00:00Z/);
    rejects({ deadline: '2025-06-01T18:00' }, /^--deadline must be an ISO 8601 time with a zone/);
    rejects({ ttl: '0m' }, /^--ttl must be longer than zero; got "0m"$/);
    rejects({ ttl: '-5m' }, /^--ttl must be longer than zero; got "-5m"$/);
    rejects({ ttl: '90' }, /^--ttl must be a duration like 90m, 2h, 1h30m or 45s; got "90"$/);
    rejects({ localTime: '25:00' }, /^--local-time must be a 24-hour wall-clock time HH:MM or HH:MM:SS, like 09:00; got "25:00"$/);
    rejects({ localTime: '9:00' }, /^--local-time must be/);
    rejects({ localTime: '09:00', defaultTimezone: 'Mars/Olympus' }, /^--default-timezone "Mars\/Olympus" is not an IANA time zone/);
    rejects({ defaultTimezone: 'UTC' }, /^--default-timezone only applies with --local-time$/);
  });

  it('uses the caller\'s names for its options', () => {
    assert.throws(() => parseCampaignTiming({ ttl: '0s' }, { ...context, names: { ttl: 'ttl' } }), /^InputError: ttl must be longer than zero/);
  });
});

describe('deadlineFor', () => {
  it('is the earlier of the absolute deadline and start + TTL', () => {
    assert.equal(deadlineFor({ deadlineAt: null, ttlMs: null }, 1000), null);
    assert.equal(deadlineFor({ deadlineAt: 5000, ttlMs: null }, 1000), 5000);
    assert.equal(deadlineFor({ deadlineAt: null, ttlMs: 2000 }, 1000), 3000);
    assert.equal(deadlineFor({ deadlineAt: 2500, ttlMs: 2000 }, 1000), 2500);
    assert.equal(deadlineFor({ deadlineAt: 9000, ttlMs: 2000 }, 1000), 3000);
  });
});
