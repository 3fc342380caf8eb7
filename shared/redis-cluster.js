// Redis Cluster (REDIS_CLUSTER=true): how REDIS_URL becomes an ioredis Cluster's startup
// node and options, and the primaries a command must visit when it is not about one key.
// Every key of a KEY_PREFIX carries the hash tag {prefix}, so all of them, ours and
// BullMQ's, live in one slot on one primary: the Lua scripts and pipelines touch several
// keys at once and need that. Only commands that name no key (SCAN) must visit every primary.
import { Cluster } from 'ioredis';

/**
 * The startup node and Cluster options for a REDIS_URL: its host and port are the startup
 * node (the client asks it for the others, CLUSTER SLOTS); credentials, TLS and the address
 * family apply to every node (ioredis's `redisOptions`). Pure, for tests.
 * @param {string} url  REDIS_URL (config/ refuses a database other than 0)
 * @param {{ name: string, failFast: boolean, tlsRejectUnauthorized: boolean }} options
 * @returns {{ startupNodes: { host: string, port: number }[], options: import('ioredis').ClusterOptions }}
 */
export function clusterStartup(url, { name, failFast, tlsRejectUnauthorized }) {
  const parsed = new URL(url);
  const tls = parsed.protocol === 'rediss:';
  // URL keeps [::1] bracketed; a socket wants the bare address.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const family = parsed.searchParams.get('family');
  /** @type {import('ioredis').ClusterOptions['redisOptions']} */
  const redisOptions = {
    connectionName: name,
    // BullMQ's blocking connections require null; a short-lived command (pushctl) fails at once.
    maxRetriesPerRequest: failFast ? 0 : null,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(family ? { family: Number(family) } : {}),
    ...(tls ? { tls: { rejectUnauthorized: tlsRejectUnauthorized } } : {})
  };
  return {
    startupNodes: [{ host, port: Number(parsed.port || 6379) }],
    options: {
      redisOptions,
      enableOfflineQueue: true,
      // failFast: the first failure to reach any node rejects what waits ("None of startup
      // nodes is available"), so pushctl can exit 1 instead of retrying forever.
      clusterRetryStrategy: failFast ? () => null : (times) => Math.min(times * 200, 5000),
      // With TLS, connect by the name in REDIS_URL rather than its resolved address, so the
      // certificate's name is checked against it (ioredis's advice for ElastiCache with TLS).
      ...(tls ? { dnsLookup: (address, callback) => callback(null, address) } : {})
    }
  };
}

/**
 * The connections a key-less command must run on: the primaries of a cluster (once it
 * knows them), or the one server.
 * @param {import('./redis.js').RedisClient} redis
 * @returns {Promise<import('ioredis').Redis[]>}
 */
export async function primaries(redis) {
  if (!(redis instanceof Cluster)) return [redis];
  // The node list is filled once the cluster is ready; PING waits for that.
  await redis.ping();
  return redis.nodes('master');
}
