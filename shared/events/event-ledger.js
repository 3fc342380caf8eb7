// Idempotency for events: one Redis hash per idempotencyKey, under the {prefix} hash
// tag, kept EVENT_DEDUPE_HOURS. It holds a lease (one delivery of an event sends at a
// time), each endpoint's outcome as its send completes, and a done marker after the
// last. A redelivered event skips the endpoints already sent, and a done one is acked
// without sending, so a crash mid-event resends at most the sends that were in flight.
import { createHash } from 'node:crypto';
import { redisKeys } from '../redis.js';

/** @typedef {import('../redis.js').PushRedis} PushRedis */
/** @typedef {'delivered' | 'disabled' | 'failed'} EndpointOutcome */
/**
 * @typedef {{ state: 'done' } | { state: 'busy', waitMs: number } | { state: 'claimed', sent: Map<string, string> }} Claim
 *   sent: endpoint field (see endpointField) -> outcome, for endpoints sent by earlier deliveries
 */

/**
 * The hash field for an endpoint: 96 bits of its SHA-256. Shorter than the ARN (a
 * week of events adds up) and not a device identifier anyone could read back.
 * @param {string} endpointArn
 */
export function endpointField(endpointArn) {
  return createHash('sha256').update(endpointArn).digest('base64url').slice(0, 16);
}

/**
 * @param {PushRedis} redis
 * @param {{ keyPrefix: string, dedupeHours: number, leaseMs?: number }} options
 *   leaseMs: how long a delivery may go without renewing before a redelivery takes over
 */
export function createEventLedger(redis, { keyPrefix, dedupeHours, leaseMs = 15_000 }) {
  /** @type {PushRedis['eventLease']} */
  const lease = (...args) => redis.eventLease(...args);
  const ttlMs = dedupeHours * 3_600_000;
  const keyOf = redisKeys(keyPrefix).event;

  return {
    leaseMs,
    keyOf,

    /**
     * Takes the event's lease for `owner` (one delivery's attempt), unless the event
     * is done or another delivery holds an unexpired lease.
     * @param {string} idempotencyKey
     * @param {string} owner
     * @param {string} eventId
     * @returns {Promise<Claim>}
     */
    async claim(idempotencyKey, owner, eventId) {
      const reply = /** @type {[string, ...(string | number)[]]} */ (await lease(keyOf(idempotencyKey), 'claim', owner, leaseMs, ttlMs, eventId));
      if (reply[0] === 'done') return { state: 'done' };
      if (reply[0] === 'busy') return { state: 'busy', waitMs: Number(reply[1]) };
      /** @type {Map<string, string>} */
      const sent = new Map();
      for (let i = 1; i < reply.length; i += 2) sent.set(String(reply[i]), String(reply[i + 1]));
      return { state: 'claimed', sent };
    },

    /**
     * Extends the lease; false once another delivery has taken the event over (this
     * one stalled past its lease) or finished it.
     * @param {string} idempotencyKey
     * @param {string} owner
     */
    async renew(idempotencyKey, owner) {
      return (await lease(keyOf(idempotencyKey), 'renew', owner, leaseMs, ttlMs, '')) === 1;
    },

    /**
     * Records one endpoint's outcome as soon as its send completes.
     * @param {string} idempotencyKey
     * @param {string} endpointArn
     * @param {EndpointOutcome} outcome
     */
    async record(idempotencyKey, endpointArn, outcome) {
      await redis.hset(keyOf(idempotencyKey), `e:${endpointField(endpointArn)}`, outcome);
    },

    /**
     * Marks the event done: every later delivery of the key is acked without sending.
     * @param {string} idempotencyKey
     * @param {string} owner
     */
    async finish(idempotencyKey, owner) {
      await lease(keyOf(idempotencyKey), 'finish', owner, leaseMs, ttlMs, '');
    },

    /**
     * Gives the lease up (the event goes back to the queue), so its redelivery need
     * not wait for the lease to lapse.
     * @param {string} idempotencyKey
     * @param {string} owner
     */
    async release(idempotencyKey, owner) {
      await lease(keyOf(idempotencyKey), 'release', owner, leaseMs, ttlMs, '');
    }
  };
}

/** @typedef {ReturnType<typeof createEventLedger>} EventLedger */
