// The one distributed token bucket every worker process draws from. Its rate
// and burst live in Redis, so another process (pushctl rate, the governor) can
// change them while campaigns send; workers see the change on their next take.
import { InputError } from './errors.js';
import { redisKeys } from './redis.js';

/** @typedef {import('./redis.js').PushRedis} PushRedis */

/**
 * @typedef {object} Grant
 * @property {number} granted tokens taken; send exactly this many
 * @property {number} waitMs  when fewer than asked: ms until the next token is due
 * @property {string} state   the campaign's state; nothing is granted unless 'running'
 * @property {number} rate    effective sends/s for this campaign (bucket rate, capped by its max rate)
 */

/**
 * @param {PushRedis} redis
 * @param {{ keyPrefix: string, sendRate: number, sendBurst: number, transactionalShare?: number }} config
 */
export function createTokenBucket(redis, { keyPrefix, sendRate, sendBurst, transactionalShare = 0 }) {
  const keys = redisKeys(keyPrefix);

  return {
    /**
     * Takes up to `want` tokens for a campaign in one round trip. With a lease,
     * nothing is granted once another pass has claimed the segment.
     * @param {string} campaignId
     * @param {number} want
     * @param {{ segment: number, pass: string }} [lease]
     * @returns {Promise<Grant>}
     */
    async take(campaignId, want, lease) {
      const k = keys.campaign(campaignId);
      const [granted, waitMs, state, rateMilli] = await redis.takeTokens(
        keys.bucket, k.hash, k.leases, want, sendRate, sendBurst, lease?.segment ?? '', lease?.pass ?? '', 'c', transactionalShare);
      return { granted, waitMs, state, rate: rateMilli / 1000 };
    },

    /**
     * Takes up to `want` tokens for transactional sends: from the reserve campaigns
     * never touch, and with first claim on the rest (campaigns wait while these do).
     * @param {number} want
     * @returns {Promise<Grant>}
     */
    async takeTransactional(want) {
      const [granted, waitMs, state, rateMilli] = await redis.takeTokens(
        keys.bucket, keys.bucket, keys.bucket, want, sendRate, sendBurst, '', '', 't', transactionalShare);
      return { granted, waitMs, state, rate: rateMilli / 1000 };
    },

    /** The bucket's current rate and burst (config defaults until someone sets them), and tokens granted so far per lane. */
    async settings() {
      const [rate, burst, granted, grantedTx] = await redis.hmget(keys.bucket, 'rate', 'burst', 'granted', 'grantedTx');
      return {
        rate: rate === null ? sendRate : Number(rate),
        burst: burst === null ? sendBurst : Number(burst),
        granted: Number(granted ?? 0),
        grantedTransactional: Number(grantedTx ?? 0)
      };
    },

    /**
     * Changes the rate (and optionally the burst) for every worker at once.
     * Without a burst, the burst follows the rate (5% of a second's sends, at least 1).
     * @param {{ rate: number, burst?: number }} change
     */
    async set({ rate, burst }) {
      if (!(Number.isFinite(rate) && rate >= 0)) throw new InputError(`rate must be a number of sends per second ≥ 0, got ${rate}`);
      const newBurst = burst ?? Math.max(1, Math.ceil(rate * 0.05));
      if (!(Number.isInteger(newBurst) && newBurst >= 1)) throw new InputError(`burst must be a whole number ≥ 1, got ${burst}`);
      await redis.setRate(keys.bucket, rate, newBurst);
      return { rate, burst: newBurst };
    }
  };
}

/** @typedef {ReturnType<typeof createTokenBucket>} TokenBucket */
