// Managed Redis in cluster mode speaks TLS (ElastiCache and MemoryDB with in-transit
// encryption), often with a certificate that does not verify from outside. This file starts
// a three-primary cluster that speaks only TLS, with a self-signed certificate made here, and
// checks that REDIS_TLS_REJECT_UNAUTHORIZED reaches every node the cluster client discovers:
// refused by default with the error naming TLS and the setting (exit 2), working with
// `false`, for our connection and BullMQ's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRedis, deletePrefix } from '../../shared/redis.js';
import { createBullmqQueue } from '../../shared/queue/bullmq-queue.js';
import { primaries } from '../../shared/redis-cluster.js';
import { createLogger } from '../../shared/logger.js';
import { uniquePrefix, testEnv, pushctl, waitFor } from '../support/harness.js';
import { startRedisCluster } from '../support/local-redis-cluster.js';

/** @type {Awaited<ReturnType<typeof startRedisCluster>>} */
let cluster;

before(async () => {
  cluster = await startRedisCluster({ tls: true });
});

after(async () => {
  await cluster?.stop();
});

test('a self-signed certificate on a TLS cluster is refused by default, naming TLS and the setting (exit 2)', async () => {
  assert.match(cluster.url, /^rediss:\/\//);
  // No SNS is reached: pushctl rate talks to Redis only.
  const env = testEnv({ prefix: uniquePrefix(), snsUrl: 'http://127.0.0.1:9', REDIS_URL: cluster.url, REDIS_CLUSTER: 'true' });
  const run = await pushctl(['rate'], env);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /TLS certificate was rejected \(DEPTH_ZERO_SELF_SIGNED_CERT/);
  assert.match(run.stderr, /REDIS_TLS_REJECT_UNAUTHORIZED=false/);
});

test('REDIS_TLS_REJECT_UNAUTHORIZED=false reaches every node: pushctl, our scripts and BullMQ work over TLS', async () => {
  const prefix = uniquePrefix();
  const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9', REDIS_URL: cluster.url, REDIS_CLUSTER: 'true', REDIS_TLS_REJECT_UNAUTHORIZED: 'false' });
  const target = { url: cluster.url, tlsRejectUnauthorized: false, cluster: true };
  const redis = createRedis(target, { name: 'pushpace:cluster-tls-test' });
  const queue = createBullmqQueue({ redis: target, prefix: `{${prefix}}:bull`, name: 'tls', attempts: 1, logger: createLogger({ logLevel: 'silent' }) });
  try {
    const set = await pushctl(['rate', '321'], env);
    assert.equal(set.code, 0, set.stderr);
    const shown = await pushctl(['rate', '--json'], env);
    assert.equal(JSON.parse(shown.stdout).rate, 321);
    // Three TLS primaries were discovered from the one in REDIS_URL.
    assert.equal((await primaries(redis)).length, 3);
    /** @type {number[]} */
    const received = [];
    await queue.enqueue([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await queue.consume(async (payload) => { received.push(/** @type {{ n: number }} */ (payload).n); }, { concurrency: 2 });
    await waitFor(async () => received.length === 3, { timeoutMs: 10_000, what: 'three items over TLS' });
    assert.deepEqual(received.sort(), [1, 2, 3]);
  } finally {
    await queue.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
});
