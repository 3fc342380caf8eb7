// Sends one event's message to its devices through the transactional lane of the
// shared token bucket: a reserve campaigns never touch, plus first claim on the rest
// (shared/lua/take-tokens.lua), so a handful of devices goes out within milliseconds
// even while a large campaign holds the bucket at its rate. Total sends still never
// exceed the rate: both lanes draw from the same tokens.
import { TransientError } from '../errors.js';
import { createRenderer } from '../message.js';
import { redisKeys } from '../redis.js';
import { publish } from '../sns-client.js';
import { createWakeableSleep, backoff } from '../send-timing.js';

/** @typedef {import('../types.js').Device} Device */
/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('./event-ledger.js').EndpointOutcome} EndpointOutcome */
/** @typedef {{ device: Device, attempts: number, throttles: number, notBefore: number }} PendingSend */

/**
 * @typedef {object} SendReport
 * @property {number} delivered
 * @property {number} disabled       SNS said EndpointDisabled; the endpoint is now in the disabled set
 * @property {number} failed         permanent errors (an invalid parameter, say); never retried
 * @property {number} throttled      throttling answers, each retried after a backoff
 * @property {number} retried        5xx and network errors, each retried after a backoff
 * @property {string[]} failureReasons distinct permanent-error reasons, endpoint ARNs removed (at most 3)
 * @property {number | null} lastAnswerAt ms since the epoch of the last SNS answer
 * @property {'aborted' | 'expired' | null} stopped why sending stopped before every device had an outcome
 */

// One event goes to a handful of devices; this bounds a large one's share of the
// process's sockets (PUBLISH_CONCURRENCY) so other events are not starved.
const MAX_IN_FLIGHT = 32;
// When the bucket is short, asking again sooner than this only adds Redis round trips.
const MIN_TAKE_INTERVAL_MS = 10;
// Throttling is backpressure rather than failure, so it does not use up attempts; but
// an event must not hold its consumer slot forever: after this many, it is retried later.
const MAX_THROTTLES = 8;
const ARN = /arn:aws[\w:/.+=@-]*/g;

/**
 * @param {object} deps
 * @param {import('../token-bucket.js').TokenBucket} deps.bucket
 * @param {import('@aws-sdk/client-sns').SNSClient} deps.sns
 * @param {import('ioredis').Redis} deps.redis for the disabled-endpoints set
 * @param {{ keyPrefix: string, sendAttempts: number }} deps.config
 * @param {() => number} [deps.now]
 */
export function createTransactionalSender({ bucket, sns, redis, config, now = Date.now }) {
  const disabledKey = redisKeys(config.keyPrefix).disabledEndpoints;

  /**
   * Sends `message` to every device once. `record` is awaited after each final
   * outcome (delivered, disabled, failed) before the send counts as finished.
   * Returns early, with `stopped` set, when `signal` aborts (shutdown) or `expiresAt`
   * passes; sends already in flight always land and are recorded first. Throws
   * TransientError when some devices kept failing with 5xx, network errors or
   * throttling: the caller retries the event later, and `record` will have kept
   * the ones that got through.
   * @param {object} job
   * @param {Message} job.message
   * @param {Device[]} job.devices
   * @param {(device: Device, outcome: EndpointOutcome) => Promise<void>} job.record
   * @param {AbortSignal} job.signal
   * @param {number} [job.expiresAt] ms since the epoch
   * @returns {Promise<SendReport>}
   */
  async function send({ message, devices, record, signal, expiresAt }) {
    const render = createRenderer(message);
    /** @type {SendReport} */
    const report = { delivered: 0, disabled: 0, failed: 0, throttled: 0, retried: 0, failureReasons: [], lastAnswerAt: null, stopped: null };
    /** @type {PendingSend[]} */
    let pending = devices.map((device) => ({ device, attempts: 0, throttles: 0, notBefore: 0 }));
    /** @type {PendingSend[]} */
    const exhausted = [];
    /** @type {unknown[]} */
    const errors = [];
    let lastReason = '';
    let inFlight = 0;

    // Sleeps end early when a send completes or the signal aborts.
    const { sleep, wake } = createWakeableSleep();
    const onAbort = wake;
    signal.addEventListener('abort', onAbort);

    /** @param {PendingSend} item */
    const launch = async (item) => {
      inFlight++;
      const { device } = item;
      try {
        const { message: text, attributes } = render(device.platform, device.locale);
        const result = await publish(sns, { targetArn: device.endpointArn, message: text, attributes });
        report.lastAnswerAt = now();
        if (result.kind === 'delivered') {
          await record(device, 'delivered');
          report.delivered++;
        } else if (result.kind === 'disabled') {
          // Left out of every later campaign and event, as the campaign workers do.
          await redis.sadd(disabledKey, device.endpointArn);
          await record(device, 'disabled');
          report.disabled++;
        } else if (result.kind === 'permanent') {
          await record(device, 'failed');
          report.failed++;
          const reason = (result.reason ?? 'unknown').replace(ARN, '[endpoint]');
          if (report.failureReasons.length < 3 && !report.failureReasons.includes(reason)) report.failureReasons.push(reason);
        } else if (result.kind === 'throttled') {
          report.throttled++;
          item.throttles++;
          lastReason = result.reason ?? 'throttled';
          retryLater(item, item.throttles > MAX_THROTTLES, item.throttles);
        } else {
          report.retried++;
          item.attempts++;
          lastReason = result.reason ?? 'transient error';
          retryLater(item, item.attempts >= config.sendAttempts, item.attempts);
        }
      } catch (error) {
        // Recording failed (Redis gone for good) or a bug: the event is retried, and
        // this device may be sent again, which is the best that can be done.
        errors.push(error);
      } finally {
        inFlight--;
        wake();
      }
    };

    /** @param {PendingSend} item @param {boolean} givenUp @param {number} attempt */
    const retryLater = (item, givenUp, attempt) => {
      if (givenUp) {
        exhausted.push(item);
      } else {
        item.notBefore = now() + backoff(attempt);
        pending.push(item);
      }
    };

    /** @type {unknown} */
    let loopError = null;
    try {
      let nextTakeAt = 0;
      while (pending.length > 0 || inFlight > 0) {
        if (signal.aborted) { report.stopped = 'aborted'; break; }
        const t = now();
        // The last check before a send: what arrives late is better not shown at all.
        if (expiresAt !== undefined && expiresAt <= t && pending.length > 0) { report.stopped = 'expired'; break; }
        const ready = pending.filter((p) => p.notBefore <= t);
        const free = MAX_IN_FLIGHT - inFlight;
        let waitMs = Infinity;
        if (ready.length > 0 && free > 0) {
          if (t >= nextTakeAt) {
            const want = Math.min(ready.length, free);
            const grant = await bucket.takeTransactional(want);
            if (grant.granted > 0) {
              const launched = new Set(ready.slice(0, grant.granted));
              pending = pending.filter((p) => !launched.has(p));
              for (const item of launched) void launch(item);
            }
            if (grant.granted < want) {
              nextTakeAt = now() + Math.max(grant.waitMs, MIN_TAKE_INTERVAL_MS);
              waitMs = nextTakeAt - now();
            } else {
              continue;
            }
          } else {
            waitMs = nextTakeAt - t;
          }
        }
        for (const p of pending) if (p.notBefore > t) waitMs = Math.min(waitMs, p.notBefore - t);
        if (inFlight > 0 || waitMs !== Infinity) await sleep(waitMs);
      }
    } catch (error) {
      loopError = error; // Redis lost mid-take: still land what is in flight first
    }
    // However the loop ended, the sends in flight land and are recorded, so a
    // redelivery of the event does not send them again.
    while (inFlight > 0) await sleep(Infinity);
    signal.removeEventListener('abort', onAbort);

    if (loopError) throw loopError;
    if (errors.length > 0) {
      throw new TransientError(`${errors.length} send(s) could not be recorded: ${/** @type {Error} */ (errors[0])?.message}`, { cause: errors[0] });
    }
    if (exhausted.length > 0 && report.stopped === null) {
      throw new TransientError(`${exhausted.length} of ${devices.length} endpoint(s) not sent after retries: ${lastReason.replace(ARN, '[endpoint]')}`);
    }
    return report;
  }

  return { send };
}

/** @typedef {ReturnType<typeof createTransactionalSender>} TransactionalSender */
