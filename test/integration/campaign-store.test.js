// The campaign store against real Redis: a campaign is never created over another with
// the same id, and the index of active campaigns follows every change of state, so
// /metrics and the dashboard's chart find a campaign however many came after it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign-store.js';
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
