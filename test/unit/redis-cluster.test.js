// REDIS_CLUSTER: the setting, and how REDIS_URL becomes a Cluster's startup node and the
// options of every node (the cluster itself: test/integration/redis-cluster.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/index.js';
import { clusterStartup } from '../../shared/redis-cluster.js';

test('REDIS_CLUSTER: false unless set to true; anything else names the variable', () => {
  assert.equal(loadConfig({}).redis.cluster, false);
  assert.equal(loadConfig({ REDIS_CLUSTER: 'true' }).redis.cluster, true);
  assert.throws(() => loadConfig({ REDIS_CLUSTER: 'yes' }), /^ConfigError: REDIS_CLUSTER must be one of true, false, got "yes"/);
});

test('a database in REDIS_URL is refused under REDIS_CLUSTER=true: a cluster has only database 0', () => {
  assert.throws(() => loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://cache.example.com:6379/3' }),
    /^ConfigError: REDIS_URL names database 3, but a Redis Cluster has only database 0 \(REDIS_CLUSTER=true\): remove "\/3"/);
  assert.equal(loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://cache.example.com:6379/0' }).redis.url, 'redis://cache.example.com:6379/0');
  assert.equal(loadConfig({ REDIS_CLUSTER: 'true', REDIS_URL: 'redis://cache.example.com:6379' }).redis.cluster, true);
  // Without cluster mode a database stays allowed.
  assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/3' }).redis.cluster, false);
});

test('the startup node is REDIS_URL\'s host and port; credentials and the family go to every node', () => {
  const { startupNodes, options } = clusterStartup('redis://app:s%3Acret@cache.example.com:7000?family=6',
    { name: 'pushpace:worker', failFast: false, tlsRejectUnauthorized: true });
  assert.deepEqual(startupNodes, [{ host: 'cache.example.com', port: 7000 }]);
  assert.deepEqual(options.redisOptions, { connectionName: 'pushpace:worker', maxRetriesPerRequest: null, username: 'app', password: 's:cret', family: 6 });
  assert.equal(options.dnsLookup, undefined, 'no TLS: addresses as resolved');
  assert.equal(typeof options.clusterRetryStrategy, 'function');
  assert.equal(/** @type {Function} */ (options.clusterRetryStrategy)(3), 600, 'a worker keeps retrying');
  assert.deepEqual(clusterStartup('redis://[::1]', { name: 'x', failFast: false, tlsRejectUnauthorized: true }).startupNodes, [{ host: '::1', port: 6379 }]);
});

test('rediss://: TLS on every node, the certificate checked unless REDIS_TLS_REJECT_UNAUTHORIZED=false, by the URL\'s name', () => {
  const checked = clusterStartup('rediss://:token@clustercfg.shop.abc123.use1.cache.amazonaws.com:6379', { name: 'x', failFast: false, tlsRejectUnauthorized: true });
  assert.deepEqual(checked.options.redisOptions?.tls, { rejectUnauthorized: true });
  assert.equal(checked.options.redisOptions?.password, 'token');
  // The name is kept, not resolved, so the certificate is checked against it.
  /** @type {unknown[]} */
  let looked = [];
  checked.options.dnsLookup?.('clustercfg.shop.abc123.use1.cache.amazonaws.com', (...answer) => { looked = answer; });
  assert.deepEqual(looked, [null, 'clustercfg.shop.abc123.use1.cache.amazonaws.com']);
  const unchecked = clusterStartup('rediss://h:6380', { name: 'x', failFast: false, tlsRejectUnauthorized: false });
  assert.deepEqual(unchecked.options.redisOptions?.tls, { rejectUnauthorized: false });
});

test('failFast (pushctl): no retries, so a cluster nobody answers for fails at once', () => {
  const { options } = clusterStartup('redis://h', { name: 'x', failFast: true, tlsRejectUnauthorized: true });
  assert.equal(options.redisOptions?.maxRetriesPerRequest, 0);
  assert.equal(/** @type {Function} */ (options.clusterRetryStrategy)(1), null);
});
