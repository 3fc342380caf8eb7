// Deadlines: a campaign whose deadline passes mid-send stops sending at the deadline,
// counts every unsent device as expired exactly once, and tells the platforms the
// time left as their TTL. Bad --deadline and --ttl values are refused up front.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startStack, pushctl, waitForFinish, campaignStatus, REDIS_URL } from '../support/harness.js';

const DEVICES = 1200;
const RATE = 400;
const TTL_ATTRIBUTES = ['AWS.SNS.MOBILE.APNS.TTL', 'AWS.SNS.MOBILE.APNS_SANDBOX.TTL', 'AWS.SNS.MOBILE.FCM.TTL'];

/** @type {{ arn: string, at: number, attributes: Record<string, { StringValue?: string }> }[]} */
let deliveries = [];
/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

before(async () => {
  stack = await startStack({
    devices: DEVICES,
    settings: { SEND_RATE: RATE, SEGMENT_SIZE: 100 },
    // Delivery times on this process's Date.now(), the clock the deadlines are computed on.
    emulator: { onDelivery: (arn, _at, { attributes }) => { deliveries.push({ arn, at: Date.now(), attributes }); } }
  });
});
after(() => stack.close());

/** @param {string[]} args */
async function send(args) {
  deliveries = [];
  return (await stack.send(args)).id;
}

test('a deadline mid-send stops sending at the deadline and counts the rest as expired, exactly', { timeout: 30_000 }, async () => {
  // About 3 s of sending at 400/s, cut off after about 2 s.
  const deadline = Date.now() + 2500;
  const id = await send(['--deadline', new Date(deadline).toISOString()]);
  const status = await waitForFinish(id, stack.env, 20_000);
  const stats = stack.emulator.stats();

  assert.equal(status.state, 'expired');
  assert.equal(status.deadlineAt, new Date(deadline).toISOString());
  assert.equal(status.delivered + status.expired, DEVICES, 'every device delivered or expired');
  assert.equal(status.disabled + status.failed + status.cancelled, 0);
  assert.ok(status.expired > 0 && status.delivered > 0, `cut off mid-send: ${status.delivered} delivered, ${status.expired} expired`);
  assert.equal(stats.published, status.delivered, 'each delivery counted once');
  assert.equal(stats.distinctTargets, stats.published, 'no device sent twice');

  const last = Math.max(...deliveries.map((d) => d.at));
  assert.ok(last <= deadline, `a delivery ${last - deadline} ms after the deadline`);
  assert.ok(last > deadline - 500, `sending went on until the deadline (last delivery ${deadline - last} ms before it)`);

  // Every publish carried the seconds left to the deadline as each platform's TTL.
  assert.equal(deliveries.length, status.delivered);
  for (const { at, attributes } of deliveries) {
    const values = TTL_ATTRIBUTES.map((name) => Number(attributes[name]?.StringValue));
    const left = (deadline - at) / 1000;
    assert.ok(values.every((v) => v === values[0]), `one TTL for all platforms: ${JSON.stringify(attributes)}`);
    assert.ok(values[0] <= Math.ceil(left) && values[0] >= Math.floor(left) - 1, `TTL ${values[0]} s with ${left.toFixed(3)} s left`);
  }
  console.log(`# deadline: ${status.delivered} delivered, ${status.expired} expired; last delivery ${deadline - last} ms before the deadline`);
});

test('a campaign paused across its deadline expires its devices at the deadline, without a resume', { timeout: 30_000 }, async () => {
  const id = await send(['--ttl', '2s']);
  const paused = await pushctl(['pause', id], stack.env);
  assert.equal(paused.code, 0, `paused before the deadline (a slow machine may not): ${paused.stderr}`);
  const status = await waitForFinish(id, stack.env, 15_000);
  assert.equal(status.state, 'expired');
  assert.equal(status.ttlSeconds, 2);
  assert.equal(Date.parse(status.deadlineAt) - Date.parse(status.createdAt), 2000, 'the TTL counts from the start');
  // Publishes stop 100 ms before the deadline (so each reaches SNS in time); the rest expires from then.
  assert.ok(Date.parse(status.finishedAt) >= Date.parse(status.deadlineAt) - 150,
    `expired at the deadline, not ${Date.parse(status.deadlineAt) - Date.parse(status.finishedAt)} ms before`);
  assert.ok(Date.parse(status.finishedAt) < Date.parse(status.deadlineAt) + 1000, `expired ${Date.parse(status.finishedAt) - Date.parse(status.deadlineAt)} ms after the deadline`);
  assert.equal(status.delivered + status.expired, DEVICES);
  assert.equal(stack.emulator.stats().published, status.delivered);
  const text = await pushctl(['status', id], stack.env);
  assert.match(text.stdout, /expired +\d[\d,]* devices not reached before the deadline/);
});

test('bad --deadline, --ttl and --local-time values: exit 2 naming the flag, nothing stored', { timeout: 30_000 }, async () => {
  // Each message is checked in test/unit/campaign-timing.test.js; here, that pushctl refuses before storing anything.
  const redis = new Redis(REDIS_URL);
  try {
    const campaignsBefore = await redis.zcard(`{${stack.prefix}}:campaigns`);
    const publishedBefore = stack.emulator.stats().published;
    const base = ['send', '--audience', stack.audience.path, '--message', stack.message, '--yes'];
    const cases = /** @type {[string[], RegExp][]} */ ([
      [['--deadline', new Date(Date.now() - 60_000).toISOString()], /--deadline .* is in the past/],
      [['--ttl', '0m'], /--ttl must be longer than zero/],
      [['--ttl=-5m'], /--ttl must be longer than zero/],
      [['--local-time', '09:00', '--default-timezone', 'Mars/Olympus'], /--default-timezone "Mars\/Olympus" is not an IANA time zone/]
    ]);
    const results = await Promise.all(cases.map(([args]) => pushctl([...base, ...args], stack.env)));
    results.forEach((result, i) => {
      assert.equal(result.code, 2, `exit code for ${cases[i][0].join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, cases[i][1]);
      assert.equal(result.stdout, '');
    });
    assert.equal(await redis.zcard(`{${stack.prefix}}:campaigns`), campaignsBefore, 'no campaign stored');
    await sleep(200);
    assert.equal(stack.emulator.stats().published, publishedBefore, 'nothing sent');
  } finally {
    redis.disconnect();
  }
});
