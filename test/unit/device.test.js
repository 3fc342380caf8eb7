import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalField, canonicalLocale, parseDevice, parseDeviceFields } from '../../shared/audience/device.js';
import { canonicalTimezone } from '../../shared/zoned-time.js';

const GCM_ARN = 'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/pushpace-example/0b1d2c3e-1111-4000-a000-000000000001';
const APNS_ARN = 'arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/pushpace-example/0b1d2c3e-1111-4000-a000-000000000002';
const SANDBOX_ARN = 'arn:aws:sns:us-east-1:123456789012:endpoint/APNS_SANDBOX/pushpace-dev/0b1d2c3e-1111-4000-a000-000000000003';

/** @param {unknown} record */
function reason(record, line = 7) {
  const result = parseDevice(record, line);
  assert.ok('skipped' in result, `expected a skip, got ${JSON.stringify(result)}`);
  assert.equal(result.skipped.line, line);
  return result.skipped.reason;
}

describe('parseDevice', () => {
  it('validates a full record and keeps the line number', () => {
    const result = parseDevice({ endpointArn: GCM_ARN, platform: 'GCM', userId: 'user-1', locale: 'fi', timezone: 'Europe/Helsinki' }, 12);
    assert.deepEqual(result, {
      device: { endpointArn: GCM_ARN, platform: 'GCM', userId: 'user-1', locale: 'fi', timezone: 'Europe/Helsinki' },
      line: 12
    });
  });

  it('maps snake_case and other spellings of the field names', () => {
    const result = parseDevice({ endpoint_arn: APNS_ARN, PLATFORM: 'apns', user_id: 'u9', Time_Zone: 'UTC' }, 1);
    assert.deepEqual(result, { device: { endpointArn: APNS_ARN, platform: 'APNS', userId: 'u9', timezone: 'UTC' }, line: 1 });
  });

  it('treats empty and null optional fields as absent and leaves no undefined keys', () => {
    const result = parseDevice({ endpointArn: GCM_ARN, platform: 'GCM', userId: '', locale: '  ', timezone: null }, 3);
    assert.ok('device' in result);
    assert.deepEqual(Object.keys(result.device), ['endpointArn', 'platform']);
  });

  it('ignores fields it does not know', () => {
    const result = parseDevice({ endpointArn: GCM_ARN, platform: 'GCM', firstName: 'Ada', segment: 'vip' }, 1);
    assert.ok('device' in result);
    assert.deepEqual(result.device, { endpointArn: GCM_ARN, platform: 'GCM' });
  });

  it('normalises platform case, locale and time zone spelling', () => {
    const result = parseDevice({ endpointArn: SANDBOX_ARN, platform: 'apns_sandbox', locale: 'pt_br', timezone: 'europe/helsinki' }, 1);
    assert.ok('device' in result);
    assert.equal(result.device.platform, 'APNS_SANDBOX');
    assert.equal(result.device.locale, 'pt-BR');
    assert.equal(result.device.timezone, 'Europe/Helsinki');
  });

  it('turns a numeric userId (an integer column) into a string', () => {
    const result = parseDevice({ endpoint_arn: GCM_ARN, platform: 'GCM', user_id: 4711 }, 1);
    assert.ok('device' in result);
    assert.equal(result.device.userId, '4711');
  });

  it('skips a record without endpointArn, or with an empty one', () => {
    assert.equal(reason({ platform: 'GCM' }), 'endpointArn is missing');
    assert.equal(reason({ endpointArn: '', platform: 'GCM' }), 'endpointArn is missing');
  });

  it('skips an endpointArn that is not an SNS platform endpoint, without quoting it', () => {
    for (const arn of [
      'not-an-arn',
      'arn:aws:sns:us-east-1:123456789012:my-topic',
      'arn:aws:sns:us-east-1:12345678901:endpoint/GCM/app/id',
      'arn:aws:sqs:us-east-1:123456789012:endpoint/GCM/app/id',
      'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/app'
    ]) {
      const text = reason({ endpointArn: arn, platform: 'GCM' });
      assert.match(text, /^endpointArn is not an SNS platform endpoint ARN/);
      assert.ok(!text.includes(arn), 'the ARN identifies a phone and must not be echoed');
    }
    assert.equal(reason({ endpointArn: 42, platform: 'GCM' }), 'endpointArn is not an SNS platform endpoint ARN (arn:aws:sns:<region>:<account>:endpoint/<platform>/<app>/<id>)');
    assert.equal(reason({ endpointArn: { arn: GCM_ARN }, platform: 'GCM' }), 'endpointArn must be a string');
  });

  it('accepts the other AWS partitions', () => {
    const arn = 'arn:aws-cn:sns:cn-north-1:123456789012:endpoint/GCM/app/0b1d2c3e';
    assert.ok('device' in parseDevice({ endpointArn: arn, platform: 'GCM' }, 1));
  });

  it('skips a missing or unknown platform, naming the allowed ones', () => {
    assert.equal(reason({ endpointArn: GCM_ARN }), 'platform is missing');
    assert.equal(reason({ endpointArn: GCM_ARN, platform: 'WNS' }), 'platform "WNS" is not one of APNS, APNS_SANDBOX, GCM');
  });

  it('skips a platform that contradicts the endpoint ARN', () => {
    assert.equal(reason({ endpointArn: GCM_ARN, platform: 'APNS' }), 'platform APNS does not match the endpoint ARN, which is a GCM endpoint');
  });

  it('skips an invalid locale or time zone, naming the field and value', () => {
    assert.equal(reason({ endpointArn: GCM_ARN, platform: 'GCM', locale: 'english!' }), 'locale "english!" is not a language tag like "fi" or "pt-BR"');
    assert.equal(reason({ endpointArn: GCM_ARN, platform: 'GCM', timezone: 'Mars/Olympus' }), 'timezone "Mars/Olympus" is not an IANA time zone like "Europe/Helsinki"');
    assert.equal(reason({ endpointArn: GCM_ARN, platform: 'GCM', userId: true }), 'userId must be a string');
  });

  it('cuts a long value short in a reason', () => {
    const text = reason({ endpointArn: GCM_ARN, platform: 'X'.repeat(500) });
    assert.ok(text.length < 120, text);
  });

  it('skips something that is not an object', () => {
    for (const value of [null, 'GCM', 3, [GCM_ARN, 'GCM']]) {
      assert.equal(reason(value), 'not an object with endpointArn and platform fields');
    }
  });
});

describe('parseDeviceFields', () => {
  it('validates a record keyed by Device field names', () => {
    assert.deepEqual(parseDeviceFields({ endpointArn: GCM_ARN, platform: 'gcm', locale: 'DE' }, 5), {
      device: { endpointArn: GCM_ARN, platform: 'GCM', locale: 'de' }, line: 5
    });
  });
});

describe('canonical names', () => {
  it('maps column names to Device fields', () => {
    assert.equal(canonicalField('endpoint_arn'), 'endpointArn');
    assert.equal(canonicalField('EndpointArn'), 'endpointArn');
    assert.equal(canonicalField('endpointarn'), 'endpointArn');
    assert.equal(canonicalField('user-id'), 'userId');
    assert.equal(canonicalField('email'), undefined);
  });

  it('canonicalises locales and time zones, and returns null for invalid ones', () => {
    assert.equal(canonicalLocale('en-us'), 'en-US');
    assert.equal(canonicalLocale('zh_Hant_TW'), 'zh-Hant-TW');
    assert.equal(canonicalLocale('e'), null);
    assert.equal(canonicalLocale('en US'), null);
    assert.equal(canonicalTimezone('America/New_York'), 'America/New_York');
    assert.equal(canonicalTimezone('Not/AZone'), null);
    // The second answer comes from the cache and must be the same.
    assert.equal(canonicalTimezone('Not/AZone'), null);
  });
});
