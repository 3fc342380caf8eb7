// What happens to one delivered event, from body to disposition: validate, claim its
// idempotency key, resolve devices, send, record. It never throws; the answer says
// what the consumer does with the AMQP message: ack it, dead-letter it with a reason,
// retry it later through the retry queue, or hand it straight back (shutdown).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PermanentError } from '../errors.js';
import { endpointField } from './event-ledger.js';
import { expiredReason } from './event-validator.js';

/** @typedef {import('./event-validator.js').NotificationEvent} NotificationEvent */
/** @typedef {import('./event-ledger.js').EventLedger} EventLedger */
/** @typedef {import('./event-ledger.js').Claim} Claim */

/**
 * @typedef {object} Delivery one AMQP message, as the consumer hands it over
 * @property {Buffer} body
 * @property {string} routingKey the key it was published with (kept across retries)
 * @property {number} [timestamp] the AMQP timestamp property, in ms since the epoch
 * @property {number} attempt 1 on the first delivery, one more each time it comes back from the retry queue
 */

/**
 * @typedef {{ action: 'ack' } | { action: 'dead', reason: string } | { action: 'retry', reason: string } | { action: 'requeue' }} Disposition
 */

/**
 * Deliveries of one event before a transient failure (SNS or PostgreSQL down) is
 * given up and dead-lettered. With the retry queue's delay and the backoff inside
 * each delivery, that is at least five minutes: a push later than that is rarely wanted,
 * and the dead-letter queue keeps it for an operator to move back.
 */
export const MAX_ATTEMPTS = 60;
const BUSY_POLL_MS = 50;

/**
 * @param {object} deps
 * @param {{ parse(body: Buffer | string): Promise<NotificationEvent> }} deps.validator
 * @param {{ resolve(event: NotificationEvent): Promise<import('./device-resolver.js').Recipients> }} deps.resolver
 * @param {EventLedger} deps.ledger
 * @param {import('./transactional-sender.js').TransactionalSender} deps.sender
 * @param {import('pino').Logger} deps.logger
 * @param {() => number} [deps.now]
 */
export function createEventProcessor({ validator, resolver, ledger, sender, logger, now = Date.now }) {
  /**
   * Handles one delivery. `signal` aborts at shutdown: waits stop, sends in flight
   * land, and the event is handed back for another process.
   * @param {Delivery} delivery
   * @param {AbortSignal} signal
   * @returns {Promise<Disposition>}
   */
  async function handle(delivery, signal) {
    const receivedAt = now();
    /** @type {Record<string, unknown>} */
    let fields = { routingKey: delivery.routingKey, attempt: delivery.attempt };
    /** @type {NotificationEvent} */
    let event;
    try {
      event = await validator.parse(delivery.body);
    } catch (error) {
      return failed(error, { ...peekIdentity(delivery.body), ...fields }, delivery.attempt);
    }
    fields = { id: event.id, type: event.type, ...fields };
    const key = event.idempotencyKey;
    const owner = randomBytes(8).toString('hex');

    /** @type {Claim | null} */
    let claim;
    try {
      claim = await claimWhenFree(event, owner, signal);
    } catch (error) {
      return failed(error, fields, delivery.attempt);
    }
    if (claim === null) return { action: 'requeue' };
    if (claim.state === 'done') {
      logger.info({ ...fields, duplicate: true }, 'event already sent');
      return { action: 'ack' };
    }
    const { sent } = /** @type {Extract<Claim, { state: 'claimed' }>} */ (claim);

    const lease = keepLease(key, owner);
    try {
      const expired = expiredReason(event, now());
      if (expired) throw new PermanentError(expired);
      const recipients = await resolver.resolve(event);
      const devices = recipients.devices.filter((d) => !sent.has(endpointField(d.endpointArn)));
      const report = await sender.send({
        message: event.message,
        devices,
        expiresAt: event.expiresAt,
        signal: AbortSignal.any([signal, lease.lost]),
        record: (device, outcome) => ledger.record(key, device.endpointArn, outcome)
      });
      if (report.stopped === 'expired') throw new PermanentError(expiredReason(event, now()) ?? 'expired');
      if (report.stopped === 'aborted') {
        if (lease.lost.aborted) {
          // This delivery stalled past its lease and a redelivery took over: it sends the rest.
          logger.warn({ ...fields, delivered: report.delivered }, 'event taken over by another delivery; stopped sending');
          return { action: 'ack' };
        }
        await ledger.release(key, owner).catch(() => {});
        return { action: 'requeue' };
      }
      await ledger.finish(key, owner);

      const publishedAt = event.publishedAt ?? delivery.timestamp;
      const answeredAt = report.lastAnswerAt ?? now();
      logger.info({
        ...fields,
        endpoints: recipients.devices.length,
        delivered: report.delivered,
        disabled: report.disabled,
        failed: report.failed,
        alreadySent: recipients.devices.length - devices.length,
        excluded: recipients.excluded,
        unknownUsers: recipients.unknownUsers.length,
        invalidDevices: recipients.invalidRows,
        retried: report.retried + report.throttled,
        ...(report.failureReasons.length > 0 ? { failureReasons: report.failureReasons } : {}),
        latencyMs: publishedAt === undefined ? null : answeredAt - publishedAt,
        processingMs: answeredAt - receivedAt
      }, 'event sent');
      return { action: 'ack' };
    } catch (error) {
      // Give the lease back so the retry, or a duplicate waiting on it, can go at once.
      await ledger.release(key, owner).catch(() => {});
      return failed(error, fields, delivery.attempt);
    } finally {
      lease.stop();
    }
  }

  /**
   * Claims the event's key, waiting while another delivery of it holds the lease
   * (a duplicate published twice, consumed by two slots or processes at once).
   * Resolves null when the signal aborts first.
   * @param {NotificationEvent} event
   * @param {string} owner
   * @param {AbortSignal} signal
   */
  async function claimWhenFree(event, owner, signal) {
    while (true) {
      const claim = await ledger.claim(event.idempotencyKey, owner, event.id);
      if (claim.state !== 'busy') return claim;
      try {
        await sleep(Math.min(claim.waitMs, BUSY_POLL_MS), undefined, { signal });
      } catch {
        return null;
      }
    }
  }

  /**
   * Renews the lease a third of the way into it, while the event is sent; `lost`
   * aborts when another delivery has taken the event over.
   * @param {string} key
   * @param {string} owner
   */
  function keepLease(key, owner) {
    const lost = new AbortController();
    const timer = setInterval(() => {
      ledger.renew(key, owner).then(
        (ours) => { if (!ours) lost.abort(new Error('lease lost')); },
        () => {} // Redis is away: keep sending; the sends' own records will say if it stays away
      );
    }, Math.max(100, Math.floor(ledger.leaseMs / 3)));
    return { lost: lost.signal, stop: () => clearInterval(timer) };
  }

  /**
   * @param {unknown} error
   * @param {Record<string, unknown>} fields
   * @param {number} attempt
   * @returns {Disposition}
   */
  function failed(error, fields, attempt) {
    const e = /** @type {any} */ (error);
    const message = String(e?.message ?? error);
    if (e?.code === 'PUSH_ERR_PERMANENT') {
      logger.warn({ ...fields, reason: message }, 'event dead-lettered');
      return { action: 'dead', reason: message };
    }
    if (attempt >= MAX_ATTEMPTS) {
      const reason = `gave up after ${attempt} attempts: ${message}`;
      logger.error({ ...fields, reason }, 'event dead-lettered');
      return { action: 'dead', reason };
    }
    // TransientError is expected (SNS or PostgreSQL down); anything else is a bug worth its stack.
    if (e?.code === 'PUSH_ERR_TRANSIENT') logger.warn({ ...fields, reason: message }, 'event will be retried');
    else logger.error({ ...fields, err: error }, 'event failed unexpectedly; will be retried');
    return { action: 'retry', reason: message };
  }

  return { handle };
}

/**
 * The id and type of an event that failed validation, when its body has them, so
 * the dead-letter log line can still be found by id.
 * @param {Buffer} body
 * @returns {{ id?: string, type?: string }}
 */
function peekIdentity(body) {
  try {
    const input = JSON.parse(body.toString('utf8'));
    return {
      ...(typeof input?.id === 'string' ? { id: input.id.slice(0, 200) } : {}),
      ...(typeof input?.type === 'string' ? { type: input.type.slice(0, 100) } : {})
    };
  } catch {
    return {};
  }
}

/** @typedef {ReturnType<typeof createEventProcessor>} EventProcessor */
