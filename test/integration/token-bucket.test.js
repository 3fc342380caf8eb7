// The Lua token bucket and the campaign store against a real Redis.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRedis } from '../../shared/redis.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { uniquePrefix, dropPrefix, REDIS_URL } from '../support/harness.js';

const redis = createRedis(REDIS_URL);
/** @type {string[]} */
const prefixes = [];
after(async () => {
  await Promise.all(prefixes.map(dropPrefix));
  redis.disconnect();
});

/** @param {{ sendRate: number, sendBurst: number, transactionalShare?: number }} rates */
async function setup(rates, maxRate = /** @type {number | null} */ (null)) {
  const keyPrefix = uniquePrefix();
  prefixes.push(keyPrefix);
  const store = createCampaignStore(redis, { keyPrefix });
  const bucket = createTokenBucket(redis, { keyPrefix, ...rates });
  const campaign = await store.create({ name: 't', message: { title: 'a', body: 'b' }, source: 'test', maxRate });
  return { store, bucket, id: campaign.id };
}

/** Four takers asking for batches of `want` for `ms`; returns tokens granted. */
async function drain(/** @type {ReturnType<typeof createTokenBucket>} */ bucket, /** @type {string} */ id, /** @type {number} */ ms, want = 20) {
  const until = Date.now() + ms;
  let total = 0;
  await Promise.all([0, 1, 2, 3].map(async () => {
    while (Date.now() < until) {
      const grant = await bucket.take(id, want);
      total += grant.granted;
      if (grant.granted < want) await sleep(Math.max(grant.waitMs, 5));
    }
  }));
  return total;
}

test('four takers together get the rate, plus at most one burst', async () => {
  const { bucket, id } = await setup({ sendRate: 1000, sendBurst: 50 });
  const granted = await drain(bucket, id, 2000);
  assert.ok(granted >= 1950 && granted <= 2050 + 50, `granted ${granted} in 2 s at 1000/s`);
});

test('a campaign max rate caps its grants', async () => {
  const { bucket, id } = await setup({ sendRate: 1000, sendBurst: 50 }, 100);
  const granted = await drain(bucket, id, 1000);
  assert.ok(granted >= 90 && granted <= 100 + 5, `granted ${granted} in 1 s at max 100/s`);
});

test('nothing is granted to a paused, cancelled or unknown campaign', async () => {
  const { store, bucket, id } = await setup({ sendRate: 1000, sendBurst: 50 });
  await store.pause(id);
  assert.deepEqual(await bucket.take(id, 10), { granted: 0, waitMs: 0, state: 'paused', rate: 0 });
  await store.cancel(id);
  assert.equal((await bucket.take(id, 10)).state, 'cancelled');
  assert.equal((await bucket.take('c-nope', 10)).state, 'missing');
});

test('a rate set by another process applies to the next take', async () => {
  const { bucket, id } = await setup({ sendRate: 1000, sendBurst: 50 });
  await bucket.set({ rate: 100 });
  assert.deepEqual(await bucket.settings(), { rate: 100, burst: 5, granted: 0, grantedTransactional: 0 });
  const granted = await drain(bucket, id, 1000);
  assert.ok(granted >= 95 && granted <= 110, `granted ${granted} in 1 s after lowering to 100/s`);
});

test('outcomes are recorded once per device, however often they are reported', async () => {
  const { store, id } = await setup({ sendRate: 1, sendBurst: 1 });
  const arn = (/** @type {number} */ i) => `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/app/${i}`;
  const outcomes = /** @type {const} */ ([
    { seq: 0, endpointArn: arn(0), outcome: 'delivered' },
    { seq: 1, endpointArn: arn(1), outcome: 'disabled' },
    { seq: 2, endpointArn: arn(2), outcome: 'failed', reason: 'InvalidParameter: bad' }
  ]);
  assert.equal(await store.recordOutcomes(id, [...outcomes]), 3);
  assert.equal(await store.recordOutcomes(id, [...outcomes, { seq: 3, endpointArn: arn(3), outcome: 'delivered' }]), 1);
  const campaign = await store.require(id);
  assert.deepEqual([campaign.delivered, campaign.disabled, campaign.failed], [2, 1, 1]);
  assert.deepEqual(await store.doneFlags(id, 0, 5), [true, true, true, true, false]);
  assert.deepEqual(await store.disabledFlags([arn(1), arn(0)]), [true, false]);
  assert.deepEqual(await store.failures(id), [{ seq: 2, endpointArn: arn(2), reason: 'InvalidParameter: bad' }]);
});

test('a campaign completes once every segment is enqueued and finished, counting each once', async () => {
  const { store, id } = await setup({ sendRate: 1, sendBurst: 1 });
  assert.equal(await store.finishSegment(id, 0), 'running');
  assert.equal(await store.finishSegment(id, 0), 'running', 'a redelivered segment is not counted twice');
  assert.equal(await store.markEnqueued(id, 2), 'running');
  assert.equal(await store.finishSegment(id, 1), 'completed');
  const campaign = await store.require(id);
  assert.equal(campaign.segmentsDone, 2);
  assert.ok(campaign.finishedAt);
  await assert.rejects(store.pause(id), /is completed/);
});

test('a pass whose segment was claimed by a newer pass gets no more tokens', async () => {
  const { store, bucket, id } = await setup({ sendRate: 1000, sendBurst: 50 });
  const first = { segment: 3, pass: await store.claimSegment(id, 3) };
  assert.ok((await bucket.take(id, 5, first)).granted > 0);
  const second = { segment: 3, pass: await store.claimSegment(id, 3) };
  assert.deepEqual(await bucket.take(id, 5, first), { granted: 0, waitMs: 0, state: 'superseded', rate: 0 });
  assert.equal((await bucket.take(id, 5, second)).state, 'running');
  assert.equal((await bucket.take(id, 5, { segment: 4, pass: 'never-claimed' })).state, 'superseded');
  // The lease is checked before the state: after a cancel the stale pass still hears
  // 'superseded' (it must not drop its stale devices), and only the owner hears 'cancelled'.
  await store.cancel(id);
  assert.equal((await bucket.take(id, 5, first)).state, 'superseded');
  assert.equal((await bucket.take(id, 5, second)).state, 'cancelled');
  assert.equal((await bucket.take('c-gone', 5, first)).state, 'missing');
});

test('a burst of one token (rates up to 20/s): the transactional reserve does not starve campaigns', async () => {
  // Before: the reserve was ceil(0.1 × 1) = 1, the whole bucket, and a campaign at the
  // governor's 20/s safe rate never got a token.
  const { bucket, id } = await setup({ sendRate: 20, sendBurst: 1, transactionalShare: 0.1 });
  const granted = await drain(bucket, id, 1000, 5);
  assert.ok(granted >= 14 && granted <= 22, `${granted} tokens in 1 s at 20/s`);
  // Transactional sends still come first: a waiting transactional take holds campaigns off.
  assert.ok((await bucket.takeTransactional(5)).granted <= 5);
  assert.equal((await bucket.take(id, 5)).granted, 0, 'a transactional take is waiting');
});

test('transactional lane: a reserve campaigns never take, first claim on the rest, one rate for both', async () => {
  const { bucket, id } = await setup({ sendRate: 1000, sendBurst: 100, transactionalShare: 0.1 });
  // A full bucket: campaigns get all but the 10-token reserve.
  assert.equal((await bucket.take(id, 200)).granted, 90);
  assert.ok((await bucket.takeTransactional(10)).granted >= 10, 'the reserve is there for transactional sends');

  // Campaigns and transactional sends together, for 2 s: the sum stays at the rate,
  // and transactional takes get what they ask for.
  const until = Date.now() + 2000;
  let campaign = 0;
  let transactional = 0;
  let txShort = 0;
  await Promise.all([
    ...[0, 1, 2].map(async () => {
      while (Date.now() < until) {
        const grant = await bucket.take(id, 50);
        campaign += grant.granted;
        await sleep(Math.max(grant.waitMs, 5));
      }
    }),
    (async () => {
      while (Date.now() < until) {
        const grant = await bucket.takeTransactional(5);
        transactional += grant.granted;
        if (grant.granted < 5) txShort++;
        await sleep(20);
      }
    })()
  ]);
  const total = campaign + transactional;
  assert.ok(total <= 2000 + 100 + 10, `together ${total} tokens in 2 s at 1000/s`);
  assert.ok(transactional >= 400, `transactional got ${transactional} of about 500 asked`);
  assert.ok(txShort <= 5, `${txShort} transactional takes came up short`);
  assert.ok(campaign >= 1300, `campaigns used the rest: ${campaign}`);
  const settings = await bucket.settings();
  assert.equal(settings.grantedTransactional, transactional + 10);
});
