// Sends one segment of a campaign: takes tokens from the campaign lane of the shared
// bucket, publishes to SNS with bounded concurrency (the loop in send-paced.js) and
// records each device's outcome once.
//
// Each device is sent at most once per campaign: outcomes already recorded (by an
// earlier pass over this segment) are skipped, a send holds its slot until its outcome
// is written (outcome-recorder.js), and a pass whose queue lock lapsed is fenced off by
// a lease checked on every token take. So after a crash only the sends in flight can go
// out twice.
//
// Deadlines: nothing is published at or after the segment's deadline. The sender
// checks it before each token take and again just before each publish; when it has
// passed, every device of the segment not yet sent (nor in flight) is recorded as
// expired, once, like any other outcome. Each publish carries the seconds left to
// the deadline as the platforms' TTL, so SNS, APNs and FCM drop it rather than
// deliver it late to a phone that was offline.
import { setMaxListeners } from 'node:events';
import { TransientError } from '../errors.js';
import { createRenderer, ttlAttributes, MAX_TTL_SECONDS } from '../sns/message.js';
import { createOutcomeRecorder } from './outcome-recorder.js';
import { createWakeableSleep } from './send-timing.js';
import { sendPaced } from './send-paced.js';

/** @typedef {import('../types.js').Segment} Segment */
/** @typedef {import('../types.js').HandlerResult} HandlerResult */
/** @typedef {import('../campaign/campaign-store.js').CampaignStore} CampaignStore */
/** @typedef {import('../token-bucket.js').TokenBucket} TokenBucket */
/** @typedef {import('../sns/sns-client.js').SnsClient} SnsClient */

// Asking Redis for tokens more often than this buys nothing: the bucket refills
// continuously, so a short wait just collects a larger grant in one round trip.
const MIN_TAKE_INTERVAL_MS = 25;
const PAUSED_RECHECK_MS = 2000;
// A segment the queue hands out this close before its release time is held here
// rather than handed back (clocks of the producer and the worker may differ a little).
const EARLY_HOLD_MS = 1000;
// A publish is started only while this much time is left before the deadline, so the
// request reaches SNS before it (a publish takes a few ms on a warm connection; the
// TTL attribute, 0 by then, makes APNs and FCM drop one that is slower still).
const DEADLINE_MARGIN_MS = 100;

/**
 * @param {object} deps
 * @param {CampaignStore} deps.store
 * @param {TokenBucket} deps.bucket
 * @param {SnsClient} deps.sns
 * @param {import('pino').Logger} deps.logger
 * @param {{ publishConcurrency: number, workerConcurrency: number, sendAttempts: number }} deps.config
 */
export function createSegmentSender({ store, bucket, sns, logger, config }) {
  const slotsPerSegment = Math.max(1, Math.ceil(config.publishConcurrency / config.workerConcurrency));
  const throttle = createThrottle();
  /** @type {Map<string, ReturnType<typeof createRenderer>>} */
  const renderers = new Map();
  // Aborted by stop(); every segment in progress listens, so no listener limit applies.
  const stopping = new AbortController();
  setMaxListeners(Infinity, stopping.signal);

  /** @param {string} campaignId @param {import('../types.js').Message} message */
  function rendererFor(campaignId, message) {
    let render = renderers.get(campaignId);
    if (!render) {
      if (renderers.size >= 100) renderers.delete(/** @type {string} */ (renderers.keys().next().value));
      render = createRenderer(message);
      renderers.set(campaignId, render);
    }
    return render;
  }

  /**
   * @param {Segment} segment
   * @returns {Promise<HandlerResult>}
   */
  async function send(segment) {
    const { campaignId, index, firstSeq, devices } = segment;
    const log = logger.child({ campaignId, segment: index });
    const campaign = await store.get(campaignId);
    if (!campaign) {
      log.warn('segment of an unknown campaign dropped');
      return;
    }
    // Segments enqueued before deadlines existed carry none; the campaign's own applies then.
    // A cancelled or failed campaign's leftovers are counted as such, not as expired.
    const live = campaign.state === 'running' || campaign.state === 'paused';
    const deadlineAt = live ? segment.deadlineAt ?? campaign.deadlineAt : null;
    const early = live ? await waitForRelease(segment.releaseAt, deadlineAt) : undefined;
    if (early) return early;
    const render = rendererFor(campaignId, campaign.message);
    const ttlFor = ttlAttributesUntil(deadlineAt, campaign.message.ttlSeconds);
    const lease = { segment: index, pass: await store.claimSegment(campaignId, index) };
    const done = await store.doneFlags(campaignId, firstSeq, devices.length, campaign.outcomeBits);

    /** @type {number[]} indices into devices of those not yet sent */
    const unsent = [];
    for (let i = 0; i < devices.length; i++) if (!done[i]) unsent.push(i);
    const skippedAsDone = devices.length - unsent.length;
    const outcomes = createOutcomeRecorder(store, campaignId, log);
    const counts = { delivered: 0, disabled: 0, failed: 0, expired: 0, throttled: 0, transient: 0 };
    const pastDeadline = () => deadlineAt !== null && Date.now() + DEADLINE_MARGIN_MS >= deadlineAt;
    /** @param {number} i */
    const expire = (i) => {
      void outcomes.add({ seq: firstSeq + i, ...kept(devices[i]), outcome: 'expired' }); // not sent: nothing to resend
      counts.expired++;
    };

    /** @param {number} i @returns {Promise<import('./send-paced.js').SendResult>} */
    const sendTo = async (i) => {
      const device = devices[i];
      try {
        // The token was granted in time, but the deadline may have passed since: never send late.
        if (pastDeadline()) {
          expire(i);
          return;
        }
        const rendered = render(device.platform, device.locale);
        const attributes = ttlFor ? ttlFor() : rendered.attributes;
        const result = await sns.publish({ targetArn: device.endpointArn, message: rendered.message, attributes });
        if (result.kind === 'delivered' || result.kind === 'disabled' || result.kind === 'permanent') {
          const outcome = result.kind === 'permanent' ? 'failed' : result.kind;
          counts[outcome]++;
          if (result.kind === 'delivered') throttle.succeeded();
          // The slot stays taken until the outcome is in Redis: only sends in flight can go out twice.
          await outcomes.add({ seq: firstSeq + i, ...kept(device), outcome, messageId: result.messageId, reason: result.reason });
          return;
        }
        if (result.kind === 'throttled') {
          throttle.throttled();
          counts.throttled++;
          return { retry: 'throttled' };
        }
        counts.transient++;
        return { retry: 'transient', reason: result.reason };
      } catch (error) {
        // A bug in rendering or bookkeeping must not strand the device or crash the process.
        log.error({ err: error }, 'send failed unexpectedly');
        counts.transient++;
        return { retry: 'transient', reason: /** @type {Error} */ (error).message };
      }
    };

    let gaveUp = 0;
    let run;
    try {
      run = await sendPaced({
        targets: unsent,
        take: (want) => bucket.take(campaignId, want, lease),
        send: sendTo,
        maxInFlight: () => throttle.limit(slotsPerSegment),
        takeInBatches: true,
        minTakeIntervalMs: MIN_TAKE_INTERVAL_MS,
        sendAttempts: config.sendAttempts,
        deadlineAt: deadlineAt === null ? null : deadlineAt - DEADLINE_MARGIN_MS,
        signal: stopping.signal,
        onGiveUp: (_i, reason) => {
          if (++gaveUp === 1) log.warn({ reason, attempts: config.sendAttempts }, 'send attempts used up; the segment will be retried');
        }
      });
    } catch (error) {
      // Redis went away mid-pass: the sends in flight have landed; record them before giving up.
      await outcomes.drain();
      throw error;
    }
    const { pending, exhausted } = run;
    let { halt } = run;
    // Past the deadline: what was not sent never will be. A throttled or failing send
    // that is waiting for its retry is not sent either.
    if (halt === null && exhausted.length > 0 && pastDeadline()) halt = 'expired';
    if (halt === 'expired') for (const i of [...pending.splice(0), ...exhausted.splice(0)]) expire(i);
    await outcomes.drain();

    const sent = counts.delivered + counts.disabled + counts.failed;
    log.debug({ ...counts, skippedAsDone, halt }, 'segment pass finished');
    switch (halt) {
      case 'expired':
        await store.finishSegment(campaignId, index, 0);
        log.info({ ...counts, skippedAsDone, size: devices.length }, 'segment stopped at its deadline; the rest expired');
        return;
      case 'aborted': // stop(): a SIGTERM
        return { deferMs: 0 };
      case 'paused':
        // Back at the deadline at the latest, to expire what is left then, paused or not.
        return { deferMs: deadlineAt === null ? PAUSED_RECHECK_MS
          : Math.max(0, Math.min(PAUSED_RECHECK_MS, deadlineAt - DEADLINE_MARGIN_MS - Date.now())) };
      case 'superseded':
        log.warn({ sent }, 'segment taken over by another pass (this worker stalled); stopped sending');
        return;
      case 'cancelled':
      case 'failed': {
        // Only the pass that owns the segment gets here (the take checks the lease before the
        // state), and each device is counted cancelled once, whichever pass drops it.
        const dropped = [...pending, ...exhausted].map((i) => ({ seq: firstSeq + i, ...kept(devices[i]) }));
        await store.dropSegment(campaign, index, dropped);
        log.info({ dropped: dropped.length, sent }, `segment dropped: campaign ${halt}`);
        return;
      }
      case null:
        break;
      default:
        log.warn({ state: halt }, 'segment dropped: campaign is not running');
        return;
    }
    if (exhausted.length > 0) {
      throw new TransientError(`${exhausted.length} of ${devices.length} devices could not be sent after ${config.sendAttempts} attempts (SNS unavailable)`);
    }
    await store.finishSegment(campaignId, index, 0);
    log.info({ ...counts, skippedAsDone, size: devices.length }, 'segment sent');
  }

  /**
   * A segment handed out before its release time (clock differences between hosts)
   * is held briefly or handed back until then; past its deadline it goes ahead, to
   * have its devices expired at once.
   * @param {number | undefined} releaseAt
   * @param {number | null} deadlineAt
   * @returns {Promise<HandlerResult>} a deferral, or undefined to go ahead
   */
  async function waitForRelease(releaseAt, deadlineAt) {
    const dueAt = deadlineAt === null || releaseAt === undefined ? releaseAt : Math.min(releaseAt, deadlineAt);
    if (dueAt === undefined || dueAt <= Date.now()) return;
    if (dueAt - Date.now() > EARLY_HOLD_MS) return { deferMs: dueAt - Date.now() };
    const { sleep, wake } = createWakeableSleep();
    stopping.signal.addEventListener('abort', wake);
    try {
      // One sleep lasts at most MAX_SLEEP_MS (send-timing.js), less than EARLY_HOLD_MS:
      // keep sleeping until the release, or a segment held 1 s would go out 750 ms early.
      while (!stopping.signal.aborted && Date.now() < dueAt) await sleep(dueAt - Date.now());
    } finally {
      stopping.signal.removeEventListener('abort', wake);
    }
    if (stopping.signal.aborted) return { deferMs: Math.max(0, dueAt - Date.now()) };
  }

  return {
    send,
    /** Stops taking tokens; running sends finish and their segments are handed back. */
    stop() {
      stopping.abort();
    }
  };
}

/**
 * The TTL message attributes for a publish now: the seconds left to the deadline,
 * rounded down (0 near the end, which APNs and FCM read as "now or never"), and never
 * more than the message's own ttlSeconds. Null when there is no deadline (the
 * rendered message's attributes apply). The attributes are rebuilt once per second.
 * @param {number | null} deadlineAt
 * @param {number | undefined} messageTtlSeconds
 */
function ttlAttributesUntil(deadlineAt, messageTtlSeconds) {
  if (deadlineAt === null) return null;
  const cap = Math.min(messageTtlSeconds ?? MAX_TTL_SECONDS, MAX_TTL_SECONDS);
  let seconds = -1;
  /** @type {ReturnType<typeof ttlAttributes>} */
  let attributes = ttlAttributes(0);
  return () => {
    const left = Math.min(cap, Math.max(0, Math.floor((deadlineAt - Date.now()) / 1000)));
    if (left !== seconds) {
      seconds = left;
      attributes = ttlAttributes(left);
    }
    return attributes;
  };
}

/**
 * Additive-increase, multiplicative-decrease on this process's concurrency when
 * SNS says Throttling: halve at once, grow back one slot per 20 deliveries.
 */
function createThrottle() {
  let factor = 1;
  let lastCut = 0;
  return {
    /** @param {number} max */
    limit: (max) => Math.max(1, Math.floor(max * factor)),
    throttled() {
      const now = Date.now();
      // Sends already in flight answer Throttling together; one cut per 500 ms.
      if (now - lastCut > 500) {
        factor = Math.max(0.05, factor / 2);
        lastCut = now;
      }
    },
    succeeded() {
      if (factor < 1) factor = Math.min(1, factor + 0.0025);
    }
  };
}

/**
 * What an outcome keeps of its device: the ARN, and for pushctl failures' export the
 * platform and user id (an audience line to resend to). The store drops them for delivered.
 * @param {import('../types.js').Device} device
 */
export function kept({ endpointArn, platform, userId }) {
  return { endpointArn, platform, ...(userId ? { userId } : {}) };
}
