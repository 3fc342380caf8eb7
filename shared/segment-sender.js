// Sends one segment of a campaign: takes tokens from the shared bucket, publishes
// to SNS with bounded concurrency and records each device's outcome once.
//
// Each device is sent at most once per campaign: outcomes already recorded (by an
// earlier delivery of this segment) are skipped, and outcomes are flushed as sends
// complete, so after a crash only the sends in flight can go out twice.
import { TransientError } from './errors.js';
import { publish } from './sns-client.js';
import { createRenderer } from './message.js';

/** @typedef {import('./types.js').Segment} Segment */
/** @typedef {import('./types.js').SendOutcome} SendOutcome */
/** @typedef {import('./types.js').HandlerResult} HandlerResult */
/** @typedef {import('./campaign-store.js').CampaignStore} CampaignStore */
/** @typedef {import('./token-bucket.js').TokenBucket} TokenBucket */
/** @typedef {import('@aws-sdk/client-sns').SNSClient} SNSClient */

// Asking Redis for tokens more often than this buys nothing: the bucket refills
// continuously, so a short wait just collects a larger grant in one round trip.
const MIN_TAKE_INTERVAL_MS = 25;
const PAUSED_RECHECK_MS = 2000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 5000;

/**
 * @param {object} deps
 * @param {CampaignStore} deps.store
 * @param {TokenBucket} deps.bucket
 * @param {SNSClient} deps.sns
 * @param {import('pino').Logger} deps.logger
 * @param {{ publishConcurrency: number, workerConcurrency: number, sendAttempts: number }} deps.config
 */
export function createSegmentSender({ store, bucket, sns, logger, config }) {
  const slotsPerSegment = Math.max(1, Math.ceil(config.publishConcurrency / config.workerConcurrency));
  const throttle = createThrottle();
  /** @type {Map<string, ReturnType<typeof createRenderer>>} */
  const renderers = new Map();
  /** @type {Set<() => void>} */
  const wakers = new Set();
  let stopping = false;

  /** @param {string} campaignId @param {import('./types.js').Message} message */
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
    const render = rendererFor(campaignId, campaign.message);
    const done = await store.doneFlags(campaignId, firstSeq, devices.length);

    /** @type {{ i: number, attempts: number, notBefore: number }[]} */
    let pending = [];
    for (let i = 0; i < devices.length; i++) if (!done[i]) pending.push({ i, attempts: 0, notBefore: 0 });
    const skippedAsDone = devices.length - pending.length;

    /** @type {SendOutcome[]} */
    let unflushed = [];
    /** @type {Promise<unknown> | null} */
    let flushing = null;
    let inFlight = 0;
    let unresolved = 0; // devices that ran out of attempts on throttling or transient errors
    let halt = /** @type {string | null} */ (null);
    let counts = { delivered: 0, disabled: 0, failed: 0, retried: 0 };

    let wake = () => {};
    const wakeUp = () => wake();
    wakers.add(wakeUp);

    const flush = () => {
      if (flushing || unflushed.length === 0) return flushing;
      const batch = unflushed;
      unflushed = [];
      const pass = store.recordOutcomes(campaignId, batch)
        .catch((error) => {
          // Keep them for the next flush; if Redis stays away the segment fails and is retried.
          unflushed.push(...batch);
          throw error;
        })
        .finally(() => { flushing = null; });
      pass.catch(() => {});
      flushing = pass;
      return pass;
    };

    /** @param {{ i: number, attempts: number, notBefore: number }} item */
    const launch = (item) => {
      const device = devices[item.i];
      const { message, attributes } = render(device.platform, device.locale);
      inFlight++;
      publish(sns, { targetArn: device.endpointArn, message, attributes }).then((result) => {
        inFlight--;
        const seq = firstSeq + item.i;
        if (result.kind === 'delivered' || result.kind === 'disabled' || result.kind === 'permanent') {
          const outcome = result.kind === 'permanent' ? 'failed' : result.kind;
          unflushed.push({ seq, endpointArn: device.endpointArn, outcome, messageId: result.messageId, reason: result.reason });
          counts[outcome]++;
          if (result.kind === 'delivered') throttle.succeeded();
        } else {
          if (result.kind === 'throttled') throttle.throttled();
          item.attempts++;
          counts.retried++;
          if (item.attempts >= config.sendAttempts) {
            unresolved++;
            log.warn({ reason: result.reason, attempts: item.attempts }, 'send attempts used up; the segment will be retried');
          } else {
            item.notBefore = Date.now() + backoff(item.attempts);
            pending.push(item);
          }
        }
        wake();
      });
    };

    try {
      let nextTakeAt = 0;
      while (true) {
        if (stopping) { halt = 'stopping'; break; }
        const now = Date.now();
        const limit = throttle.limit(slotsPerSegment);
        const free = limit - inFlight;
        const ready = pending.filter((p) => p.notBefore <= now);
        if (pending.length === 0 && inFlight === 0) break;

        let waitMs = Infinity;
        // Take tokens in batches: when a quarter of the slots are free, or nothing is in flight.
        if (ready.length > 0 && free > 0 && (free >= Math.ceil(limit / 4) || inFlight === 0) && now >= nextTakeAt) {
          const want = Math.min(ready.length, free);
          const grant = await bucket.take(campaignId, want);
          if (grant.state !== 'running') { halt = grant.state; break; }
          const launched = new Set(ready.slice(0, grant.granted));
          if (launched.size > 0) {
            pending = pending.filter((p) => !launched.has(p));
            for (const item of launched) launch(item);
          }
          if (grant.granted < want) {
            nextTakeAt = Date.now() + Math.max(grant.waitMs, MIN_TAKE_INTERVAL_MS);
            waitMs = nextTakeAt - Date.now();
          }
        } else if (ready.length > 0 && free > 0 && now < nextTakeAt) {
          waitMs = nextTakeAt - now;
        }
        if (ready.length < pending.length) {
          const soonest = Math.min(...pending.filter((p) => p.notBefore > now).map((p) => p.notBefore));
          waitMs = Math.min(waitMs, soonest - now);
        }
        flush();
        if (inFlight > 0 || waitMs !== Infinity) {
          await new Promise((resolve) => {
            const timer = waitMs === Infinity ? undefined : setTimeout(resolve, Math.max(1, waitMs));
            wake = () => { clearTimeout(timer); resolve(undefined); };
          });
          wake = () => {};
        }
      }
      // Let what is in flight land, then record it, whatever made us stop.
      while (inFlight > 0) {
        await new Promise((resolve) => { wake = () => resolve(undefined); });
        wake = () => {};
      }
      while (flushing || unflushed.length > 0) await (flush() ?? flushing);
    } finally {
      wakers.delete(wakeUp);
    }

    const sent = counts.delivered + counts.disabled + counts.failed;
    log.debug({ ...counts, skippedAsDone, halt }, 'segment pass finished');

    if (halt === 'stopping') return { deferMs: 0 };
    if (halt === 'paused') return { deferMs: PAUSED_RECHECK_MS };
    if (halt === 'cancelled' || halt === 'failed') {
      const dropped = pending.length;
      await store.finishSegment(campaignId, index, dropped);
      log.info({ dropped, sent }, `segment dropped: campaign ${halt}`);
      return;
    }
    if (halt !== null && halt !== 'running') {
      log.warn({ state: halt }, 'segment dropped: campaign is not running');
      return;
    }
    if (unresolved > 0) {
      throw new TransientError(`${unresolved} of ${devices.length} devices could not be sent after ${config.sendAttempts} attempts (throttled or SNS unavailable)`);
    }
    await store.finishSegment(campaignId, index, 0);
    log.info({ ...counts, skippedAsDone, size: devices.length }, 'segment sent');
  }

  return {
    send,
    /** Stops taking tokens; running sends finish and their segments are handed back. */
    stop() {
      stopping = true;
      for (const wakeUp of wakers) wakeUp();
    },
    /** The current concurrency limit per segment, after throttling. */
    concurrency: () => throttle.limit(slotsPerSegment)
  };
}

/** @param {number} attempt 1-based */
function backoff(attempt) {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * ceiling / 2; // jitter spreads retries of many devices apart
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
