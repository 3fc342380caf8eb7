// Sends one event's message to its devices through the transactional lane of the
// shared token bucket: a reserve campaigns never touch, plus first claim on the rest
// (shared/lua/take-tokens.lua), so a handful of devices goes out within milliseconds
// even while a large campaign holds the bucket at its rate. Total sends still never
// exceed the rate: both lanes draw from the same tokens.
import { TransientError } from '../errors.js';
import { createRenderer } from '../sns/message.js';
import { redisKeys } from '../redis.js';
import { sendPaced } from '../sending/send-paced.js';

/** @typedef {import('../types.js').Device} Device */
/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('./event-ledger.js').EndpointOutcome} EndpointOutcome */

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
 * @param {import('../sns/sns-client.js').SnsClient} deps.sns
 * @param {import('../redis.js').RedisClient} deps.redis for the disabled-endpoints set
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
   * @param {(device: Device, outcome: EndpointOutcome, messageId?: string) => Promise<void>} job.record
   *   messageId: SNS's, for a delivered send
   * @param {AbortSignal} job.signal
   * @param {number} [job.expiresAt] ms since the epoch
   * @returns {Promise<SendReport>}
   */
  async function send({ message, devices, record, signal, expiresAt }) {
    const render = createRenderer(message);
    /** @type {SendReport} */
    const report = { delivered: 0, disabled: 0, failed: 0, throttled: 0, retried: 0, failureReasons: [], lastAnswerAt: null, stopped: null };
    /** @type {unknown[]} */
    const errors = [];
    let lastReason = '';

    /** @param {Device} device @returns {Promise<import('../sending/send-paced.js').SendResult>} */
    const sendTo = async (device) => {
      try {
        const { message: text, attributes } = render(device.platform, device.locale);
        const result = await sns.publish({ targetArn: device.endpointArn, message: text, attributes });
        report.lastAnswerAt = now();
        if (result.kind === 'delivered') {
          await record(device, 'delivered', result.messageId);
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
          lastReason = result.reason ?? 'throttled';
          return { retry: 'throttled' };
        } else {
          report.retried++;
          lastReason = result.reason ?? 'transient error';
          return { retry: 'transient' };
        }
      } catch (error) {
        // Recording failed (Redis gone for good) or a bug: the event is retried, and
        // this device may be sent again, which is the best that can be done.
        errors.push(error);
      }
    };

    // Throws if Redis is lost mid-take, once the sends in flight have landed and been
    // recorded, so a redelivery of the event does not send them again.
    const { halt, exhausted } = await sendPaced({
      targets: devices,
      take: (want) => bucket.takeTransactional(want),
      send: sendTo,
      maxInFlight: () => MAX_IN_FLIGHT,
      minTakeIntervalMs: MIN_TAKE_INTERVAL_MS,
      sendAttempts: config.sendAttempts,
      maxThrottles: MAX_THROTTLES,
      // No token is taken once the event expired: what arrives late is better not shown at all.
      deadlineAt: expiresAt ?? null,
      signal,
      now
    });
    report.stopped = /** @type {SendReport['stopped']} */ (halt);

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
