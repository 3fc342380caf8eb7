// Each SNS fault the emulator injects (throttling, 5xx, slow answers, disabled endpoints,
// permanent errors) leads to exact counts per outcome. A fault test: `npm run test:faults`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startStack, waitFor, waitForFinish, deviceArn, pushctl, REDIS_URL } from '../support/harness.js';

const DEVICES = 2000;
/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

before(async () => {
  stack = await startStack({ devices: DEVICES, settings: { SEND_RATE: 1000, SEGMENT_SIZE: 200, SEND_ATTEMPTS: 6 } });
});
after(() => stack.close());

/** Sends the test audience with the given faults and returns status and emulator stats. @param {object} faults */
async function sendWith(faults, extraArgs = /** @type {string[]} */ ([])) {
  const sent = await stack.send(extraArgs, faults);
  const status = await waitForFinish(sent.id, stack.env, 60_000);
  return { id: sent.id, status, stats: stack.emulator.stats(), sent };
}

test('disabled endpoints: marked disabled, never retried, left out of the next campaign', async () => {
  const disabled = Array.from({ length: 37 }, (_, i) => deviceArn(i * 50));
  const { status, stats } = await sendWith({ disabledEndpoints: disabled });
  assert.equal(status.state, 'completed');
  assert.equal(status.disabled, 37);
  assert.equal(status.delivered, DEVICES - 37);
  assert.equal(status.failed, 0);
  assert.equal(stats.errors.EndpointDisabled, 37, 'one attempt each: never retried');
  assert.equal(stats.published, DEVICES - 37);

  const redis = new Redis(REDIS_URL);
  try {
    assert.equal(await redis.scard(`{${stack.prefix}}:endpoints:disabled`), 37);
  } finally {
    redis.disconnect();
  }
  const again = await sendWith({});
  assert.equal(again.sent.devices, DEVICES - 37);
  assert.equal(again.sent.disabled, 37);
  assert.equal(again.stats.published, DEVICES - 37, 'disabled endpoints are not sent to again');
});

test('throttling: backs off and retries until every device is delivered once', async () => {
  const { status, stats } = await sendWith({ throttlePerSecond: 400 }, ['--name', 'throttled']);
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES - 37);
  assert.equal(status.failed, 0);
  assert.equal(stats.published, DEVICES - 37);
  assert.ok((stats.errors.Throttling ?? 0) > 0, 'the emulator throttled some requests');
  assert.equal(stats.requests, stats.published + stats.errors.Throttling, 'every extra request was a throttled one');
});

test('5xx: transient errors are retried; each device delivered exactly once', async () => {
  const { status, stats } = await sendWith({ errorShare: 0.2, seed: 7 });
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES - 37);
  assert.equal(stats.published, DEVICES - 37);
  assert.equal(stats.duplicateTargets, 0);
  assert.ok(stats.errors.InternalError > 200, `about 20% of requests failed: ${stats.errors.InternalError}`);
  assert.equal(stats.requests, stats.published + stats.errors.InternalError);
});

test('permanent errors fail the device with the reason and are not retried', async () => {
  const broken = [1, 2, 4, 5, 7].map(deviceArn);
  const failEndpoints = Object.fromEntries(broken.map((arn) => [arn, { code: 'InvalidParameter', message: 'Invalid parameter: Token' }]));
  const { id, status, stats } = await sendWith({ failEndpoints });
  assert.equal(status.failed, 5);
  assert.equal(status.delivered, DEVICES - 37 - 5);
  assert.equal(stats.errors.InvalidParameter, 5);
  const redis = new Redis(REDIS_URL);
  try {
    const failures = (await redis.lrange(`{${stack.prefix}}:campaign:${id}:failures`, 0, -1)).map((row) => JSON.parse(row));
    assert.deepEqual(failures.map((f) => f.endpointArn).sort(), [...broken].sort());
    assert.match(failures[0].reason, /InvalidParameter/);
  } finally {
    redis.disconnect();
  }
});

test('latency: slow SNS answers still deliver every device once', async () => {
  const { status, stats } = await sendWith({ latencyMs: 80 });
  assert.equal(status.delivered, DEVICES - 37);
  assert.equal(stats.published, DEVICES - 37);
  assert.equal(stats.requests, DEVICES - 37, 'no request was retried');
});

test('an SNS error message that quotes the endpoint ARN never reaches the worker\'s log', async () => {
  // Transient (500, retried until the attempts are used up, then again with the segment) and
  // permanent (400), each answered with a message that names the device's ARN, as AWS does.
  const transient = deviceArn(3);
  const permanent = deviceArn(4);
  const sent = await stack.send([], {
    failEndpoints: {
      [transient]: { code: 'InternalError', status: 500, message: `Internal failure publishing to ${transient}` },
      [permanent]: { code: 'InvalidParameter', status: 400, message: `Invalid parameter: TargetArn Reason: ${permanent} is not valid` }
    }
  });
  // The transient one never succeeds, so the campaign would wait on it for ever: once its
  // attempts are used up (and logged), it is cancelled. What matters here is the log.
  const worker = stack.workers[0];
  await waitFor(async () => worker.output().includes('send attempts used up'), { timeoutMs: 20_000, what: 'the worker to use up its send attempts' });
  const cancelled = await pushctl(['cancel', sent.id], stack.env);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  const lines = worker.output().split('\n').filter((l) => l.startsWith('{'));
  for (const line of lines) assert.doesNotMatch(line, /endpoint\/(APNS|GCM)\//, `an endpoint ARN in the worker's log: ${line}`);
  const usedUp = lines.find((l) => l.includes('send attempts used up'));
  assert.match(String(usedUp), /Internal failure publishing to \[endpoint\]/, 'the reason stays readable, the ARN replaced');
});
