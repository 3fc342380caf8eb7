// Redis connections, the key layout and the Lua scripts, in one place.
// Every key carries the hash tag {prefix}, so the scripts (which touch several
// keys at once) also run on Redis Cluster, where all of them share one slot.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { redactUrl } from '../config/index.js';
import { UnavailableError } from './errors.js';

const SCRIPTS = {
  takeTokens: { file: 'take-tokens.lua', keys: 3 },
  recordOutcomes: { file: 'record-outcomes.lua', keys: 4 },
  finishSegment: { file: 'finish-segment.lua', keys: 2 },
  setState: { file: 'set-state.lua', keys: 1 },
  setRate: { file: 'set-rate.lua', keys: 1 },
  eventLease: { file: 'event-lease.lua', keys: 1 },
  governorRenew: { file: 'governor-renew.lua', keys: 1 },
  governorRelease: { file: 'governor-release.lua', keys: 1 }
};

/**
 * @typedef {Redis & {
 *   takeTokens(bucket: string, lane: string, leases: string, want: number, rate: number, burst: number, segment: number | '', pass: string, laneName: 'c' | 't', share: number): Promise<[number, number, string, number]>,
 *   setRate(bucket: string, rate: number, burst: number): Promise<number>,
 *   eventLease(key: string, mode: string, owner: string, leaseMs: number, ttlMs: number, eventId: string): Promise<any>,
 *   recordOutcomes(campaign: string, outcomes: string, failures: string, disabled: string, ...args: (string | number)[]): Promise<number>,
 *   finishSegment(campaign: string, segments: string, mode: 'segment' | 'enqueued', n: number, dropped: number): Promise<string>,
 *   setState(campaign: string, state: string, ...from: string[]): Promise<string>,
 *   governorRenew(lease: string, holder: string, ttlMs: number): Promise<number>,
 *   governorRelease(lease: string, holder: string): Promise<number>
 * }} PushRedis
 */

/**
 * Opens a Redis connection with the project's scripts defined on it.
 * `failFast` is for short-lived commands (pushctl): the first failed connect
 * rejects pending commands instead of retrying forever, so the CLI can exit 1.
 * @param {string} url
 * @param {{ failFast?: boolean, name?: string }} [options]
 * @returns {PushRedis}
 */
export function createRedis(url, { failFast = false, name = 'pushpace' } = {}) {
  const redis = new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: failFast ? 0 : null,
    enableOfflineQueue: true,
    retryStrategy: failFast ? () => null : (times) => Math.min(times * 200, 5000)
  });
  // Connection errors surface on commands; an 'error' listener keeps them from
  // crashing the process as unhandled events while ioredis reconnects.
  redis.on('error', () => {});
  for (const [command, { file, keys }] of Object.entries(SCRIPTS)) {
    const lua = readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8');
    redis.defineCommand(command, { numberOfKeys: keys, lua });
  }
  return /** @type {PushRedis} */ (redis);
}

/**
 * Checks that Redis answers, turning a refusal into an UnavailableError that names the URL.
 * @param {Redis} redis
 * @param {string} url
 * @param {number} [timeoutMs]
 */
export async function assertRedisReachable(redis, url, timeoutMs = 3000) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs); })
    ]);
  } catch (error) {
    const reason = /** @type {any} */ (error)?.code ?? /** @type {Error} */ (error).message;
    throw new UnavailableError(`Redis is not reachable at ${redactUrl(url)} (${reason}); is redis-server running?`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Logs a warning when Redis keeps nothing on disk: a restart would then lose
 * queued segments and campaign state. Managed Redis often forbids CONFIG; then
 * nothing is said.
 * @param {Redis} redis
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
 * @param {Redis} redis
 * @param {string} prefix
 */
export async function deletePrefix(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 5000);
    if (keys.length) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
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
    campaigns: `${tag}:campaigns`,
    disabledEndpoints: `${tag}:endpoints:disabled`,
    /** Which governor process steers the rate: its id, with a TTL (shared/governor-lease.js). */
    governorLease: `${tag}:governor:lease`,
    /** An event's idempotency record. @param {string} idempotencyKey */
    event: (idempotencyKey) => `${tag}:event:${idempotencyKey}`,
    /** @param {string} id */
    campaign(id) {
      const base = `${tag}:campaign:${id}`;
      return {
        hash: base,
        outcomes: `${base}:outcomes`,
        failures: `${base}:failures`,
        leases: `${base}:leases`,
        segments: `${base}:segments`
      };
    }
  };
}
