// The campaign store against real Redis: a campaign is never created over another with
// the same id, and the index of active campaigns follows every change of state, so
// /metrics and the dashboard's chart find a campaign however many came after it.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { createMetricsRegistry, exposition } from '../../shared/metrics/registry.js';
import { registerClusterState } from '../../shared/metrics/cluster-state.js';
import { createCampaignSampler } from '../../shared/metrics/campaign-sampler.js';
import { createSeriesStore } from '../../shared/metrics/series-store.js';
import { sampleValue, validateExposition } from '../support/exposition-format.js';
import { uniquePrefix, dropPrefix, REDIS_URL } from '../support/harness.js';

const MESSAGE = { title: 'Sale', body: 'Everything 20% off today' };
const logger = pino({ level: 'silent' });
const redis = createRedis(REDIS_URL, { name: 'pushpace:test-campaign-store' });
/** @type {string[]} */
const prefixes = [];

after(async () => {
  redis.disconnect();
  for (const prefix of prefixes) await dropPrefix(prefix);
});

function freshStore() {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return createCampaignStore(redis, { keyPrefix: prefix });
}

/** @param {ReturnType<typeof createCampaignStore>} store @param {string} [id] */
const create = (store, id) => store.create({ id, name: 't', message: MESSAGE, source: 'test' });

/** @param {ReturnType<typeof createCampaignStore>} store */
async function indexed(store) {
  const [active, finished] = await Promise.all([redis.smembers(store.keys.activeCampaigns), redis.zrange(store.keys.finishedCampaigns, '0', '-1')]);
  return { active: active.sort(), finished: finished.sort() };
}

test('a campaign is never created over another with the same id', async () => {
  const store = freshStore();
  const first = await create(store, 's-digest-20250602T060000Z');
  await store.addTotal(first.id, 5);
  await store.markEnqueued(first.id, 1);
  await assert.rejects(create(store, first.id), (error) => {
    assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_CAMPAIGN_EXISTS');
    return true;
  });
  const kept = await store.require(first.id);
  assert.deepEqual({ state: kept.state, total: kept.total, enqueued: kept.enqueued, segmentsTotal: kept.segmentsTotal, createdAt: kept.createdAt },
    { state: 'running', total: 5, enqueued: true, segmentsTotal: 1, createdAt: first.createdAt });
});

test('a campaign keeps the message kind it names, and none reads as null', async () => {
  const store = freshStore();
  const message = { title: 'Sale', body: 'Everything 20% off' };
  const sale = await store.create({ name: 'sale', kind: 'sale', message, source: 'test' });
  const plain = await store.create({ name: 'plain', message, source: 'test' });
  assert.equal((await store.require(sale.id)).kind, 'sale');
  assert.equal((await store.require(plain.id)).kind, null);
});

test('the active index follows every change of state', async () => {
  const store = freshStore();
  const [completes, expires, pausedThenCancelled, fails, cancelledBeforeEnqueued, stays] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => create(store)));
  const all = [completes, expires, pausedThenCancelled, fails, cancelledBeforeEnqueued, stays].map((c) => c.id);
  assert.deepEqual(await indexed(store), { active: [...all].sort(), finished: [] }, 'created: active');

  // Completed and expired: when the last segment is done.
  await store.markEnqueued(completes.id, 1);
  await store.markEnqueued(expires.id, 1);
  await redis.hincrby(store.keys.campaign(expires.id).hash, 'expired', 3);
  assert.equal(await store.finishSegment(completes.id, 0), 'completed');
  assert.equal(await store.finishSegment(expires.id, 0), 'expired');

  // Paused and resumed stays active; cancelled stays active while its queued segments are dropped.
  await store.markEnqueued(pausedThenCancelled.id, 2);
  await store.pause(pausedThenCancelled.id);
  await store.resume(pausedThenCancelled.id);
  await store.cancel(pausedThenCancelled.id);
  await store.finishSegment(pausedThenCancelled.id, 0, 10);
  assert.ok((await indexed(store)).active.includes(pausedThenCancelled.id), 'cancelled, one segment still queued: winding down');
  await store.finishSegment(pausedThenCancelled.id, 1, 10);

  // Failed: at once (workers drop what is left of it).
  await store.fail(fails.id, 'enqueueing failed: boom');
  // Cancelled before enqueueing ended: finished when enqueueing ends with nothing left.
  await store.cancel(cancelledBeforeEnqueued.id);
  await store.markEnqueued(cancelledBeforeEnqueued.id, 0);

  const finished = [completes, expires, pausedThenCancelled, fails, cancelledBeforeEnqueued].map((c) => c.id);
  assert.deepEqual(await indexed(store), { active: [stays.id], finished: [...finished].sort() });
  assert.deepEqual((await store.active()).map((c) => c.id), [stays.id]);
  assert.equal((await store.require(fails.id)).error, 'enqueueing failed: boom');
  // A second fail, of a campaign already failed, changes nothing.
  await store.fail(fails.id, 'again');
  assert.equal((await store.require(fails.id)).error, 'enqueueing failed: boom');

  // current(): the active ones, and those finished within the window.
  assert.deepEqual((await store.current()).map((c) => c.id), [stays.id]);
  assert.deepEqual((await store.current({ finishedWithinMs: 60_000 })).map((c) => c.id).sort(), [...all].sort());
  assert.deepEqual((await store.current({ finishedWithinMs: 60_000, now: Date.now() + 120_000 })).map((c) => c.id), [stays.id]);
});

test('a running campaign older than the newest 50 is still counted, charted and listed', async () => {
  const store = freshStore();
  const old = await create(store);
  await store.addTotal(old.id, 1000);
  await store.markEnqueued(old.id, 10);
  await store.recordOutcomes(old.id, [{ seq: 0, outcome: 'delivered', endpointArn: 'arn:x' }]);
  // 60 short campaigns after it, all finished.
  for (let i = 0; i < 60; i++) {
    const c = await create(store);
    await store.markEnqueued(c.id, 0);
  }
  assert.ok(!(await store.list({ limit: 50 })).some((c) => c.id === old.id), 'the newest 50 do not reach it');
  assert.equal((await store.list({ limit: 50, withActive: true }))[50]?.id, old.id, 'pushctl list and the dashboard show it, last');

  const bucket = { settings: async () => ({ rate: 100, burst: 100, granted: 0, grantedTransactional: 0 }) };
  const registry = createMetricsRegistry('worker');
  registerClusterState(registry, { bucket: /** @type {any} */ (bucket), store });
  const families = validateExposition(exposition(await registry.metrics()));
  assert.equal(sampleValue(families, 'pushpace_active_campaigns', { state: 'running' }), 1);
  assert.equal(sampleValue(families, 'pushpace_campaign_state', { campaign: old.id, state: 'running' }), 1, 'its series come before those of the finished');
  assert.equal(sampleValue(families, 'pushpace_campaign_devices', { campaign: old.id, status: 'delivered' }), 1);

  const series = createSeriesStore(redis, { keyPrefix: /** @type {string} */ (prefixes.at(-1)) });
  const sampler = createCampaignSampler({ redis, store, bucket: /** @type {any} */ (bucket), series, logger });
  assert.equal(await sampler.sampleOnce(), true);
  assert.equal((await series.lastCampaignPoint(old.id))?.processed, 1, 'the chart sampler writes its point');
});

test('the chart sampler ends a finished campaign with one stopped point, also when its last sends were sampled while it ran', async () => {
  const store = freshStore();
  const series = createSeriesStore(redis, { keyPrefix: /** @type {string} */ (prefixes.at(-1)) });
  const bucket = { settings: async () => ({ rate: 100, burst: 100, granted: 0, grantedTransactional: 0 }) };
  const sampler = createCampaignSampler({ redis, store, bucket: /** @type {any} */ (bucket), series, logger });
  // Each call its own interval: the slot taken by the last one would refuse it for 0.8 s.
  const sample = async () => {
    await redis.del(series.keys.samplerSlot);
    assert.equal(await sampler.sampleOnce(), true);
  };

  const c = await create(store);
  await store.addTotal(c.id, 3);
  await store.markEnqueued(c.id, 1);
  await store.recordOutcomes(c.id, [0, 1].map((seq) => ({ seq, outcome: /** @type {const} */ ('delivered'), endpointArn: `arn:${seq}` })));
  await sample();
  const running = await series.lastCampaignPoint(c.id);
  assert.equal(running?.processed, 2);
  assert.ok((running?.rateLimit ?? 0) > 0, `a running campaign's point carries its limit (${running?.rateLimit})`);

  // Cancelled with its count unchanged: the last point's count is already the final one.
  await store.cancel(c.id);
  await store.finishSegment(c.id, 0, 1);
  assert.equal((await store.require(c.id)).state, 'cancelled');
  await sample();
  const points = await series.campaign(c.id);
  assert.deepEqual(points.map((p) => [p.processed, p.rateLimit > 0]), [[2, true], [2, false]], 'a final point, its limit stopped');
  assert.equal(points.at(-1)?.rateLimit, 0);

  await sample();
  assert.equal((await series.campaign(c.id)).length, 2, 'nothing after the final point');
});

describe('CAMPAIGN_RETENTION_DAYS', () => {
  const DAY_MS = 86_400_000;
  /** @param {number} days */
  function retainingStore(days) {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    return createCampaignStore(redis, { keyPrefix: prefix, campaignRetentionDays: days });
  }

  /**
   * A campaign with every key it can have: outcomes (a failure too), a release plan, a
   * segment lease and a finished segment of two.
   * @param {ReturnType<typeof createCampaignStore>} store
   * @param {number} [createdAt]
   */
  async function withEveryKey(store, createdAt) {
    const campaign = await store.create({ name: 't', message: MESSAGE, source: 'test', createdAt });
    await store.addTotal(campaign.id, 4);
    await store.setReleases(campaign.id, [{ at: Date.now() + 60_000, zones: ['UTC'], devices: 4 }]);
    await store.markEnqueued(campaign.id, 2);
    await store.claimSegment(campaign.id, 0);
    await store.recordOutcomes(campaign.id, [{ seq: 0, outcome: 'delivered', endpointArn: 'arn:0' }, { seq: 1, outcome: 'failed', endpointArn: 'arn:1', reason: 'x' }]);
    await store.finishSegment(campaign.id, 0);
    return campaign;
  }

  /** @param {ReturnType<typeof createCampaignStore>} store @param {string} id */
  async function ttls(store, id) {
    const k = store.keys.campaign(id);
    const names = /** @type {const} */ (['hash', 'outcomes', 'failures', 'releases', 'leases', 'segments']);
    const values = await Promise.all(names.map((name) => redis.pttl(k[name])));
    return Object.fromEntries(names.map((name, i) => [name, values[i]]));
  }

  /** @param {Record<string, number>} found @param {number} days */
  function assertAllExpireWithin(found, days) {
    for (const [name, ms] of Object.entries(found)) assert.ok(ms > days * DAY_MS - 60_000 && ms <= days * DAY_MS, `${name}: PTTL ${ms}`);
  }

  test('a campaign in a final state has a TTL on every key; one still running or winding down has none', async () => {
    const store = retainingStore(2);
    const running = await withEveryKey(store);
    const completes = await withEveryKey(store);
    const fails = await withEveryKey(store);
    const cancelled = await withEveryKey(store);
    const none = { hash: -1, outcomes: -1, failures: -1, releases: -1, leases: -1, segments: -1 };

    await store.recordOutcomes(completes.id, [2, 3].map((seq) => ({ seq, outcome: /** @type {const} */ ('delivered'), endpointArn: `arn:${seq}` })));
    assert.equal(await store.finishSegment(completes.id, 1), 'completed');
    assertAllExpireWithin(await ttls(store, completes.id), 2);

    await store.fail(fails.id, 'enqueueing failed: boom');
    assertAllExpireWithin(await ttls(store, fails.id), 2);

    await store.cancel(cancelled.id);
    assert.deepEqual(await ttls(store, cancelled.id), none, 'cancelled with a segment still queued: winding down');
    const c = await store.require(cancelled.id);
    await store.dropSegment(c, 1, [{ seq: 2, endpointArn: 'arn:2' }, { seq: 3, endpointArn: 'arn:3' }]);
    assertAllExpireWithin(await ttls(store, cancelled.id), 2);

    assert.deepEqual(await ttls(store, running.id), none);
    await store.pause(running.id);
    assert.deepEqual(await ttls(store, running.id), none, 'paused is not final');
  });

  test('0 keeps finished campaigns forever', async () => {
    const store = retainingStore(0);
    const campaign = await withEveryKey(store);
    await store.recordOutcomes(campaign.id, [2, 3].map((seq) => ({ seq, outcome: /** @type {const} */ ('delivered'), endpointArn: `arn:${seq}` })));
    assert.equal(await store.finishSegment(campaign.id, 1), 'completed');
    assert.deepEqual(Object.values(await ttls(store, campaign.id)), [-1, -1, -1, -1, -1, -1]);
  });

  test('a removed campaign leaves the index, is not recreated by late writes, and status says why it is gone', async () => {
    const store = retainingStore(2);
    const old = await withEveryKey(store, Date.now() - 3 * DAY_MS);
    await store.fail(old.id, 'boom');
    // Its retention runs out.
    const k = store.keys.campaign(old.id);
    await redis.unlink(k.hash, k.outcomes, k.failures, k.releases, k.leases, k.segments);
    // A pass still running reports late: nothing comes back.
    assert.equal(await store.recordOutcomes(old.id, [{ seq: 3, outcome: 'delivered', endpointArn: 'arn:3' }]), 0);
    assert.equal(await store.finishSegment(old.id, 1), 'missing');
    assert.deepEqual(await redis.exists(k.hash, k.outcomes, k.segments), 0);

    assert.ok((await redis.zscore(store.keys.campaigns, old.id)) !== null, 'still indexed until the next create');
    assert.ok(!(await store.list()).some((c) => c.id === old.id), 'list skips it meanwhile');
    const next = await create(store);
    assert.equal(await redis.zscore(store.keys.campaigns, old.id), null, 'create drops it from the index');
    assert.ok((await redis.zscore(store.keys.campaigns, next.id)) !== null);
    await assert.rejects(store.require(old.id), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_NOT_FOUND');
      assert.match(/** @type {Error} */ (error).message, /finished more than 2 days ago and was removed \(CAMPAIGN_RETENTION_DAYS=2\)/);
      return true;
    });
  });
});
