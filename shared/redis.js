// Redis connections, the key layout and the Lua scripts, in one place.
// Every key carries the hash tag {prefix}, so the scripts (which touch several
// keys at once) also run on Redis Cluster, where all of them share one slot.
import { readFileSync } from 'node:fs';
import { Redis, Cluster } from 'ioredis';
import { clusterStartup, primaries } from './redis-cluster.js';
import { redactUrl } from './redact-url.js';
import { UnavailableError, ConfigError } from './errors.js';

const SCRIPTS = {
  takeTokens: { file: 'take-tokens.lua', keys: 3 },
  recordOutcomes: { file: 'record-outcomes.lua', keys: 5 },
  createCampaign: { file: 'create-campaign.lua', keys: 3 },
  finishSegment: { file: 'finish-segment.lua', keys: 10 },
  setState: { file: 'set-state.lua', keys: 10 },
  appendHistory: { file: 'append-history.lua', keys: 2 },
  setRate: { file: 'set-rate.lua', keys: 1 },
  eventLease: { file: 'event-lease.lua', keys: 1 },
  renewLease: { file: 'renew-lease.lua', keys: 1 },
  releaseLease: { file: 'release-lease.lua', keys: 1 },
  claimFire: { file: 'claim-fire.lua', keys: 4 },
  finishFire: { file: 'finish-fire.lua', keys: 4 },
  advanceSchedule: { file: 'advance-schedule.lua', keys: 1 },
  // As many keys as the schedule has recent fires: the caller passes the count first.
  removeSchedule: { file: 'remove-schedule.lua', keys: undefined },
  // Likewise: the index, then one campaign hash per id checked.
  forgetCampaigns: { file: 'forget-campaigns.lua', keys: undefined }
};

/**
 * A connection the project opened: one server, or a Redis Cluster (REDIS_CLUSTER=true).
 * Both speak the same commands; a cluster sends each to the primary of its key's slot.
 * @typedef {Redis | Cluster} RedisClient
 */

/**
 * @typedef {RedisClient & {
 *   takeTokens(bucket: string, lane: string, leases: string, want: number, rate: number, burst: number, segment: number | '', pass: string, laneName: 'c' | 't', share: number): Promise<[number, number, string, number]>,
 *   setRate(bucket: string, rate: number, burst: number): Promise<number>,
 *   eventLease(key: string, mode: string, owner: string, leaseMs: number, ttlMs: number, eventId: string): Promise<any>,
 *   recordOutcomes(campaign: string, outcomes: string, failures: string, disabled: string, undelivered: string, ...args: (string | number)[]): Promise<number>,
 *   createCampaign(campaign: string, campaigns: string, active: string, id: string, createdAt: number, ...fields: (string | number)[]): Promise<number>,
 *   finishSegment(campaign: string, segments: string, active: string, finished: string, outcomes: string, failures: string, releases: string, leases: string,
 *     undelivered: string, history: string,
 *     mode: 'segment' | 'enqueued', n: number, dropped: number, retentionMs: number): Promise<string>,
 *   setState(campaign: string, active: string, finished: string, outcomes: string, failures: string, releases: string, leases: string, segments: string,
 *     undelivered: string, history: string,
 *     state: string, error: string, retentionMs: number, ...from: string[]): Promise<string>,
 *   renewLease(lease: string, holder: string, ttlMs: number): Promise<number>,
 *   releaseLease(lease: string, holder: string): Promise<number>,
 *   claimFire(schedule: string, fire: string, lease: string, fires: string, at: number, holder: string, leaseMs: number, ttlMs: number, rev: string): Promise<[string, number]>,
 *   finishFire(schedule: string, fire: string, lease: string, fires: string, at: number, holder: string, state: string, campaignId: string, reason: string, finishedAt: number, ttlMs: number, keep: number, onlyIfUnclaimed: '0' | '1'): Promise<string>,
 *   advanceSchedule(schedule: string, after: number, rev: string, enabled: '' | '0' | '1'): Promise<number>,
 *   removeSchedule(numberOfKeys: number, ...keysThenArgs: string[]): Promise<string[] | -1>,
 *   forgetCampaigns(numberOfKeys: number, ...keysThenArgs: string[]): Promise<number>,
 *   appendHistory(campaign: string, history: string, stepMs: number, cap: number, force: '0' | '1', ...fields: (string | number)[]): Promise<number>
 * }} PushRedis
 */

/**
 * Where Redis is and how to trust it (config.redis): REDIS_URL, whether a `rediss://`
 * server's TLS certificate must verify (REDIS_TLS_REJECT_UNAUTHORIZED), and whether it is a
 * Redis Cluster whose startup node REDIS_URL names (REDIS_CLUSTER).
 * @typedef {{ url: string, tlsRejectUnauthorized?: boolean, cluster?: boolean }} RedisTarget
 */

/**
 * A plain ioredis connection to a target, with the options every connection the project
 * opens shares, ours and BullMQ's: the TLS check asked for (per connection, never the
 * process-wide NODE_TLS_REJECT_UNAUTHORIZED), an error listener, the refused-SELECT stop
 * and a record of the last connection error for assertRedisReachable. With `cluster`, an
 * ioredis Cluster with the same options on every node (shared/redis-cluster.js).
 * @param {RedisTarget | string} target  a bare URL verifies certificates
 * @param {{ name: string, failFast?: boolean }} options
 * @returns {RedisClient}
 */
export function openRedis(target, { name, failFast = false }) {
  const { url, tlsRejectUnauthorized = true, cluster = false } = typeof target === 'string' ? { url: target } : target;
  if (cluster) {
    const { startupNodes, options } = clusterStartup(url, { name, failFast, tlsRejectUnauthorized });
    const client = new Cluster(startupNodes, options);
    // The cluster's errors, kept for assertRedisReachable (one with a code is the most
    // telling). ioredis mostly drops its nodes' own socket errors (ECONNREFUSED, a certificate
    // code) and says "Connection is closed.": assertRedisReachable then asks the startup node.
    client.on('node error', (/** @type {Error & { code?: string }} */ error) => {
      if (error?.code || !lastConnectionError.has(client)) lastConnectionError.set(client, error);
    });
    client.on('error', (error) => {
      if (!lastConnectionError.has(client)) lastConnectionError.set(client, error);
    });
    // No refused-SELECT guard: a cluster has only database 0, and config/ refuses any other.
    return client;
  }
  // Heroku Key-Value Store and other managed Redis present a self-signed certificate: the
  // check is turned off for this connection only, and only when the operator asks.
  const tls = new URL(url).protocol === 'rediss:' && !tlsRejectUnauthorized ? { tls: { rejectUnauthorized: false } } : {};
  const redis = new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: failFast ? 0 : null,
    enableOfflineQueue: true,
    retryStrategy: failFast ? () => null : (times) => Math.min(times * 200, 5000),
    ...tls
  });
  // Connection errors surface on commands; an 'error' listener keeps them from
  // crashing the process as unhandled events while ioredis reconnects.
  redis.on('error', (error) => { lastConnectionError.set(redis, error); });
  stopOnRefusedDatabase(redis);
  return redis;
}

/**
 * Opens a Redis connection with the project's scripts defined on it.
 * `failFast` is for short-lived commands (pushctl): the first failed connect
 * rejects pending commands instead of retrying forever, so the CLI can exit 1.
 * @param {RedisTarget | string} target  config.redis; a bare URL verifies certificates
 * @param {{ failFast?: boolean, name?: string }} [options]
 * @returns {PushRedis}
 */
export function createRedis(target, { failFast = false, name = 'pushpace' } = {}) {
  const redis = openRedis(target, { name, failFast });
  for (const [command, { file, keys }] of Object.entries(SCRIPTS)) {
    const lua = readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
    // On a cluster, ioredis sends each call to the primary of its first key's slot; every
    // key a script gets shares the {prefix} tag, so all of them are in that slot.
    redis.defineCommand(command, { numberOfKeys: keys, lua });
  }
  return /** @type {PushRedis} */ (redis);
}

/** The last error each connection emitted: a failed command only says "Connection is closed.". */
/** @type {WeakMap<RedisClient, Error>} */
const lastConnectionError = new WeakMap();

/** Connections whose SELECT the server refused, with its answer. */
/** @type {WeakMap<RedisClient, Error>} */
const refusedDatabase = new WeakMap();

/**
 * ioredis SELECTs the URL's database on every connect, and when the server refuses it
 * (`/99` on a server with 16) it only emits an error and runs every command on database 0:
 * a campaign would land among another app's keys. A refused SELECT closes the connection
 * for good instead: its commands fail, none runs elsewhere, and assertRedisReachable says
 * why. For every connection the project opens, ours and BullMQ's.
 * @param {Redis} redis
 */
export function stopOnRefusedDatabase(redis) {
  redis.on('error', (/** @type {Error & { command?: { name: string } }} */ error) => {
    if (error?.command?.name !== 'select' || refusedDatabase.has(redis)) return;
    refusedDatabase.set(redis, error);
    redis.disconnect();
  });
}

/**
 * Checks that Redis answers, turning a refusal into an UnavailableError that names the URL,
 * a refused database into a ConfigError (exit 2) naming REDIS_URL, and a certificate that
 * failed verification into a ConfigError naming TLS and REDIS_TLS_REJECT_UNAUTHORIZED.
 * @param {RedisClient} redis
 * @param {RedisTarget | string} target  what the connection was opened with
 * @param {number} [timeoutMs]
 */
export async function assertRedisReachable(redis, target, timeoutMs = 3000) {
  const url = typeof target === 'string' ? target : target.url;
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs); })
    ]);
  } catch (error) {
    const refused = refusedDatabase.get(redis);
    if (refused) {
      throw new ConfigError(`REDIS_URL names a database this Redis does not have: SELECT ${new URL(url).pathname.slice(1)} was refused (${refused.message}); nothing was done`, { cause: refused });
    }
    let cause = lastConnectionError.get(redis) ?? /** @type {Error} */ (error);
    if (redis instanceof Cluster && typeof target !== 'string') cause = await startupNodeError(target, timeoutMs) ?? cause;
    throw unreachableError(url, cause);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why the startup node of a cluster refuses a plain connection, if it does. ioredis's
 * Cluster drops its nodes' socket errors (a refused port, a certificate that did not
 * verify) and says only "Connection is closed."; one connection to the startup node with
 * the same TLS settings gets the error with its code, for unreachableError to name.
 * @param {RedisTarget} target
 * @param {number} timeoutMs
 * @returns {Promise<Error | undefined>}
 */
async function startupNodeError(target, timeoutMs) {
  const probe = openRedis({ ...target, cluster: false }, { name: 'pushpace:probe', failFast: true });
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    await Promise.race([probe.ping(), new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs); })]);
    return undefined;
  } catch (error) {
    return lastConnectionError.get(probe) ?? /** @type {Error} */ (error);
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
}

// Node's codes for a certificate that did not verify (OpenSSL's X509 errors, and the host
// name check). Other TLS failures (a handshake with a server that speaks no TLS) are ERR_SSL_*.
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED', 'CERT_REJECTED', 'CERT_SIGNATURE_FAILURE', 'ERR_TLS_CERT_ALTNAME_INVALID'
]);

/**
 * Why a connection failed, said so that the fix is plain: TLS and certificate failures
 * name TLS (the old "is redis-server running?" sent people to the wrong place).
 * @param {string} url
 * @param {Error & { code?: string }} error  the connection's last error
 * @returns {ConfigError | UnavailableError}
 */
export function unreachableError(url, error) {
  const shown = redactUrl(url);
  const code = error?.code;
  if (code && CERTIFICATE_CODES.has(code)) {
    return new ConfigError(`Redis at ${shown}: its TLS certificate was rejected (${code}: ${error.message}). ` +
      'If your provider uses a self-signed certificate (Heroku Key-Value Store does), set REDIS_TLS_REJECT_UNAUTHORIZED=false ' +
      'to skip the certificate check for Redis only; nothing was done', { cause: error });
  }
  if (code?.startsWith('ERR_SSL') || code?.startsWith('ERR_TLS') || code === 'EPROTO') {
    return new UnavailableError(`Redis at ${shown}: the TLS handshake failed (${code}: ${error.message}); ` +
      'does the server speak TLS on this port? rediss:// is for TLS, redis:// for plain connections', { cause: error });
  }
  const reason = code ?? error?.message;
  // A plain connection to a TLS-only port is reset by the server at the first command; a TLS
  // handshake with a plain port gets no answer at all (the server waits for a command).
  const tls = new URL(url).protocol === 'rediss:';
  const hint = tls ? 'is redis-server running, with TLS on this port? (rediss:// is for TLS, redis:// for plain connections)'
    : code === 'ECONNRESET' ? 'if the server requires TLS, use a rediss:// URL' : 'is redis-server running?';
  return new UnavailableError(`Redis is not reachable at ${shown} (${reason}); ${hint}`, { cause: error });
}

/**
 * Logs a warning when Redis keeps nothing on disk: a restart would then lose
 * queued segments and campaign state. Managed Redis often forbids CONFIG; then
 * nothing is said. On a cluster it asks one primary, taken as typical of all.
 * @param {RedisClient} redis
 * @param {import('pino').Logger} logger
 */
export async function warnIfNotPersistent(redis, logger) {
  try {
    const [, appendonly] = /** @type {string[]} */ (await redis.config('GET', 'appendonly'));
    const [, save] = /** @type {string[]} */ (await redis.config('GET', 'save'));
    if (appendonly !== 'yes' && !save) {
      logger.warn('Redis has neither AOF nor snapshots enabled: a Redis restart loses queued segments and campaign progress');
    }
  } catch {
    // CONFIG is disabled: nothing to check.
  }
}

/**
 * Deletes every key of a KEY_PREFIX: ours and BullMQ's, which share the hash tag.
 * For tests, benchmarks and tearing down an environment; never called by the app.
 * On a cluster SCAN sees one node's keys, so it runs on every primary (the keys of one
 * prefix share a slot, so one primary has them all, but which one is the cluster's choice).
 * @param {RedisClient} redis
 * @param {string} prefix
 */
export async function deletePrefix(redis, prefix) {
  for (const node of await primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 5000);
      // One slot: a multi-key UNLINK is allowed on the node that owns it.
      if (keys.length) await node.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}

/**
 * The key layout. Names only; nothing here talks to Redis.
 * @param {string} prefix KEY_PREFIX
 */
export function redisKeys(prefix) {
  const tag = `{${prefix}}`;
  return {
    /** Prefix BullMQ puts before its own keys. */
    bullPrefix: `${tag}:bull`,
    bucket: `${tag}:bucket`,
    /** Every campaign id, scored by creation (ms). */
    campaigns: `${tag}:campaigns`,
    /** Ids of the campaigns not finished: running, paused, or cancelled and still dropping segments. */
    activeCampaigns: `${tag}:campaigns:active`,
    /** Finished campaigns scored by when they finished (ms), the last day's: their final numbers for metrics and charts. */
    finishedCampaigns: `${tag}:campaigns:finished`,
    disabledEndpoints: `${tag}:endpoints:disabled`,
    /** Which governor process steers the rate: its id, with a TTL (shared/governor/governor-lease.js). */
    governorLease: `${tag}:governor:lease`,
    /** The governor's last observations (JSON list, newest last): a new lease holder replays them (shared/governor/governor.js). */
    governorJournal: `${tag}:governor:journal`,
    /** What finished campaigns taught the governor (governor/model-memory.js), newest first. */
    modelMemory: `${tag}:model:memory`,
    /** The governor's live model, with a TTL of a few ticks: forecasts read it (shared/governor/live-model.js). */
    liveModel: `${tag}:model:live`,
    /** The baseline the governor saw by UTC hour, for forecasts of later campaigns (shared/governor/live-model.js). */
    baselineByHour: `${tag}:model:baseline-by-hour`,
    /** An event's idempotency record. @param {string} idempotencyKey */
    event: (idempotencyKey) => `${tag}:event:${idempotencyKey}`,
    /** Schedule ids, scored by when each was added (shared/scheduler/schedule-store.js). */
    schedules: `${tag}:schedules`,
    /** @param {string} id */
    schedule(id) {
      const base = `${tag}:schedule:${id}`;
      return {
        /** spec (JSON), rev, enabled, after: the cursor, fires at or before it are dealt with. */
        hash: base,
        /** Sorted set of recent fire instants (ms). */
        fires: `${base}:fires`,
        /** One fire's record: state, attempts, campaignId, reason. @param {number} at */
        fire: (at) => `${base}:fire:${at}`,
        /** Which scheduler holds a fire's claim, with a TTL. @param {number} at */
        fireLease: (at) => `${base}:fire:${at}:lease`
      };
    },
    /** @param {string} id */
    campaign(id) {
      const base = `${tag}:campaign:${id}`;
      return {
        hash: base,
        outcomes: `${base}:outcomes`,
        failures: `${base}:failures`,
        leases: `${base}:leases`,
        segments: `${base}:segments`,
        /** Local-time delivery: release instant -> { zones, devices } of that group. */
        releases: `${base}:releases`,
        /** Every device not delivered (disabled, failed, expired, cancelled), for pushctl failures; capped. */
        undelivered: `${base}:undelivered`,
        /** The report's compact time series: processed, rate limit, gateway p95 (campaign-history.js). */
        history: `${base}:history`
      };
    }
  };
}
