// A Redis lease that makes one governor process, across all dynos, the one that
// steers the send rate. The holder renews it every ttl/3; if the holder dies the
// key expires and another governor's next acquire() takes it over.
//
// Besides asking Redis, the lease keeps a local deadline: ttlMs after the last
// successful acquire or renew was *sent*. Redis cannot expire the key before that
// moment (it set the TTL later than we sent the command), so while the deadline
// has not passed no other holder can exist, even when Redis is unreachable and
// renew() cannot tell us anything. valid() is what the governor checks before
// acting. (This ignores clock-rate drift between hosts, which is tiny against
// a TTL of seconds.)
import { performance } from 'node:perf_hooks';

/** @typedef {import('../redis.js').PushRedis} PushRedis */

/**
 * @param {PushRedis} redis
 * @param {{ key: string, holderId: string, ttlMs: number }} options
 */
export function createLease(redis, { key, holderId, ttlMs }) {
  if (!(Number.isInteger(ttlMs) && ttlMs >= 3)) throw new RangeError(`lease ttlMs must be a whole number of ms ≥ 3, got ${ttlMs}`);
  /** performance.now() after which the lease may no longer be ours; -Infinity when not held. */
  let validUntil = -Infinity;

  return {
    key,
    holderId,
    ttlMs,

    /** Takes the lease if nobody holds it (SET NX PX). Resolves whether it is ours now. */
    async acquire() {
      const sentAt = performance.now();
      const ok = (await redis.set(key, holderId, 'PX', ttlMs, 'NX')) === 'OK';
      if (ok) validUntil = sentAt + ttlMs;
      return ok;
    },

    /** Extends the lease only if it is still ours. Resolves false once it was lost. */
    async renew() {
      const sentAt = performance.now();
      const ok = (await redis.renewLease(key, holderId, ttlMs)) === 1;
      validUntil = ok ? sentAt + ttlMs : -Infinity;
      return ok;
    },

    /** Deletes the lease only if it is ours, so a successor can take over at once. */
    async release() {
      validUntil = -Infinity;
      return (await redis.releaseLease(key, holderId)) === 1;
    },

    /** Whether the lease is certainly still ours: acquired or renewed within the last ttlMs. */
    valid() {
      return performance.now() < validUntil;
    }
  };
}

/** @typedef {ReturnType<typeof createLease>} Lease */
