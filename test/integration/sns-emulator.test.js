// The emulator is checked through the real @aws-sdk/client-sns, so a passing test
// means the SDK parses each answer into the same result or exception class it
// would get from AWS. maxAttempts: 1 keeps SDK retries from hiding counts.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  CreatePlatformEndpointCommand, DeleteEndpointCommand, EndpointDisabledException, GetEndpointAttributesCommand,
  InternalErrorException, InvalidParameterException, ListTopicsCommand, NotFoundException,
  PlatformApplicationDisabledException, PublishCommand, SetEndpointAttributesCommand, SNSClient,
  SNSServiceException, ThrottledException
} from '@aws-sdk/client-sns';
import { createSnsEmulator, MAX_MESSAGE_BYTES } from '../../emulator/sns-emulator.js';
import { InputError } from '../../shared/errors.js';

const REGION = 'us-east-1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const APP_ARN = 'arn:aws:sns:us-east-1:123456789012:app/APNS/pushpace-ios';
const T0 = 1_700_000_000_000;

/** A never-created but well-formed endpoint ARN, unique per call. */
const madeUpArn = () => `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/pushpace-android/${randomUUID()}`;

/** @param {string} url */
const clientFor = (url) =>
  new SNSClient({ endpoint: url, region: REGION, credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });

/**
 * The rejection of a promise that must fail.
 * @param {Promise<unknown>} promise
 * @returns {Promise<any>}
 */
async function rejectionOf(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('SNS emulator through @aws-sdk/client-sns', () => {
  /** @type {ReturnType<typeof createSnsEmulator>} */ let emulator;
  /** @type {ReturnType<typeof createSnsEmulator>} */ let virtual;
  /** @type {SNSClient} */ let sns;
  /** @type {SNSClient} */ let virtualSns;
  /** @type {string} */ let url;
  /** @type {string} */ let virtualUrl;
  // The second emulator runs on a clock the tests move, for exact window checks.
  let clockMs = T0;

  /**
   * @param {string} path
   * @param {RequestInit} [init]
   * @returns {Promise<{ status: number, body: any }>}
   */
  async function control(path, init) {
    const response = await fetch(`${url}${path}`, init);
    return { status: response.status, body: await response.json() };
  }

  /** @param {unknown} faults */
  const putFaults = (faults) =>
    control('/_emulator/faults', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) });

  /** @param {string} targetArn @param {SNSClient} [client] */
  const publish = (targetArn, client = sns) => client.send(new PublishCommand({ TargetArn: targetArn, Message: 'hello' }));

  before(async () => {
    emulator = createSnsEmulator({ region: REGION });
    url = await emulator.listen(0);
    sns = clientFor(url);
    virtual = createSnsEmulator({ region: REGION, now: () => clockMs });
    virtualUrl = await virtual.listen(0);
    virtualSns = clientFor(virtualUrl);
  });

  after(async () => {
    sns.destroy();
    virtualSns.destroy();
    await Promise.all([emulator.close(), virtual.close()]);
  });

  beforeEach(() => {
    clockMs = T0;
    emulator.reset();
    virtual.reset();
  });

  it('publishes to a never-created endpoint and records the parsed delivery', async () => {
    const arn = madeUpArn();
    const message = { default: 'Sale', GCM: JSON.stringify({ notification: { title: 'Sale', body: '20% off' } }) };
    const result = await sns.send(new PublishCommand({
      TargetArn: arn,
      Message: JSON.stringify(message),
      MessageStructure: 'json',
      MessageAttributes: { campaign: { DataType: 'String', StringValue: 'c-1' } }
    }));

    assert.match(result.MessageId ?? '', UUID);
    assert.match(result.$metadata.requestId ?? '', UUID);
    const [delivery, ...others] = emulator.deliveriesFor(arn);
    assert.equal(others.length, 0);
    assert.equal(delivery.messageId, result.MessageId);
    assert.deepEqual(delivery.message, message);
    assert.equal(delivery.messageStructure, 'json');
    assert.deepEqual(delivery.attributes, { campaign: { DataType: 'String', StringValue: 'c-1' } });

    const { status, body } = await control(`/_emulator/deliveries?target=${encodeURIComponent(arn)}&limit=5`);
    assert.equal(status, 200);
    assert.deepEqual(body.deliveries.map((/** @type {any} */ d) => d.message), [message]);
    const stats = emulator.stats();
    assert.equal(stats.published, 1);
    assert.equal(stats.requests, 1);
    assert.deepEqual(stats.errors, {});
    assert.equal('bins' in stats, false);
  });

  it('runs the endpoint lifecycle and raises EndpointDisabledException for a disabled endpoint', async () => {
    const created = await sns.send(new CreatePlatformEndpointCommand({ PlatformApplicationArn: APP_ARN, Token: 'token-a', CustomUserData: 'user-1' }));
    const arn = created.EndpointArn ?? '';
    assert.match(arn, /^arn:aws:sns:us-east-1:000000000000:endpoint\/APNS\/pushpace-ios\/[0-9a-f-]{36}$/);
    const again = await sns.send(new CreatePlatformEndpointCommand({ PlatformApplicationArn: APP_ARN, Token: 'token-a', CustomUserData: 'user-1' }));
    assert.equal(again.EndpointArn, arn, 'the same token gives the same ARN, as in SNS');
    const other = await sns.send(new CreatePlatformEndpointCommand({ PlatformApplicationArn: APP_ARN, Token: 'token-b' }));
    assert.notEqual(other.EndpointArn, arn);
    const conflict = await rejectionOf(sns.send(new CreatePlatformEndpointCommand({ PlatformApplicationArn: APP_ARN, Token: 'token-a', CustomUserData: 'user-2' })));
    assert.ok(conflict instanceof InvalidParameterException);
    assert.match(conflict.message, /already exists with the same Token, but different attributes/);

    const attributes = await sns.send(new GetEndpointAttributesCommand({ EndpointArn: arn }));
    assert.deepEqual(attributes.Attributes, { Enabled: 'true', Token: 'token-a', CustomUserData: 'user-1' });

    await sns.send(new SetEndpointAttributesCommand({ EndpointArn: arn, Attributes: { Enabled: 'false' } }));
    assert.equal((await sns.send(new GetEndpointAttributesCommand({ EndpointArn: arn }))).Attributes?.Enabled, 'false');
    const disabled = await rejectionOf(publish(arn));
    assert.equal(disabled.name, 'EndpointDisabledException');
    assert.ok(disabled instanceof EndpointDisabledException);
    assert.equal(disabled.message, 'Endpoint is disabled');
    assert.equal(disabled.$fault, 'client');
    assert.equal(disabled.$metadata.httpStatusCode, 400);

    await sns.send(new SetEndpointAttributesCommand({ EndpointArn: arn, Attributes: { Enabled: 'true' } }));
    assert.match((await publish(arn)).MessageId ?? '', UUID);

    await sns.send(new DeleteEndpointCommand({ EndpointArn: arn }));
    await sns.send(new DeleteEndpointCommand({ EndpointArn: arn })); // idempotent, as in SNS
    const missing = await rejectionOf(sns.send(new GetEndpointAttributesCommand({ EndpointArn: arn })));
    assert.ok(missing instanceof NotFoundException);
    assert.equal(missing.$metadata.httpStatusCode, 404);
    const gone = await rejectionOf(publish(arn));
    assert.ok(gone instanceof InvalidParameterException);
    assert.match(gone.message, /No endpoint found for the target arn specified/);

    const stats = emulator.stats();
    assert.equal(stats.published, 1);
    assert.deepEqual(stats.errors, { InvalidParameter: 2, EndpointDisabled: 1, NotFound: 1 });
    assert.equal(stats.actions.CreatePlatformEndpoint, 4);
  });

  it('answers InvalidParameter for bad targets and messages, exactly at the size limit', async () => {
    const arn = madeUpArn();
    const cases = [
      [{ TargetArn: 'arn:aws:sns:us-east-1:123456789012:not-an-endpoint', Message: 'x' }, /^Invalid parameter: TargetArn$/],
      [{ TopicArn: 'arn:aws:sns:us-east-1:123456789012:announcements', Message: 'x' }, /not supported by the emulator/],
      [{ PhoneNumber: '+15555550100', Message: 'x' }, /not supported by the emulator/],
      [{ TargetArn: arn, Message: '' }, /Empty message/],
      [{ TargetArn: arn, Message: '{"GCM":"{}"}', MessageStructure: 'json' }, /No default entry in JSON message body/],
      [{ TargetArn: arn, Message: '{"default":', MessageStructure: 'json' }, /JSON message body failed to parse/],
      [{ TargetArn: arn, Message: 'x'.repeat(MAX_MESSAGE_BYTES + 1) }, /Message too long/],
      // Multi-byte characters count as bytes, as SNS counts them.
      [{ TargetArn: arn, Message: 'é'.repeat(MAX_MESSAGE_BYTES / 2 + 1) }, /Message too long/]
    ];
    for (const [input, message] of cases) {
      const error = await rejectionOf(sns.send(new PublishCommand(/** @type {any} */ (input))));
      assert.ok(error instanceof InvalidParameterException, `${JSON.stringify(input).slice(0, 80)} -> ${error.name}`);
      assert.match(error.message, /** @type {RegExp} */ (message));
    }
    await publish(arn).then(() => sns.send(new PublishCommand({ TargetArn: arn, Message: 'x'.repeat(MAX_MESSAGE_BYTES) })));
    const stats = emulator.stats();
    assert.equal(stats.published, 2);
    assert.equal(stats.errors.InvalidParameter, cases.length);
    assert.equal(stats.requests, cases.length + 2);
  });

  it('answers unknown actions with InvalidAction and malformed requests with 400, and keeps serving', async () => {
    const unknown = await rejectionOf(sns.send(new ListTopicsCommand({})));
    assert.equal(unknown.name, 'InvalidAction');
    assert.ok(unknown instanceof SNSServiceException);
    assert.equal(unknown.$metadata.httpStatusCode, 400);

    const json = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Action":"Publish"}' });
    assert.equal(json.status, 400);
    assert.match(await json.text(), /<Code>MalformedQueryString<\/Code>/);
    const noAction = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '%%%&&==' });
    assert.equal(noAction.status, 400);
    assert.match(await noAction.text(), /<ErrorResponse xmlns="http:\/\/sns.amazonaws.com\/doc\/2010-03-31\/"><Error><Type>Sender<\/Type><Code>InvalidAction<\/Code>/);

    assert.deepEqual(await control('/_emulator/healthz'), { status: 200, body: { ok: true } });
    assert.match((await publish(madeUpArn())).MessageId ?? '', UUID);
  });

  it('throttles exactly: 50 publishes at once with throttlePerSecond 20 give 20 deliveries and 30 Throttling errors', async () => {
    emulator.setFaults({ throttlePerSecond: 20 });
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => publish(madeUpArn())));
    const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    assert.equal(results.length - rejected.length, 20);
    assert.equal(rejected.length, 30);
    for (const error of rejected) {
      // Throttling is not a modeled SNS error, so the SDK raises its base class with that
      // name; its retry strategy treats the name as a throttling error.
      assert.equal(error.name, 'Throttling');
      assert.ok(error instanceof SNSServiceException);
      assert.equal(error.$fault, 'client');
      assert.equal(error.$metadata.httpStatusCode, 400);
      assert.equal(error.message, 'Rate exceeded');
    }
    const stats = emulator.stats();
    assert.equal(stats.published, 20);
    assert.deepEqual(stats.errors, { Throttling: 30 });
    assert.equal(stats.maxPerSecond, 20);

    emulator.setFaults({ throttlePerSecond: 1, throttleCode: 'Throttled' });
    await publish(madeUpArn());
    const throttled = await rejectionOf(publish(madeUpArn()));
    assert.ok(throttled instanceof ThrottledException);
    assert.equal(throttled.$metadata.httpStatusCode, 429);
  });

  it('throttles over a sliding one-second window', async () => {
    virtual.setFaults({ throttlePerSecond: 5 });
    const outcomes = async (/** @type {number} */ n) =>
      (await Promise.allSettled(Array.from({ length: n }, () => publish(madeUpArn(), virtualSns)))).map((r) => r.status === 'fulfilled');
    assert.equal((await outcomes(6)).filter(Boolean).length, 5);
    clockMs = T0 + 999;
    assert.deepEqual(await outcomes(1), [false], 'the first five are still inside the window');
    clockMs = T0 + 1000;
    const later = await outcomes(6);
    assert.equal(later.filter(Boolean).length, 5);
    assert.deepEqual(virtual.stats().errors, { Throttling: 3 });
  });

  it('answers a seeded, reproducible share of publishes with InternalError', async () => {
    const arn = madeUpArn();
    const run = async (/** @type {number} */ seed) => {
      emulator.reset();
      emulator.setFaults({ errorShare: 0.5, seed });
      /** @type {boolean[]} */
      const failed = [];
      for (let i = 0; i < 100; i++) {
        const outcome = await publish(arn).then(() => null, (error) => error);
        if (outcome) {
          assert.ok(outcome instanceof InternalErrorException);
          assert.equal(outcome.$fault, 'server');
          assert.equal(outcome.$metadata.httpStatusCode, 500);
        }
        failed.push(outcome !== null);
      }
      const stats = emulator.stats();
      assert.equal(stats.published + (stats.errors.InternalError ?? 0), stats.requests);
      assert.equal(stats.requests, 100);
      assert.equal(stats.errors.InternalError, failed.filter(Boolean).length);
      return failed;
    };
    const first = await run(42);
    const failures = first.filter(Boolean).length;
    assert.ok(failures > 30 && failures < 70, `about half should fail, got ${failures}`);
    assert.deepEqual(await run(42), first, 'the same seed gives the same split');
    assert.notDeepEqual(await run(43), first, 'another seed gives another split');
  });

  it('answers failEndpoints with their permanent errors and leaves other endpoints alone', async () => {
    const [invalidArn, appDisabledArn, brokenArn, healthyArn] = [madeUpArn(), madeUpArn(), madeUpArn(), madeUpArn()];
    emulator.setFaults({
      failEndpoints: {
        [invalidArn]: { code: 'InvalidParameter', status: 400, message: 'Invalid parameter: Token' },
        [appDisabledArn]: { code: 'PlatformApplicationDisabled', message: 'Platform application is disabled' },
        [brokenArn]: { code: 'InternalError', status: 500 }
      }
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      const invalid = await rejectionOf(publish(invalidArn));
      assert.ok(invalid instanceof InvalidParameterException);
      assert.equal(invalid.message, 'Invalid parameter: Token');
      assert.ok((await rejectionOf(publish(appDisabledArn))) instanceof PlatformApplicationDisabledException);
      const broken = await rejectionOf(publish(brokenArn));
      assert.ok(broken instanceof InternalErrorException);
      assert.equal(broken.$fault, 'server');
    }
    await publish(healthyArn);
    assert.equal(emulator.deliveryCount(healthyArn), 1);
    assert.deepEqual(emulator.stats().errors, { InvalidParameter: 2, PlatformApplicationDisabled: 2, InternalError: 2 });
  });

  it('treats disabledEndpoints as disabled from the start until re-enabled', async () => {
    const arn = madeUpArn();
    const { status } = await putFaults({ disabledEndpoints: [arn] });
    assert.equal(status, 200);
    assert.ok((await rejectionOf(publish(arn))) instanceof EndpointDisabledException);
    assert.deepEqual((await sns.send(new GetEndpointAttributesCommand({ EndpointArn: arn }))).Attributes, { Enabled: 'false' });
    await sns.send(new SetEndpointAttributesCommand({ EndpointArn: arn, Attributes: { Enabled: 'true' } }));
    await publish(arn);
    assert.equal(emulator.deliveryCount(arn), 1);
    assert.deepEqual((await control('/_emulator/faults')).body.disabledEndpoints, [arn], 'the config itself is unchanged');
  });

  it('delays every SNS answer by latencyMs', async () => {
    emulator.setFaults({ latencyMs: 150 });
    let started = performance.now();
    await publish(madeUpArn());
    let elapsed = performance.now() - started;
    assert.ok(elapsed >= 150 && elapsed < 2150, `publish took ${elapsed} ms`);
    started = performance.now();
    await rejectionOf(sns.send(new GetEndpointAttributesCommand({ EndpointArn: madeUpArn() })));
    elapsed = performance.now() - started;
    assert.ok(elapsed >= 150 && elapsed < 2150, `GetEndpointAttributes took ${elapsed} ms`);

    emulator.setFaults({ latencyMs: { min: 80, max: 100 } });
    started = performance.now();
    await publish(madeUpArn());
    elapsed = performance.now() - started;
    assert.ok(elapsed >= 80 && elapsed < 2100, `publish took ${elapsed} ms`);
  });

  it('validates fault configs on the control API, naming the field, and keeps the last good one', async () => {
    const good = await putFaults({ errorShare: 0.25, latencyMs: { min: 1, max: 2 } });
    assert.equal(good.status, 200);
    const expected = {
      throttlePerSecond: null, throttleCode: 'Throttling', disabledEndpoints: [], latencyMs: { min: 1, max: 2 },
      errorShare: 0.25, seed: 1, failEndpoints: {}
    };
    assert.deepEqual(good.body, expected);

    const arn = madeUpArn();
    const bad = [
      [{ throttlePerSecond: 0 }, 'throttlePerSecond'],
      [{ throttlePerSecond: 2.5 }, 'throttlePerSecond'],
      [{ throttleCode: 'SlowDown' }, 'throttleCode'],
      [{ latencyMs: { min: 50, max: 10 } }, 'latencyMs'],
      [{ latencyMs: -1 }, 'latencyMs'],
      [{ errorShare: 1.5 }, 'errorShare'],
      [{ seed: 'abc' }, 'seed'],
      [{ disabledEndpoints: [arn, 'nope'] }, 'disabledEndpoints[1]'],
      [{ failEndpoints: { [arn]: { status: 400 } } }, `failEndpoints[${JSON.stringify(arn)}].code`],
      [{ failEndpoints: { [arn]: { code: 'InvalidParameter', status: 200 } } }, `failEndpoints[${JSON.stringify(arn)}].status`],
      [{ throttlePerSecnd: 10 }, 'throttlePerSecnd'],
      [[1, 2], 'faults']
    ];
    for (const [faults, field] of bad) {
      const { status, body } = await putFaults(faults);
      assert.equal(status, 400, JSON.stringify(faults));
      assert.equal(body.field, field);
      assert.ok(body.error.includes(field), body.error);
    }
    const notJson = await control('/_emulator/faults', { method: 'PUT', body: '{"errorShare":' });
    assert.equal(notJson.status, 400);
    assert.match(notJson.body.error, /not valid JSON/);
    assert.deepEqual((await control('/_emulator/faults')).body, expected);

    assert.throws(() => emulator.setFaults(/** @type {any} */ ({ errorShare: -0.1 })), (error) => error instanceof InputError && /errorShare/.test(error.message));
    assert.equal((await control('/_emulator/deliveries?limit=0')).status, 400);
    assert.equal((await control('/_emulator/targets/count')).status, 400);
    assert.equal((await control('/_emulator/nothing-here')).status, 404);
  });

  it('counts distinct and duplicate targets and answers per-ARN counts', async () => {
    const [a, b, c] = [madeUpArn(), madeUpArn(), madeUpArn()];
    for (const arn of [a, b, a, c, c, c]) await publish(arn);
    const stats = emulator.stats();
    assert.equal(stats.published, 6);
    assert.equal(stats.distinctTargets, 3);
    assert.equal(stats.duplicateTargets, 2);
    assert.deepEqual((await control(`/_emulator/targets/count?arn=${encodeURIComponent(c)}`)).body, { arn: c, count: 3 });
    assert.deepEqual((await control(`/_emulator/targets/count?arn=${encodeURIComponent(madeUpArn())}`)).body.count, 0);
  });

  it('computes maxPerSecond over sliding one-second windows of 10-ms bins', async () => {
    /** @param {number} atMs @param {number} n */
    const burst = async (atMs, n) => {
      clockMs = T0 + atMs;
      await Promise.all(Array.from({ length: n }, () => publish(madeUpArn(), virtualSns)));
    };
    await burst(0, 5);
    await burst(400, 7);
    await burst(1200, 3); // 0 ms has left the window: 7 + 3
    await burst(1395, 4); // window 400..1395 ms: 7 + 3 + 4 = 14, the maximum
    await burst(2500, 1);

    const stats = virtual.stats({ bins: true });
    assert.equal(stats.published, 20);
    assert.equal(stats.maxPerSecond, 14);
    assert.equal(stats.firstAt, T0);
    assert.equal(stats.lastAt, T0 + 2500);
    assert.equal(stats.meanPerSecond, (19 * 1000) / 2500);
    const bins = stats.bins ?? assert.fail('bins missing');
    assert.equal(bins.startMs, T0);
    assert.equal(bins.binMs, 10);
    assert.deepEqual([bins.counts[0], bins.counts[40], bins.counts[120], bins.counts[139], bins.counts[250]], [5, 7, 3, 4, 1]);
    assert.equal(bins.counts.length, 251);
    // A client recomputing the maximum from the bins gets the same answer.
    let best = 0;
    for (let end = 0; end < bins.counts.length; end++) {
      best = Math.max(best, bins.counts.slice(Math.max(0, end - 99), end + 1).reduce((sum, n) => sum + n, 0));
    }
    assert.equal(best, stats.maxPerSecond);

    const overHttp = await fetch(`${virtualUrl}/_emulator/stats?bins=1`).then((r) => r.json());
    assert.deepEqual(overHttp, JSON.parse(JSON.stringify(stats)));
  });

  it('takes concurrent publishes to many made-up endpoints without creating them', async () => {
    const arns = Array.from({ length: 500 }, madeUpArn);
    for (let i = 0; i < arns.length; i += 50) await Promise.all(arns.slice(i, i + 50).map((arn) => publish(arn)));
    const stats = emulator.stats();
    assert.equal(stats.published, 500);
    assert.equal(stats.distinctTargets, 500);
    assert.equal(stats.duplicateTargets, 0);
    assert.deepEqual(stats.actions, { Publish: 500 });
    assert.equal(emulator.deliveriesFor().length, 500);
  });

  it('records TTL attributes per delivery, tells onDelivery, and refuses a TTL that is not whole seconds', async () => {
    /** @type {{ arn: string, attributes: Record<string, any> }[]} */
    const told = [];
    const hooked = createSnsEmulator({ region: REGION, onDelivery: (arn, _at, { attributes }) => { told.push({ arn, attributes }); } });
    const hookedSns = clientFor(await hooked.listen(0));
    try {
      const arn = madeUpArn();
      const ttl = (/** @type {string} */ value) => ({
        'AWS.SNS.MOBILE.APNS.TTL': { DataType: 'String', StringValue: value },
        'AWS.SNS.MOBILE.FCM.TTL': { DataType: 'String', StringValue: value }
      });
      await hookedSns.send(new PublishCommand({ TargetArn: arn, Message: 'hello', MessageAttributes: ttl('0') }));
      await hookedSns.send(new PublishCommand({ TargetArn: arn, Message: 'hello', MessageAttributes: ttl('3600') }));
      await hookedSns.send(new PublishCommand({ TargetArn: arn, Message: 'no attributes' }));
      assert.deepEqual(told.map((t) => t.attributes['AWS.SNS.MOBILE.FCM.TTL']?.StringValue ?? null), ['0', '3600', null]);
      assert.deepEqual(hooked.deliveriesFor(arn).map((d) => d.attributes['AWS.SNS.MOBILE.APNS.TTL']?.StringValue ?? null), ['0', '3600', null]);
      for (const bad of ['-1', '1.5', 'soon']) {
        const error = await rejectionOf(hookedSns.send(new PublishCommand({ TargetArn: arn, Message: 'hello', MessageAttributes: ttl(bad) })));
        assert.ok(error instanceof InvalidParameterException);
        assert.match(error.message, /AWS\.SNS\.MOBILE\.APNS\.TTL must be a whole number of seconds/);
      }
      assert.equal(hooked.stats().published, 3, 'a refused publish is not delivered');
    } finally {
      hookedSns.destroy();
      await hooked.close();
    }
  });

  it('resets recordings, faults and endpoints over the control API', async () => {
    emulator.setFaults({ throttlePerSecond: 3 });
    const { EndpointArn } = await sns.send(new CreatePlatformEndpointCommand({ PlatformApplicationArn: APP_ARN, Token: 'token-r' }));
    await publish(madeUpArn());
    const { status } = await control('/_emulator/reset', { method: 'POST' });
    assert.equal(status, 200);
    const stats = emulator.stats();
    assert.deepEqual([stats.published, stats.requests, stats.distinctTargets, stats.firstAt], [0, 0, 0, null]);
    assert.equal(emulator.getFaults().throttlePerSecond, null);
    assert.ok((await rejectionOf(sns.send(new GetEndpointAttributesCommand({ EndpointArn })))) instanceof NotFoundException);
  });
});
