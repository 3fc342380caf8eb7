// Managed Redis in cluster mode (ElastiCache, MemoryDB...): with REDIS_CLUSTER=true every
// connection is an ioredis Cluster. This file starts its own three-primary cluster
// (test/support/local-redis-cluster.js) and sends a campaign through it end to end:
// pushctl send enqueues on BullMQ, a worker process takes the segments, publishes to the SNS
// emulator and records outcomes with the Lua scripts; then the token bucket and the governor
// run against it. The key prefix is chosen so that its slot is NOT on the startup node that
// REDIS_URL names: a single-node connection gets MOVED there, so passing proves the cluster
// client follows the slots.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { createRedis, assertRedisReachable, deletePrefix, redisKeys } from '../../shared/redis.js';
import { primaries } from '../../shared/redis-cluster.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import { createGovernor } from '../../shared/governor/governor.js';
import { createLogger } from '../../shared/logger.js';
import { uniquePrefix, testEnv, pushctl, startEmulator, startWorker, makeAudience, makeMessage, deviceArn, waitFor } from '../support/harness.js';
import { startRedisCluster } from '../support/local-redis-cluster.js';

const DEVICES = 300;

/** @type {Awaited<ReturnType<typeof startRedisCluster>>} */
let cluster;
/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;
/** @type {import('../../shared/redis.js').PushRedis} */
let redis;
/** @type {Array<() => Promise<unknown>>} */
const cleanups = [];

before(async () => {
  cluster = await startRedisCluster();
  sns = await startEmulator();
  redis = createRedis({ url: cluster.url, cluster: true }, { name: 'pushpace:cluster-test' });
});

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  redis?.disconnect();
  await sns?.emulator.close();
  await cluster?.stop();
});

/**
 * A KEY_PREFIX whose slot another primary than REDIS_URL's serves: asked for one of its
 * keys, the startup node answers MOVED.
 */
async function prefixOffTheStartupNode() {
  const node = new Redis(cluster.url, { maxRetriesPerRequest: 0 });
  try {
    for (let i = 0; i < 50; i++) {
      const prefix = uniquePrefix();
      const answer = await node.get(`{${prefix}}:bucket`).then(() => 'here', (/** @type {Error} */ error) => error.message);
      if (answer.startsWith('MOVED')) return prefix;
    }
    throw new Error('no prefix off the startup node in 50 tries');
  } finally {
    node.disconnect();
  }
}

/**
 * Every key of a prefix, per primary (SCAN sees one node's keys).
 * @param {string} prefix
 */
async function keysPerPrimary(prefix) {
  return Promise.all((await primaries(redis)).map((node) => node.keys(`{${prefix}}*`)));
}

test('a campaign goes end to end on a three-primary cluster: every device delivered once, the campaign completed', async () => {
  const prefix = await prefixOffTheStartupNode();
  cleanups.push(() => deletePrefix(redis, prefix));
  const env = testEnv({ prefix, snsUrl: sns.url, REDIS_URL: cluster.url, REDIS_CLUSTER: 'true', SEND_RATE: '1000', SEGMENT_SIZE: '40' });
  assert.equal((await primaries(redis)).length, 3, 'three primaries');

  // Without the setting, the same URL is one node that does not hold the prefix's slot.
  const single = await pushctl(['rate'], { ...env, REDIS_CLUSTER: 'false' });
  assert.equal(single.code, 1, `a single-node connection cannot work here: ${single.stdout} ${single.stderr}`);
  assert.match(single.stderr, /MOVED/);

  const audience = await makeAudience(DEVICES);
  cleanups.push(() => audience.remove());
  const message = await makeMessage(audience.dir);
  const worker = await startWorker(env);
  cleanups.push(() => worker.stop());

  const sent = await pushctl(['send', '--audience', audience.path, '--message', message, '--yes', '--json'], env);
  assert.equal(sent.code, 0, sent.stderr);
  const { id, devices } = JSON.parse(sent.stdout);
  assert.equal(devices, DEVICES);
  const watched = await pushctl(['status', id, '--watch', '--exit-status'], env);
  assert.equal(watched.code, 0, `the campaign completed: ${watched.stdout} ${watched.stderr}\n${worker.output()}`);

  const status = await pushctl(['status', id, '--json'], env);
  assert.equal(status.code, 0, status.stderr);
  const progress = JSON.parse(status.stdout);
  assert.equal(progress.state, 'completed');
  assert.equal(progress.delivered, DEVICES);
  assert.equal(progress.failed + progress.disabled + progress.expired + progress.cancelled, 0);
  for (let i = 0; i < DEVICES; i++) assert.equal(sns.emulator.deliveryCount(deviceArn(i)), 1, `device ${i} delivered exactly once`);
  const published = sns.emulator.stats();
  assert.equal(published.published, DEVICES, 'no other publish');
  assert.equal(published.duplicateTargets, 0);

  // Ours and BullMQ's keys share the {prefix} slot: all on one primary, the one MOVED named.
  const perPrimary = await keysPerPrimary(prefix);
  const holders = perPrimary.filter((keys) => keys.length > 0);
  assert.equal(holders.length, 1, `one primary holds the prefix: ${perPrimary.map((keys) => keys.length)}`);
  assert.ok(holders[0].includes(redisKeys(prefix).campaign(id).outcomes), 'the outcome bitfield');
  assert.ok(holders[0].some((key) => key.startsWith(`${redisKeys(prefix).bullPrefix}:segments:`)), 'BullMQ\'s segment queue');

  // The worker stops cleanly (SIGTERM) on a cluster too.
  await worker.stop();
  assert.equal(worker.child.exitCode, 0, worker.output());

  // deletePrefix visits every primary.
  await deletePrefix(redis, prefix);
  assert.deepEqual((await keysPerPrimary(prefix)).flat(), []);
});

test('the token bucket and the governor steer one rate on the cluster', async () => {
  const prefix = await prefixOffTheStartupNode();
  cleanups.push(() => deletePrefix(redis, prefix));
  const env = testEnv({ prefix, snsUrl: sns.url, REDIS_URL: cluster.url, REDIS_CLUSTER: 'true' });

  const set = await pushctl(['rate', '250'], env);
  assert.equal(set.code, 0, set.stderr);
  const bucket = createTokenBucket(redis, { keyPrefix: prefix, sendRate: 100, sendBurst: 5 });
  assert.equal((await bucket.settings()).rate, 250, 'pushctl rate wrote the shared rate');
  // A fresh bucket is full (burst 5% of 250, rounded up: 13): a take gets that many at most.
  const first = await bucket.takeTransactional(100);
  assert.ok(first.granted >= 1 && first.granted <= 13, `granted ${first.granted}`);
  assert.equal((await bucket.settings()).grantedTransactional, first.granted);

  // A governor takes the lease and writes its rate, which pushctl then reads.
  /** @type {any[]} */
  const lines = [];
  const governor = createGovernor({
    redis, keyPrefix: prefix, bucket,
    controller: { update: () => ({ rate: 42, reason: /** @type {const} */ ('plan') }) },
    readGateway: async () => null,
    logger: createLogger({ logLevel: 'info' }, {}, { write: (line) => { lines.push(JSON.parse(line)); } }),
    tickMs: 100, leaseTtlMs: 1000
  });
  governor.start();
  cleanups.push(() => governor.stop());
  await waitFor(async () => (await bucket.settings()).rate === 42, { timeoutMs: 10_000, what: 'the governor\'s rate' });
  assert.ok(await redis.exists(redisKeys(prefix).governorLease), 'its lease is in Redis');
  assert.ok(lines.some((line) => line.msg === 'governor lease acquired: steering the rate'));
  const shown = await pushctl(['rate', '--json'], env);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(JSON.parse(shown.stdout).rate, 42);
  await governor.stop();
  assert.equal(await redis.exists(redisKeys(prefix).governorLease), 0, 'a clean stop releases the lease');
});

test('a database in REDIS_URL is refused with REDIS_CLUSTER=true, and a dead startup node says why', async () => {
  const env = testEnv({ prefix: uniquePrefix(), snsUrl: sns.url, REDIS_URL: `${cluster.url}/2`, REDIS_CLUSTER: 'true' });
  const refused = await pushctl(['rate'], env);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /REDIS_URL names database 2, but a Redis Cluster has only database 0/);

  // A port nothing listens on: the startup node's own error, not ioredis's "Connection is closed."
  const deadUrl = 'redis://127.0.0.1:1';
  const dead = createRedis({ url: deadUrl, cluster: true }, { failFast: true, name: 'pushpace:cluster-test' });
  try {
    await assert.rejects(assertRedisReachable(dead, { url: deadUrl, cluster: true }), /Redis is not reachable at redis:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  } finally {
    dead.disconnect();
  }
  const unreachable = await pushctl(['rate'], { ...env, REDIS_URL: deadUrl });
  assert.equal(unreachable.code, 1, unreachable.stderr);
  assert.match(unreachable.stderr, /ECONNREFUSED/);
});
