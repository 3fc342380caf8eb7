// The scheduler's core: on each tick it reads every schedule from Redis, works out
// which fires are due by its clock (injected, so tests run in virtual time), and for
// each one claims it in Redis, launches its campaign and records the outcome. Any
// number of schedulers may tick at once: the claim lets one launch a fire, the cursor
// and the fire's record stop the rest, and the campaign id derived from schedule and
// fire time lets a scheduler that takes over a dead one's claim see how far it got.
//
// Missed fires (no scheduler got to them within SCHEDULER_TOLERANCE_SECONDS):
//   skip      never sent; recorded as skipped.
//   catch-up  the latest missed fire is sent if no more than the schedule's grace late;
//             older ones are recorded as superseded (the same announcement twice in a
//             row after an outage helps nobody).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EnqueueError, InputError } from '../errors.js';
import { firesBetween, campaignIdFor } from './schedule-spec.js';

/** @typedef {import('./schedule-spec.js').Schedule} Schedule */
/** @typedef {import('./schedule-store.js').ScheduleStore} ScheduleStore */
/** @typedef {import('./schedule-store.js').ScheduleRecord} ScheduleRecord */
/** @typedef {import('../campaign/campaign-store.js').CampaignStore} CampaignStore */

/**
 * @typedef {object} FireLaunch
 * @property {Schedule} schedule
 * @property {number} fireAt       the fire's instant, ms
 * @property {string} campaignId   the id the campaign must be created with
 * @property {AbortSignal} signal  aborted when this scheduler can no longer be sure it holds the fire
 */

/** @typedef {(fire: FireLaunch) => Promise<{ devices?: number } | void>} Launch */

/** Missed fires recorded one by one; beyond this many the cursor jumps over them. */
const MISSED_RECORDED = 20;
/** Fires handled per schedule and tick; a schedule firing every second after a long outage catches up over several ticks. */
const MAX_DUE = 10_000;
/** First wait before retrying a launch that failed for a reason that may pass (PostgreSQL down...). */
const RETRY_BASE_MS = 1000;

/**
 * Creates a scheduler. Nothing runs until tick() is called (the process calls it once
 * a second; tests call it at the virtual instants they choose).
 * @param {object} options
 * @param {ScheduleStore} options.store
 * @param {Pick<CampaignStore, 'get' | 'fail'>} options.campaigns
 * @param {Launch} options.launch          creates the campaign with the given id (launch-fire.js)
 * @param {import('pino').Logger} options.logger
 * @param {() => number} [options.now]     the clock fire times are judged by, ms
 * @param {number} [options.leaseMs]       how long a claim survives its holder (SCHEDULER_LEASE_MS)
 * @param {number} [options.toleranceMs]   how late a fire still counts as on time (SCHEDULER_TOLERANCE_SECONDS)
 * @param {string} [options.holderId]      unique per process
 * @param {(state: 'launched' | 'skipped' | 'failed') => void} [options.onFire]  told each outcome this scheduler records (metrics)
 */
export function createScheduler({
  store, campaigns, launch, logger, now = Date.now, leaseMs = 30_000, toleranceMs = 60_000,
  holderId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, onFire
}) {
  if (!(toleranceMs > leaseMs)) {
    throw new RangeError(`toleranceMs (${toleranceMs}) must exceed leaseMs (${leaseMs}): a fire whose scheduler died must be taken over in time`);
  }
  /**
   * Records a fire's outcome (finish-fire.lua) and tells onFire when it was this call that recorded it.
   * @param {Schedule} schedule @param {number} fire
   * @param {Parameters<ScheduleStore['finishFire']>[2]} outcome
   */
  async function recordFire(schedule, fire, outcome) {
    const result = await store.finishFire(schedule, fire, outcome);
    if (result === 'ok') onFire?.(outcome.state);
    return result;
  }

  /** Schedules this process is working on: a slow launch does not hold up other schedules' fires. */
  /** @type {Map<string, Promise<void>>} */
  const inFlight = new Map();
  let closed = false;
  let unreachable = false;
  /** A tick is reading the schedules: a slow Redis must not pile up reads, one per second. */
  let reading = false;

  /**
   * One pass: starts work on every enabled schedule not already being worked on here,
   * and resolves when that work is done.
   */
  async function tick() {
    if (closed || reading) return;
    /** @type {ScheduleRecord[]} */
    let records;
    reading = true;
    try {
      records = await store.list();
      if (unreachable) logger.info('schedules readable again');
      unreachable = false;
    } catch (error) {
      if (!unreachable) logger.warn({ err: error }, 'cannot read schedules; retrying every tick');
      unreachable = true;
      return;
    } finally {
      reading = false;
    }
    /** @type {Promise<void>[]} */
    const started = [];
    for (const record of records) {
      const { id } = record.schedule;
      if (!record.enabled || inFlight.has(id) || closed) continue;
      const work = runSchedule(record)
        .catch((error) => logger.warn({ err: error, scheduleId: id }, 'schedule tick failed; retrying next tick'))
        .finally(() => inFlight.delete(id));
      inFlight.set(id, work);
      started.push(work);
    }
    await Promise.all(started);
  }

  /**
   * Deals with a schedule's due fires in order. It stops at a fire another scheduler
   * is launching, so the cursor never passes a fire that is not finished.
   * @param {ScheduleRecord} record
   */
  async function runSchedule({ schedule, after }) {
    const t = now();
    const windowMs = schedule.missed === 'catch-up' ? Math.max(schedule.graceMs, toleranceMs) : toleranceMs;
    const cutoff = t - windowMs;
    if (after < cutoff) {
      const missed = firesBetween(schedule, after, cutoff, MISSED_RECORDED + 1);
      if (missed.length > MISSED_RECORDED) {
        if (await store.advance(schedule, cutoff) < 0) return;
        logger.warn({ scheduleId: schedule.id, from: iso(missed[0]), to: iso(cutoff) },
          `more than ${MISSED_RECORDED} fires were missed while no scheduler ran; skipped without a record each`);
        after = cutoff;
      }
    }
    const due = firesBetween(schedule, after, t, MAX_DUE);
    // Cut short, the list does not reach the latest fire: that one comes in a later tick.
    const complete = due.length < MAX_DUE;
    for (const [i, fire] of due.entries()) {
      if (closed) return;
      const late = now() - fire;
      const latest = complete && i === due.length - 1;
      /** @type {string | null} null: launch it */
      let skipReason = null;
      if (late > toleranceMs) {
        if (schedule.missed === 'skip') {
          skipReason = `missed: no scheduler launched it within ${seconds(toleranceMs)} (policy skip)`;
        } else if (late > schedule.graceMs) {
          skipReason = `missed: no scheduler launched it within the catch-up grace of ${seconds(schedule.graceMs)}`;
        } else if (!latest) {
          skipReason = `superseded: catch-up sends only the latest missed fire (${iso(due[due.length - 1])})`;
        }
      }
      const result = await processFire(schedule, fire, skipReason, late);
      if (result !== 'next') return;
    }
  }

  /**
   * Claims one fire and launches, skips or settles it.
   * @param {Schedule} schedule
   * @param {number} fire
   * @param {string | null} skipReason
   * @param {number} late ms after the fire's instant
   * @returns {Promise<'next' | 'wait' | 'gone'>} next: go on to the schedule's next fire
   */
  async function processFire(schedule, fire, skipReason, late) {
    const log = logger.child({ scheduleId: schedule.id, fireAt: iso(fire) });
    if (skipReason !== null) {
      // Most skips need no claim: record it unless a scheduler claimed the fire before.
      const result = await recordFire(schedule, fire, { holder: holderId, state: 'skipped', reason: skipReason, now: now(), onlyIfUnclaimed: true });
      if (result === 'ok') log.warn({ reason: skipReason, lateMs: late }, 'fire skipped');
      if (result === 'busy') return 'wait';
      if (result === 'gone') return 'gone';
      if (result !== 'claimed') return 'next';
    }
    const claimSentAt = performance.now();
    const claim = await store.claimFire(schedule, fire, { holder: holderId, leaseMs });
    if (claim.status === 'busy') return 'wait';
    if (claim.status === 'gone') return 'gone';
    if (claim.status !== 'claimed') return 'next';

    const campaignId = campaignIdFor(schedule.id, fire);
    const hold = holdClaim(schedule, fire, claimSentAt);
    /** @param {'launched' | 'skipped' | 'failed'} state @param {string} reason @param {string} [id] */
    const finish = (state, reason, id = campaignId) => recordFire(schedule, fire, { holder: holderId, state, campaignId: id, reason, now: now() });
    try {
      // A campaign with this id means an earlier attempt, whose scheduler died, got that far.
      const existing = await campaigns.get(campaignId);
      if (existing) {
        if (existing.enqueued) {
          log.info({ campaignId, attempt: claim.attempts }, 'fire was launched by an earlier attempt');
          return settled(await finish('launched', 'launched by an earlier attempt that stopped before recording it'));
        }
        if (existing.state === 'running' || existing.state === 'paused') {
          // Enqueueing again would send the devices already reached a second time; as
          // with an interrupted pushctl send, the half-queued campaign is failed instead.
          const reason = 'the scheduler launching it stopped part-way through enqueueing; the campaign was marked failed';
          await campaigns.fail(campaignId, reason);
          log.error({ campaignId, attempt: claim.attempts, enqueuedDevices: existing.total }, 'fire failed: ' + reason);
          return settled(await finish('failed', reason));
        }
        return settled(await finish('failed', existing.error ?? `campaign ${campaignId} is ${existing.state}`));
      }
      if (skipReason !== null) {
        log.warn({ reason: skipReason, lateMs: late }, 'fire skipped');
        return settled(await finish('skipped', skipReason, ''));
      }
      hold.signal.throwIfAborted();
      const launched = await launch({ schedule, fireAt: fire, campaignId, signal: hold.signal });
      log.info({ campaignId, deviceCount: launched?.devices, lateMs: late, attempt: claim.attempts }, 'fire launched');
      return settled(await finish('launched', ''));
    } catch (error) {
      // No renewal from here on: one landing after the shortened hold below would undo it.
      hold.stop();
      const message = /** @type {Error} */ (error).message;
      if (/** @type {{ code?: string }} */ (error).code === 'PUSH_ERR_CAMPAIGN_EXISTS') {
        // Another scheduler took the fire over (this one stalled past its claim) and created
        // the campaign first. That campaign is the fire's: nothing of it was touched here
        // (create never overwrites). Look again later, as for a lost claim.
        log.warn({ campaignId }, 'another scheduler launched this fire first; leaving it to that launch');
        return 'wait';
      }
      if (hold.signal.aborted) {
        // Another scheduler holds the fire now (or may): it finds the campaign, if any, and settles it.
        log.error({ err: error, campaignId }, 'lost the claim on a fire while launching it; another scheduler takes it over');
        return 'wait';
      }
      if (error instanceof InputError || error instanceof EnqueueError) {
        log.error({ err: error, campaignId }, 'fire failed');
        return settled(await finish('failed', message));
      }
      // PostgreSQL or Redis unreachable, or something unexpected: keep the claim for a
      // backoff, then any scheduler retries while the fire is still on time (or in grace).
      const retryInMs = Math.min(leaseMs, RETRY_BASE_MS * 2 ** Math.min(10, claim.attempts - 1));
      await store.noteFireError(schedule, fire, message).catch(() => {});
      await store.holdFire(schedule, fire, holderId, retryInMs).catch(() => {});
      log.warn({ err: error, campaignId, attempt: claim.attempts, retryInMs }, 'launching a fire failed; it will be retried');
      return 'wait';
    } finally {
      hold.stop();
    }
  }

  /**
   * Renews a fire's claim while it is being launched. The signal aborts when the
   * claim is lost, or when no renewal has been confirmed for two thirds of the lease
   * (they failed, or Redis does not answer): past that this process cannot be sure
   * another scheduler has not taken the fire over.
   * @param {Schedule} schedule
   * @param {number} fire
   * @param {number} claimSentAt performance.now() when the claim was sent
   */
  function holdClaim(schedule, fire, claimSentAt) {
    const controller = new AbortController();
    const limitMs = (leaseMs * 2) / 3;
    let confirmedAt = claimSentAt;
    /** @type {NodeJS.Timeout | undefined} */
    let deadline;
    // The deadline is a timer of its own, not a check after each renewal: while Redis is
    // unreachable ioredis queues commands instead of failing them, so a renewal may never
    // answer, and the launch must still stop before the lease can have passed to another.
    const armDeadline = () => {
      clearTimeout(deadline);
      deadline = setTimeout(() => controller.abort(new Error('could not renew the claim on this fire in time')),
        Math.max(0, confirmedAt + limitMs - performance.now()));
      deadline.unref();
    };
    const renew = async () => {
      const sentAt = performance.now();
      try {
        if (await store.holdFire(schedule, fire, holderId, leaseMs)) {
          // Renewals can answer out of order: only a later confirmation moves the deadline.
          if (sentAt > confirmedAt && !controller.signal.aborted) {
            confirmedAt = sentAt;
            armDeadline();
          }
        } else {
          controller.abort(new Error('another scheduler took over this fire'));
        }
      } catch {
        // Redis unreachable: the deadline decides.
      }
    };
    armDeadline();
    const timer = setInterval(() => void renew(), Math.max(10, Math.floor(leaseMs / 3)));
    timer.unref();
    return {
      signal: controller.signal,
      stop: () => {
        clearInterval(timer);
        clearTimeout(deadline);
      }
    };
  }

  return {
    holderId,
    tick,
    /** Stops ticking and waits for launches in progress (the process's shutdown timeout bounds it). */
    async close() {
      closed = true;
      await Promise.allSettled(inFlight.values());
    }
  };
}

/**
 * After recording an outcome: 'busy' means another scheduler took the fire over meanwhile
 * (this one's claim had lapsed); its later fires wait until that one is settled.
 * @param {string} recorded finish-fire's answer
 * @returns {'next' | 'wait'}
 */
function settled(recorded) {
  return recorded === 'busy' ? 'wait' : 'next';
}

/** @param {number} ms */
function iso(ms) {
  return new Date(ms).toISOString();
}

/** @param {number} ms */
function seconds(ms) {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
