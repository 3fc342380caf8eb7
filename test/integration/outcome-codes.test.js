// The outcome bitfield with expiry and cancel, against a real Redis: each device is counted
// once whichever pass reports it first, campaigns end 'expired' when their deadline
// cut devices off, and campaigns created before (2 bits per device) keep working. A
// superseded pass never counts its stale devices, and a dead-lettered segment's unsent
// devices are failed, expired or cancelled as the campaign stands.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import { createSegmentSender } from '../../shared/sending/segment-sender.js';
import { settleDeadLettered } from '../../shared/sending/worker-process.js';
import { uniquePrefix, dropPrefix, REDIS_URL } from '../support/harness.js';

const redis = createRedis(REDIS_URL);
const keyPrefix = uniquePrefix();
const store = createCampaignStore(redis, { keyPrefix });
after(async () => {
  await dropPrefix(keyPrefix);
  redis.disconnect();
});

/** @param {number} i */
const arn = (i) => `arn:aws:sns:us-east-1:123456789012:endpoint/GCM/app/${i}`;
const create = () => store.create({ name: 't', message: { title: 'a', body: 'b' }, source: 'test', deadlineAt: Date.now() + 60_000 });

test('an expired device is counted once, and a late report of another outcome does not count it again', async () => {
  const { id, outcomeBits, deadlineAt } = await create();
  assert.equal(outcomeBits, 3);
  assert.ok(deadlineAt);
  const expired = [0, 1, 2].map((seq) => ({ seq, endpointArn: arn(seq), outcome: /** @type {const} */ ('expired') }));
  assert.equal(await store.recordOutcomes(id, [...expired, { seq: 3, endpointArn: arn(3), outcome: 'delivered' }]), 4);
  // A retried segment (after a worker crash) expires the same devices again, and a
  // stalled pass reports one of them delivered: nothing is counted twice.
  assert.equal(await store.recordOutcomes(id, [...expired, { seq: 0, endpointArn: arn(0), outcome: 'delivered' }]), 0);
  const campaign = await store.require(id);
  assert.deepEqual([campaign.expired, campaign.delivered, campaign.failed], [3, 1, 0]);
  assert.deepEqual(await store.doneFlags(id, 0, 5), [true, true, true, true, false]);
  assert.deepEqual(await store.doneFlags(id, 0, 5, 3), [true, true, true, true, false]);
  const codes = /** @type {number[]} */ (await redis.call('BITFIELD_RO', store.keys.campaign(id).outcomes, 'GET', 'u3', '#0', 'GET', 'u3', '#3'));
  assert.deepEqual(codes, [4, 1], 'expired is code 4, delivered 1');
});

test('a campaign whose deadline cut devices off ends expired; one without ends completed', async () => {
  const cut = await create();
  await store.recordOutcomes(cut.id, [{ seq: 0, endpointArn: arn(0), outcome: 'delivered' }, { seq: 1, endpointArn: arn(1), outcome: 'expired' }]);
  await store.finishSegment(cut.id, 0);
  assert.equal(await store.markEnqueued(cut.id, 1), 'expired');
  const finished = await store.require(cut.id);
  assert.ok(finished.finishedAt);
  await assert.rejects(store.pause(cut.id), /is expired/);

  const whole = await create();
  await store.recordOutcomes(whole.id, [{ seq: 0, endpointArn: arn(0), outcome: 'delivered' }]);
  await store.finishSegment(whole.id, 0);
  assert.equal(await store.markEnqueued(whole.id, 1), 'completed');
});

test('a campaign created before expiry existed keeps its 2-bit outcomes', async () => {
  const { id } = await create();
  await redis.hdel(store.keys.campaign(id).hash, 'outcomeBits');
  assert.equal((await store.require(id)).outcomeBits, 2);
  assert.equal(await store.recordOutcomes(id, [{ seq: 5, endpointArn: arn(5), outcome: 'failed', reason: 'x' }]), 1);
  const codes = /** @type {number[]} */ (await redis.call('BITFIELD_RO', store.keys.campaign(id).outcomes, 'GET', 'u2', '#5'));
  assert.deepEqual(codes, [3]);
  assert.deepEqual(await store.doneFlags(id, 4, 2), [false, true]);
  await assert.rejects(store.recordOutcomes(id, [{ seq: 6, endpointArn: arn(6), outcome: 'expired' }]), /does not fit the 2-bit outcome field/);
  assert.equal((await store.require(id)).expired, 0);
});

/** @param {number} from @param {number} to devices from..to-1 as the store takes them */
const devicesOf = (from, to) => Array.from({ length: to - from }, (_, i) => ({ seq: from + i, endpointArn: arn(from + i) }));

/** A campaign of `total` devices in `segments` segments, all enqueued, no deadline. */
async function enqueued(total = 10, segments = 1) {
  const campaign = await store.create({ name: 't', message: { title: 'a', body: 'b' }, source: 'test' });
  await store.addTotal(campaign.id, total);
  await store.markEnqueued(campaign.id, segments);
  return campaign;
}

/** @param {import('../../shared/types.js').Campaign} c */
const accounted = (c) => c.delivered + c.disabled + c.failed + c.expired + c.cancelled;

test('a superseded pass stops as superseded after a cancel: it neither counts its stale devices nor finishes the segment', async () => {
  const campaign = await enqueued(10, 1);
  const bucket = createTokenBucket(redis, { keyPrefix, sendRate: 10_000, sendBurst: 1000 });
  /** @type {() => void} */
  let openGate = () => {};
  const gate = new Promise((resolve) => { openGate = () => resolve(undefined); });
  let publishes = 0;
  const sns = { publish: async () => { publishes++; await gate; return { kind: 'delivered', messageId: `m-${publishes}` }; } };
  const sender = createSegmentSender(/** @type {any} */ ({
    store, bucket, sns, logger: pino({ level: 'silent' }), config: { publishConcurrency: 2, workerConcurrency: 1, sendAttempts: 3 }
  }));
  const devices = devicesOf(0, 10).map(({ endpointArn }) => ({ endpointArn, platform: /** @type {const} */ ('GCM') }));
  // Pass A stalls with devices 0 and 1 in flight; its lock lapses and pass B takes the segment
  // over, delivers 2..5 and is still sending 6..9 when the campaign is cancelled.
  const passA = sender.send({ campaignId: campaign.id, index: 0, firstSeq: 0, devices });
  while (publishes < 2) await sleep(5);
  await store.claimSegment(campaign.id, 0);
  await store.recordOutcomes(campaign.id, devicesOf(2, 6).map((d) => ({ ...d, outcome: /** @type {const} */ ('delivered') })));
  await store.cancel(campaign.id);
  openGate();
  assert.equal(await passA, undefined);
  const meanwhile = await store.require(campaign.id);
  assert.equal(publishes, 2, 'the stale pass took no more tokens');
  assert.deepEqual({ delivered: meanwhile.delivered, cancelled: meanwhile.cancelled, segmentsDone: meanwhile.segmentsDone, finishedAt: meanwhile.finishedAt },
    { delivered: 6, cancelled: 0, segmentsDone: 0, finishedAt: null }, 'the segment is still pass B\'s to finish');

  // Pass B drops what it had left; a second copy of the segment drops its own stale list again.
  await store.dropSegment(meanwhile, 0, devicesOf(6, 10));
  await store.dropSegment(meanwhile, 0, devicesOf(2, 10));
  const final = await store.require(campaign.id);
  assert.equal(final.state, 'cancelled');
  assert.ok(final.finishedAt);
  assert.deepEqual([final.delivered, final.cancelled], [6, 4]);
  assert.equal(accounted(final), final.total, 'delivered + disabled + failed + expired + cancelled = total');
});

test('cancelled is outcome code 5, once per device, in 3-bit campaigns; 2-bit campaigns count it per segment', async () => {
  const campaign = await enqueued(6, 2);
  await store.recordOutcomes(campaign.id, devicesOf(0, 2).map((d) => ({ ...d, outcome: /** @type {const} */ ('delivered') })));
  await store.cancel(campaign.id);
  await store.dropSegment(campaign, 0, devicesOf(0, 3));
  assert.equal((await store.require(campaign.id)).cancelled, 1, 'devices with an outcome keep it');
  const codes = /** @type {number[]} */ (await redis.call('BITFIELD_RO', store.keys.campaign(campaign.id).outcomes, 'GET', 'u3', '#1', 'GET', 'u3', '#2'));
  assert.deepEqual(codes, [1, 5]);
  // A send that was in flight reports delivered after the drop: the device stays cancelled, counted once.
  assert.equal(await store.recordOutcomes(campaign.id, [{ seq: 2, endpointArn: arn(2), outcome: 'delivered' }]), 0);
  await store.dropSegment(campaign, 1, devicesOf(3, 6));
  const final = await store.require(campaign.id);
  assert.deepEqual({ state: final.state, delivered: final.delivered, cancelled: final.cancelled }, { state: 'cancelled', delivered: 2, cancelled: 4 });
  assert.equal(accounted(final), final.total);
  assert.ok(final.finishedAt);

  const old = await enqueued(6, 2);
  await redis.hdel(store.keys.campaign(old.id).hash, 'outcomeBits');
  const legacy = await store.require(old.id);
  await store.cancel(old.id);
  await store.dropSegment(legacy, 0, devicesOf(0, 3));
  await store.dropSegment(legacy, 0, devicesOf(0, 3));
  assert.equal((await store.require(old.id)).cancelled, 3, 'counted once per segment, however often it is dropped');
});

describe('a dead-lettered segment\'s unsent devices', () => {
  const error = new Error('SNS unavailable');
  /** @param {import('../../shared/types.js').Campaign} campaign @param {number} [deadlineAt] */
  const segmentOf = (campaign, deadlineAt) => /** @type {import('../../shared/types.js').Segment} */ ({
    campaignId: campaign.id, index: 0, firstSeq: 0, deadlineAt,
    devices: devicesOf(0, 4).map(({ endpointArn }) => ({ endpointArn, platform: 'GCM' }))
  });
  /** @param {{ deadlineAt?: number }} [timing] */
  async function halfSent(timing = {}) {
    const campaign = await store.create({ name: 't', message: { title: 'a', body: 'b' }, source: 'test', ...timing });
    await store.addTotal(campaign.id, 4);
    await store.markEnqueued(campaign.id, 1);
    await store.recordOutcomes(campaign.id, [{ seq: 0, endpointArn: arn(0), outcome: 'delivered' }]);
    return campaign;
  }

  test('are failed with the reason while the deadline is ahead', async () => {
    const campaign = await halfSent({ deadlineAt: Date.now() + 60_000 });
    await settleDeadLettered(store, segmentOf(campaign), error);
    const final = await store.require(campaign.id);
    assert.deepEqual({ state: final.state, delivered: final.delivered, failed: final.failed, expired: final.expired }, { state: 'completed', delivered: 1, failed: 3, expired: 0 });
    assert.equal((await store.failures(campaign.id)).at(-1)?.reason, 'not sent: SNS unavailable');
  });

  test('are expired once the campaign\'s deadline, or the segment\'s own, has passed', async () => {
    const deadlineAt = Date.now() + 60_000;
    const campaign = await halfSent({ deadlineAt });
    await settleDeadLettered(store, segmentOf(campaign), error, deadlineAt);
    const final = await store.require(campaign.id);
    assert.deepEqual({ state: final.state, failed: final.failed, expired: final.expired }, { state: 'expired', failed: 0, expired: 3 });
    assert.equal(accounted(final), final.total);

    const zoned = await halfSent();
    await settleDeadLettered(store, segmentOf(zoned, Date.now() - 1000), error);
    const group = await store.require(zoned.id);
    assert.deepEqual({ state: group.state, failed: group.failed, expired: group.expired }, { state: 'expired', failed: 0, expired: 3 });
  });

  test('are cancelled when the campaign was cancelled, deadline or not', async () => {
    const deadlineAt = Date.now() + 60_000;
    const campaign = await halfSent({ deadlineAt });
    await store.cancel(campaign.id);
    await settleDeadLettered(store, segmentOf(campaign), error, deadlineAt + 1);
    const final = await store.require(campaign.id);
    assert.deepEqual({ state: final.state, failed: final.failed, expired: final.expired, cancelled: final.cancelled },
      { state: 'cancelled', failed: 0, expired: 0, cancelled: 3 });
    assert.equal(accounted(final), final.total);
    assert.ok(final.finishedAt);
  });
});
