// The paced-send loop that campaign segments (segment-sender.js) and transactional
// events (events/transactional-sender.js) share: take tokens from one lane of the
// shared bucket, launch that many publishes with bounded concurrency, retry throttles
// and transient errors after a backoff, and, however the loop ends, let the sends in
// flight land before returning, so a retry of the segment or event never sends them
// twice. What differs between the two comes in with the job: which lane `take` draws
// from, how `send` publishes and records a device's outcome, how many may be in flight.
import { createWakeableSleep, backoff } from './send-timing.js';

/** @typedef {import('../token-bucket.js').Grant} Grant */

/**
 * What a send asks of the loop: nothing when the device's outcome is final (and
 * recorded), or a retry after a backoff. A throttle is backpressure, not failure:
 * it uses up none of the device's attempts.
 * @typedef {{ retry: 'throttled' | 'transient', reason?: string } | undefined} SendResult
 */

/**
 * Sends to every target once, at the pace the bucket grants. Returns with `halt` set
 * when `signal` aborts ('aborted'), `deadlineAt` passes with targets still to send
 * ('expired'), or a grant's state is not 'running' (a paused, cancelled or superseded
 * campaign): `pending` then holds the targets not sent. `exhausted` holds those given
 * up after `sendAttempts` transient errors (or more than `maxThrottles` throttles).
 * If a take throws (Redis gone), the error is thrown once the sends in flight landed.
 * @template T
 * @param {object} job
 * @param {T[]} job.targets
 * @param {(want: number) => Promise<Grant>} job.take up to `want` tokens from the sender's lane
 * @param {(target: T) => Promise<SendResult>} job.send publishes once and records a final outcome; must not throw
 * @param {() => number} job.maxInFlight asked before each take (the campaign lane's shrinks under throttling)
 * @param {number} job.minTakeIntervalMs
 * @param {number} job.sendAttempts
 * @param {AbortSignal} job.signal
 * @param {boolean} [job.takeInBatches] take only once a quarter of the slots is free (fewer Redis round trips)
 * @param {number} [job.maxThrottles]
 * @param {number | null} [job.deadlineAt] ms since the epoch; no token is taken at or after it
 * @param {() => void} [job.eachTurn] called once per turn of the loop, before it waits
 * @param {(target: T, reason: string | undefined) => void} [job.onGiveUp]
 * @param {() => number} [job.now]
 * @returns {Promise<{ halt: string | null, pending: T[], exhausted: T[] }>}
 */
export async function sendPaced({
  targets, take, send, maxInFlight, minTakeIntervalMs, sendAttempts, signal,
  takeInBatches = false, maxThrottles = Infinity, deadlineAt = null, eachTurn = () => {}, onGiveUp = () => {}, now = Date.now
}) {
  let pending = targets.map((target) => ({ target, attempts: 0, throttles: 0, notBefore: 0 }));
  /** @type {T[]} */
  const exhausted = [];
  let inFlight = 0;
  let halt = /** @type {string | null} */ (null);
  // Sleeps end early when a send completes or the signal aborts.
  const { sleep, wake } = createWakeableSleep();
  signal.addEventListener('abort', wake);

  /** @param {typeof pending[number]} item */
  const launch = async (item) => {
    inFlight++;
    try {
      const result = await send(item.target);
      if (result) retryLater(item, result);
    } finally {
      inFlight--;
      wake();
    }
  };

  /** @param {typeof pending[number]} item @param {NonNullable<SendResult>} result */
  const retryLater = (item, { retry, reason }) => {
    const throttled = retry === 'throttled';
    const attempt = throttled ? ++item.throttles : ++item.attempts;
    if (throttled ? attempt > maxThrottles : attempt >= sendAttempts) {
      exhausted.push(item.target);
      onGiveUp(item.target, reason);
    } else {
      item.notBefore = now() + backoff(attempt);
      pending.push(item);
    }
  };

  try {
    let nextTakeAt = 0;
    while (pending.length > 0 || inFlight > 0) {
      if (signal.aborted) { halt = 'aborted'; break; }
      const t = now();
      if (deadlineAt !== null && t >= deadlineAt && pending.length > 0) { halt = 'expired'; break; }
      const limit = maxInFlight();
      const free = limit - inFlight;
      const ready = pending.filter((p) => p.notBefore <= t);

      let waitMs = Infinity;
      const worthTaking = ready.length > 0 && free > 0 && (!takeInBatches || free >= Math.ceil(limit / 4) || inFlight === 0);
      if (worthTaking && t >= nextTakeAt) {
        const want = Math.min(ready.length, free);
        const grant = await take(want);
        if (grant.state !== 'running') { halt = grant.state; break; }
        if (grant.granted > 0) {
          const launched = new Set(ready.slice(0, grant.granted));
          pending = pending.filter((p) => !launched.has(p));
          for (const item of launched) void launch(item);
        }
        if (grant.granted < want) {
          // The bucket refills continuously: asking again sooner only adds round trips.
          nextTakeAt = now() + Math.max(grant.waitMs, minTakeIntervalMs);
          waitMs = nextTakeAt - now();
        }
      } else if (worthTaking) {
        waitMs = nextTakeAt - t;
      }
      for (const p of pending) if (p.notBefore > t) waitMs = Math.min(waitMs, p.notBefore - t);
      // Wake at the deadline, whatever else is awaited, to stop with what is left.
      if (deadlineAt !== null && pending.length > 0) waitMs = Math.min(waitMs, deadlineAt - now());
      eachTurn();
      if (inFlight > 0 || waitMs !== Infinity) await sleep(Math.max(0, waitMs));
    }
  } finally {
    // Whatever made the loop stop (a halt, an abort, Redis gone mid-take), the sends in
    // flight land and are recorded, so a retry does not send them again.
    while (inFlight > 0) await sleep(Infinity);
    signal.removeEventListener('abort', wake);
  }
  return { halt, pending: pending.map((p) => p.target), exhausted };
}
