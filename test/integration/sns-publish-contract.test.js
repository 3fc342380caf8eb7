// The publish-path contract (issue #16): every answer the SNS emulator can give, and
// every network failure between us and it, through both SNS_CLIENT paths over HTTP,
// must come out as the same PublishResult (kind and reason): that result is all the
// senders see, so their retries and backoff follow. SNS_CLIENT=lean is the default only
// while this suite passes for both. The requests themselves are checked too: the same
// bytes on the wire, and a SigV4 signature that an independent implementation accepts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { startEmulator, startStack, waitForFinish } from '../support/harness.js';
import { startSnsProxy } from '../support/sns-proxy.js';
import { checkSigV4 } from '../support/sigv4-check.js';
import { createSnsClient } from '../../shared/sns/sns-client.js';
import { resolveSnsEndpoint } from '../../shared/sns/sns-endpoint.js';
import { ConfigError } from '../../shared/errors.js';

const PATHS = /** @type {const} */ (['sdk', 'lean']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRETS = /** @type {Record<string, string>} */ ({ local: 'local' });
const secretFor = (/** @type {string} */ id) => SECRETS[id] ?? assert.fail(`unknown access key ${id}`);
/** @param {number} i */
const arn = (i) => `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/contract/${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
const MESSAGE = JSON.stringify({ default: 'Hello ÄÖ (50% off!*)', GCM: JSON.stringify({ notification: { title: "It's", body: 'a & b <c>' } }) });
const TTL = { 'AWS.SNS.MOBILE.FCM.TTL': { DataType: 'String', StringValue: '3600' }, 'AWS.SNS.MOBILE.APNS.TTL': { DataType: 'String', StringValue: '3600' } };

/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;
/** @type {Awaited<ReturnType<typeof startSnsProxy>>} */
let proxy;
/** @type {Record<'sdk' | 'lean', import('../../shared/sns/sns-client.js').SnsClient>} */
const clients = /** @type {any} */ ({});

before(async () => {
  sns = await startEmulator();
  proxy = await startSnsProxy(sns.url);
  for (const path of PATHS) {
    // 400 ms: the timeout case waits for it; nothing else comes near it on loopback.
    clients[path] = await createSnsClient({ region: 'us-east-1', endpoint: proxy.url, emulator: true, client: path },
      { maxSockets: 8, requestTimeoutMs: 400 });
  }
});
after(async () => {
  for (const path of PATHS) clients[path].destroy();
  await proxy.close();
  await sns.emulator.close();
});

/**
 * Publishes the same send through each path, in turn, with the emulator in the same state
 * before each, and returns both results and the requests as they arrived.
 * @param {object} faults
 * @param {import('../../shared/sns/publish-query.js').PublishSend} send
 */
async function bothPaths(faults, send) {
  /** @type {Record<string, import('../../shared/sns/sns-client.js').PublishResult>} */
  const results = {};
  /** @type {Record<string, import('../support/sns-proxy.js').SeenRequest>} */
  const requests = {};
  for (const path of PATHS) {
    sns.emulator.reset();
    sns.emulator.setFaults(faults);
    const seen = proxy.requests.length;
    results[path] = await clients[path].publish(send);
    assert.equal(proxy.requests.length, seen + 1, `${path}: exactly one request, no retry inside the client`);
    requests[path] = proxy.requests[seen];
  }
  return { results, requests };
}

/** Asserts both paths gave `kind` with the same reason, which matches `reason`. @param {Record<string, any>} results @param {string} kind @param {RegExp} reason */
function assertSame(results, kind, reason) {
  assert.equal(results.sdk.kind, kind, `sdk: ${JSON.stringify(results.sdk)}`);
  assert.deepEqual(results.lean, results.sdk, 'the lean path classifies the answer as the SDK path does');
  assert.match(String(results.sdk.reason), reason);
}

test('success: delivered with SNS\'s message id, the same request bytes from both paths, each validly signed', async () => {
  const send = { targetArn: arn(1), message: MESSAGE, attributes: TTL };
  const { results, requests } = await bothPaths({}, send);
  for (const path of PATHS) {
    assert.equal(results[path].kind, 'delivered');
    assert.match(String(results[path].messageId), UUID);
  }
  assert.notEqual(results.lean.messageId, results.sdk.messageId);
  assert.equal(requests.lean.body, requests.sdk.body, 'the lean body is what the SDK serializes');
  assert.equal(requests.lean.headers['content-type'], requests.sdk.headers['content-type']);
  const [delivery] = sns.emulator.deliveriesFor(arn(1));
  assert.deepEqual(delivery.message, JSON.parse(MESSAGE));
  assert.deepEqual(delivery.attributes, TTL);
  for (const path of PATHS) {
    const signature = checkSigV4(requests[path], secretFor);
    assert.ok(signature.valid, `${path}: the signature checks out`);
    assert.deepEqual([signature.accessKeyId, signature.region, signature.service], ['local', 'us-east-1', 'sns']);
    for (const header of ['host', 'x-amz-date', 'content-type']) assert.ok(signature.signedHeaders.includes(header), `${path} signs ${header}`);
  }
});

test('a body tampered with after signing fails the independent check (the check can fail)', async () => {
  const { requests } = await bothPaths({}, { targetArn: arn(2), message: MESSAGE });
  for (const path of PATHS) {
    assert.equal(checkSigV4({ ...requests[path], body: requests[path].body.replace('Hello', 'Hallo') }, secretFor).valid, false);
  }
});

test('Throttling (400, the API rate limit) and Throttled (429) are throttled', async () => {
  // throttlePerSecond 1: the first request of the second is admitted, the next refused.
  for (const throttleCode of ['Throttling', 'Throttled']) {
    /** @type {Record<string, any>} */
    const results = {};
    for (const path of PATHS) {
      sns.emulator.reset();
      sns.emulator.setFaults({ throttlePerSecond: 1, throttleCode: /** @type {'Throttling' | 'Throttled'} */ (throttleCode) });
      assert.equal((await clients[path].publish({ targetArn: arn(3), message: MESSAGE })).kind, 'delivered');
      results[path] = await clients[path].publish({ targetArn: arn(3), message: MESSAGE });
    }
    assertSame(results, 'throttled', new RegExp(`^${throttleCode}: Rate exceeded$`));
  }
});

test('EndpointDisabled is disabled, never retried', async () => {
  const { results } = await bothPaths({ disabledEndpoints: [arn(4)] }, { targetArn: arn(4), message: MESSAGE });
  assertSame(results, 'disabled', /^EndpointDisabled: Endpoint is disabled$/);
});

test('InvalidParameter is permanent with SNS\'s message, XML entities and all', async () => {
  const failEndpoints = { [arn(5)]: { code: 'InvalidParameter', message: `Invalid parameter: Token Reason: "<${arn(5)}>" & more` } };
  const token = await bothPaths({ failEndpoints }, { targetArn: arn(5), message: MESSAGE });
  assertSame(token.results, 'permanent', /^InvalidParameter: Invalid parameter: Token Reason: "<arn:.*>" & more$/);
  const structure = await bothPaths({}, { targetArn: arn(6), message: 'not json' });
  assertSame(structure.results, 'permanent', /^InvalidParameter: Invalid parameter: Message Structure - JSON message body failed to parse$/);
  const target = await bothPaths({}, { targetArn: 'arn:aws:sns:us-east-1:1:nothing', message: MESSAGE });
  assertSame(target.results, 'permanent', /^InvalidParameter: Invalid parameter: TargetArn$/);
});

test('5xx (InternalError 500, ServiceUnavailable 503) is transient', async () => {
  const internal = await bothPaths({ errorShare: 1 }, { targetArn: arn(7), message: MESSAGE });
  assertSame(internal.results, 'transient', /^InternalError: Internal Error$/);
  const unavailable = await bothPaths({ failEndpoints: { [arn(7)]: { code: 'ServiceUnavailable', status: 503, message: 'Service is unavailable' } } },
    { targetArn: arn(7), message: MESSAGE });
  assertSame(unavailable.results, 'transient', /^ServiceUnavailable: Service is unavailable$/);
});

test('operator errors (AuthorizationError 403, KMSThrottling) are classified alike', async () => {
  const denied = await bothPaths({ failEndpoints: { [arn(8)]: { code: 'AuthorizationError', status: 403, message: 'User is not authorized' } } },
    { targetArn: arn(8), message: MESSAGE });
  assertSame(denied.results, 'transient', /^AuthorizationError: User is not authorized$/);
  const kms = await bothPaths({ failEndpoints: { [arn(8)]: { code: 'KMSThrottling', status: 400, message: 'KMS is slow' } } },
    { targetArn: arn(8), message: MESSAGE });
  assertSame(kms.results, 'throttled', /^KMSThrottling: KMS is slow$/);
});

test('a timeout (SNS slower than requestTimeout) is transient, ETIMEDOUT on both', async () => {
  const startedAt = Date.now();
  const { results } = await bothPaths({ latencyMs: 2000 }, { targetArn: arn(9), message: MESSAGE });
  for (const path of PATHS) {
    assert.equal(results[path].kind, 'transient', path);
    assert.match(String(results[path].reason), /^ETIMEDOUT: .*exceeded the configured 400 ms requestTimeout/, path);
  }
  assert.ok(Date.now() - startedAt < 1800, 'both gave up after their 400 ms, not at the answer');
  // The sockets that timed out are gone; the next publish works on a fresh one.
  const { results: after } = await bothPaths({}, { targetArn: arn(9), message: MESSAGE });
  assert.deepEqual([after.sdk.kind, after.lean.kind], ['delivered', 'delivered']);
});

test('a connection reset is transient, ECONNRESET on both', async () => {
  proxy.resetConnections(true);
  try {
    const { results } = await bothPaths({}, { targetArn: arn(10), message: MESSAGE });
    for (const path of PATHS) {
      assert.equal(results[path].kind, 'transient', path);
      assert.match(String(results[path].reason), /^ECONNRESET: /, path);
    }
  } finally {
    proxy.resetConnections(false);
  }
  const { results: after } = await bothPaths({}, { targetArn: arn(10), message: MESSAGE });
  assert.deepEqual([after.sdk.kind, after.lean.kind], ['delivered', 'delivered'], 'both recover on a new connection');
});

test('nothing listening (connection refused) is transient, ECONNREFUSED on both', async () => {
  const closed = createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const port = /** @type {import('node:net').AddressInfo} */ (closed.address()).port;
  closed.close();
  for (const path of PATHS) {
    const client = await createSnsClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, emulator: true, client: path }, { maxSockets: 1 });
    try {
      const result = await client.publish({ targetArn: arn(11), message: MESSAGE });
      assert.equal(result.kind, 'transient', path);
      assert.match(String(result.reason), /^ECONNREFUSED: /, path);
    } finally {
      client.destroy();
    }
  }
});

test('credentials are refreshed as they expire, on both paths, and every request stays validly signed', async () => {
  for (const path of PATHS) {
    let fetched = 0;
    // Less than 5 minutes left: both paths treat these as expired and fetch on every publish.
    const expiring = async () => {
      fetched++;
      SECRETS[`${path}-short-${fetched}`] = `secret-${fetched}`;
      return { accessKeyId: `${path}-short-${fetched}`, secretAccessKey: `secret-${fetched}`, expiration: new Date(Date.now() + 240_000) };
    };
    const client = await createSnsClient({ region: 'us-east-1', endpoint: proxy.url, emulator: true, client: path }, { maxSockets: 2, credentials: expiring });
    const seen = proxy.requests.length;
    try {
      for (let i = 0; i < 3; i++) assert.equal((await client.publish({ targetArn: arn(12), message: MESSAGE })).kind, 'delivered');
    } finally {
      client.destroy();
    }
    const keys = proxy.requests.slice(seen).map((request) => checkSigV4(request, secretFor)).map((s) => (assert.ok(s.valid), s.accessKeyId));
    // A fresh key for each publish: the SDK path may fetch more than once per request (it
    // resolves the identity, then its signer checks it again), the lean path fetches once.
    const order = keys.map((key) => Number(key.replace(`${path}-short-`, '')));
    assert.ok(order[0] < order[1] && order[1] < order[2], `${path}: a fresh key for each publish: ${keys}`);
    if (path === 'lean') assert.deepEqual(keys, ['lean-short-1', 'lean-short-2', 'lean-short-3']);

    let fetchedLong = 0;
    const lasting = async () => {
      fetchedLong++;
      SECRETS[`${path}-long`] = 'long-secret';
      return { accessKeyId: `${path}-long`, secretAccessKey: 'long-secret', expiration: new Date(Date.now() + 3_600_000) };
    };
    const cached = await createSnsClient({ region: 'us-east-1', endpoint: proxy.url, emulator: true, client: path }, { maxSockets: 2, credentials: lasting });
    try {
      await Promise.all(Array.from({ length: 5 }, () => cached.publish({ targetArn: arn(13), message: MESSAGE })));
    } finally {
      cached.destroy();
    }
    assert.equal(fetchedLong, 1, `${path}: credentials with an hour left are fetched once, concurrent publishes share the fetch`);
  }
});

test('endpoints: the SDK\'s own rules for FIPS and dual-stack; a combination AWS does not offer stops at start', async () => {
  const resolve = (/** @type {string} */ region, /** @type {object} */ flags, /** @type {string | undefined} */ endpoint = undefined) =>
    resolveSnsEndpoint({ region, endpoint }, flags);
  assert.equal((await resolve('eu-west-1', {})).url.href, 'https://sns.eu-west-1.amazonaws.com/');
  assert.equal((await resolve('us-east-1', { useFipsEndpoint: true })).url.href, 'https://sns-fips.us-east-1.amazonaws.com/');
  assert.equal((await resolve('us-east-1', { useFipsEndpoint: true, useDualstackEndpoint: true })).url.href, 'https://sns-fips.us-east-1.api.aws/');
  assert.equal((await resolve('eu-west-1', { useDualstackEndpoint: true })).url.href, 'https://sns.eu-west-1.api.aws/');
  assert.equal((await resolve('cn-north-1', {})).url.href, 'https://sns.cn-north-1.amazonaws.com.cn/');
  await assert.rejects(resolve('eu-west-1', { useFipsEndpoint: true }, 'http://127.0.0.1:9911'),
    (error) => error instanceof ConfigError && /AWS_USE_FIPS_ENDPOINT/.test(error.message) && /FIPS and custom endpoint are not supported/.test(error.message));
});

test('a campaign through the worker: the same outcomes and the same SNS requests with either path', async () => {
  // Disabled, permanently failing, throttled and 5xx answers at once: the worker's retries
  // and backoff are fed only PublishResults, so both paths must end with equal counts and
  // equal numbers of requests per answer (the 5xx draws come from a seeded PRNG, so the
  // number of 500s before the last success is the same whatever the order).
  const devices = 600;
  const faults = (/** @type {(i: number) => string} */ deviceArn) => ({
    disabledEndpoints: [0, 50, 100].map(deviceArn),
    failEndpoints: { [deviceArn(7)]: { code: 'InvalidParameter', message: 'Invalid parameter: Token' } },
    throttlePerSecond: 400, errorShare: 0.15, seed: 11
  });
  /** @type {Record<string, { status: any, stats: any }>} */
  const runs = {};
  const { deviceArn } = await import('../support/harness.js');
  for (const path of PATHS) {
    const stack = await startStack({ devices, settings: { SEND_RATE: 1000, SEGMENT_SIZE: 100, SEND_ATTEMPTS: 8, SNS_CLIENT: path } });
    try {
      const sent = await stack.send([], faults(deviceArn));
      const status = await waitForFinish(sent.id, stack.env, 60_000);
      runs[path] = { status, stats: stack.emulator.stats() };
    } finally {
      await stack.close();
    }
  }
  for (const path of PATHS) {
    const { status } = runs[path];
    assert.equal(status.state, 'completed', path);
    assert.deepEqual([status.delivered, status.disabled, status.failed], [devices - 4, 3, 1], path);
    assert.ok((runs[path].stats.errors.Throttling ?? 0) > 0, `${path}: some requests were throttled`);
    assert.ok((runs[path].stats.errors.InternalError ?? 0) > 0, `${path}: some requests got a 500`);
  }
  assert.equal(runs.lean.stats.published, runs.sdk.stats.published);
  assert.equal(runs.lean.stats.duplicateTargets, 0);
  assert.equal(runs.lean.stats.errors.InternalError, runs.sdk.stats.errors.InternalError, 'the same 5xx retries');
  assert.equal(runs.lean.stats.errors.EndpointDisabled, runs.sdk.stats.errors.EndpointDisabled);
  assert.equal(runs.lean.stats.errors.InvalidParameter, runs.sdk.stats.errors.InvalidParameter);
});
