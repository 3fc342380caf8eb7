// The outcome bitfield with expiry, against a real Redis: each device is counted
// once whichever pass reports it first, campaigns end 'expired' when their deadline
// cut devices off, and campaigns created before (2 bits per device) keep working.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign-store.js';
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
