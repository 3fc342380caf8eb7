// Schedules live in Redis: one hash each (the spec as JSON, its revision, the enabled
// flag and the cursor), a sorted set of their ids, and per fire a small hash with its
// outcome plus a lease key while a scheduler holds it. Every scheduler process reads
// them on each tick, so `pushctl schedule ...` takes effect without a restart.
import { InputError, NotFoundError } from '../errors.js';
import { redisKeys } from '../redis.js';

/** @typedef {import('./schedule-spec.js').Schedule} Schedule */
/** @typedef {import('../redis.js').PushRedis} PushRedis */

/**
 * @typedef {object} ScheduleRecord
 * @property {Schedule} schedule
 * @property {boolean} enabled
 * @property {number} after     the cursor: every fire at or before it has been dealt with
 */

/**
 * @typedef {object} FireRecord
 * @property {number} at
 * @property {'claimed' | 'launched' | 'skipped' | 'failed'} state
 * @property {number} attempts
 * @property {string | null} campaignId
 * @property {string | null} reason
 * @property {string | null} error      the last retryable error, while it is being retried
 * @property {number | null} finishedAt
 */

/** Fires listed per schedule by `pushctl schedule show`. */
const FIRES_KEPT = 50;
/** A fire's record outlives every window it could still be acted on in (grace ≤ 7 days). */
export const FIRE_RECORD_TTL_MS = 30 * 86_400_000;

/**
 * @param {PushRedis} redis
 * @param {{ keyPrefix: string }} config
 */
export function createScheduleStore(redis, { keyPrefix }) {
  const keys = redisKeys(keyPrefix);

  /** @param {Record<string, string>} hash @returns {ScheduleRecord | null} */
  function parseRecord(hash) {
    if (!hash.spec || hash.after === undefined) return null;
    try {
      return { schedule: JSON.parse(hash.spec), enabled: hash.enabled === '1', after: Number(hash.after) };
    } catch {
      return null;
    }
  }

  /** @param {string} id */
  async function get(id) {
    return parseRecord(await redis.hgetall(keys.schedule(id).hash));
  }

  /** @param {string} id */
  async function require(id) {
    const record = await get(id);
    if (!record) throw new NotFoundError(`no schedule with id "${id}" (pushctl schedule list shows them)`);
    return record;
  }

  /** @param {Schedule} schedule @param {number} at @returns {[string, string, string, string]} */
  function fireKeys(schedule, at) {
    const k = keys.schedule(schedule.id);
    return [k.hash, k.fire(at), k.fireLease(at), k.fires];
  }

  return {
    keys,
    get,
    require,

    /**
     * Stores a new schedule, enabled, with its cursor at its creation: it fires from now on.
     * @param {Schedule} schedule
     */
    async add(schedule) {
      const k = keys.schedule(schedule.id);
      const exists = () => new InputError(`schedule "${schedule.id}" already exists; remove it first (pushctl schedule remove ${schedule.id}) or choose another id`);
      // WATCH makes two concurrent adds of one id end with exactly one of them stored, whole.
      await redis.watch(k.hash);
      if (await redis.exists(k.hash)) {
        await redis.unwatch();
        throw exists();
      }
      const stored = await redis.multi()
        .hset(k.hash, { spec: JSON.stringify(schedule), rev: schedule.rev, enabled: '1', after: schedule.createdAt })
        .zadd(keys.schedules, schedule.createdAt, schedule.id)
        .exec();
      if (stored === null) throw exists();
      return /** @type {ScheduleRecord} */ (await get(schedule.id));
    },

    /** Every schedule, oldest first. @returns {Promise<ScheduleRecord[]>} */
    async list() {
      const ids = await redis.zrange(keys.schedules, '0', '-1');
      if (ids.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hgetall(keys.schedule(id).hash);
      const rows = /** @type {[Error | null, Record<string, string>][]} */ (await pipeline.exec());
      /** @type {ScheduleRecord[]} */
      const records = [];
      rows.forEach(([, hash]) => {
        const record = hash && parseRecord(hash);
        if (record) records.push(record);
      });
      return records;
    },

    /**
     * Stops a schedule firing. A fire already claimed by a scheduler still completes.
     * @param {string} id
     */
    async pause(id) {
      if (await redis.advanceSchedule(keys.schedule(id).hash, 0, '', '0') === -1) await require(id);
      return require(id);
    },

    /**
     * Starts a paused schedule again from `now`: fires that fell in the pause are not sent.
     * @param {string} id
     * @param {number} now
     */
    async resume(id, now) {
      if (await redis.advanceSchedule(keys.schedule(id).hash, now, '', '1') === -1) await require(id);
      return require(id);
    },

    /**
     * Deletes a schedule and its fire records, so it never fires again. A fire a scheduler
     * is launching right now is left to complete (remove-schedule.lua): its campaign may
     * be part-way through enqueueing. Campaigns it launched stay (pushctl cancel).
     * @param {string} id
     * @returns {Promise<{ record: ScheduleRecord, launching: number[] }>} launching: the fires left to complete
     */
    async remove(id) {
      const k = keys.schedule(id);
      const record = await require(id);
      const fires = await redis.zrange(k.fires, '0', '-1');
      const fireKeys = fires.flatMap((at) => [k.fire(Number(at)), k.fireLease(Number(at))]);
      const launching = await redis.removeSchedule(3 + fireKeys.length, k.hash, k.fires, keys.schedules, ...fireKeys, id);
      if (launching === -1) throw new NotFoundError(`no schedule with id "${id}" (pushctl schedule list shows them)`);
      return { record, launching: launching.map(Number).filter((at) => at > 0) };
    },

    /**
     * The schedule's recent fires, newest first.
     * @param {string} id
     * @param {number} [limit]
     * @returns {Promise<FireRecord[]>}
     */
    async fires(id, limit = 10) {
      const k = keys.schedule(id);
      const ats = await redis.zrevrange(k.fires, 0, limit - 1);
      const pipeline = redis.pipeline();
      for (const at of ats) pipeline.hgetall(k.fire(Number(at)));
      const rows = /** @type {[Error | null, Record<string, string>][]} */ (await pipeline.exec());
      return rows.map(([, hash]) => hash).filter((hash) => hash?.state).map((hash) => ({
        at: Number(hash.at),
        state: /** @type {FireRecord['state']} */ (hash.state),
        attempts: Number(hash.attempts ?? 0),
        campaignId: hash.campaignId || null,
        reason: hash.reason || null,
        error: hash.error || null,
        finishedAt: hash.finishedAt ? Number(hash.finishedAt) : null
      }));
    },

    /**
     * Claims a fire for `holder` (claim-fire.lua).
     * @param {Schedule} schedule
     * @param {number} at
     * @param {{ holder: string, leaseMs: number }} options
     * @returns {Promise<{ status: 'claimed' | 'busy' | 'gone' | 'launched' | 'skipped' | 'failed', attempts: number }>}
     */
    async claimFire(schedule, at, { holder, leaseMs }) {
      const [status, attempts] = await redis.claimFire(...fireKeys(schedule, at), at, holder, leaseMs, FIRE_RECORD_TTL_MS, schedule.rev);
      return { status: /** @type {any} */ (status), attempts: Number(attempts) };
    },

    /**
     * Records a fire's outcome and moves the cursor past it (finish-fire.lua).
     * @param {Schedule} schedule
     * @param {number} at
     * @param {{ holder: string, state: 'launched' | 'skipped' | 'failed', campaignId?: string, reason?: string, now: number, onlyIfUnclaimed?: boolean }} outcome
     * @returns {Promise<'ok' | 'busy' | 'claimed' | 'gone' | 'launched' | 'skipped' | 'failed'>}
     */
    async finishFire(schedule, at, { holder, state, campaignId = '', reason = '', now, onlyIfUnclaimed = false }) {
      return /** @type {any} */ (await redis.finishFire(...fireKeys(schedule, at), at, holder, state, campaignId, reason, now,
        FIRE_RECORD_TTL_MS, FIRES_KEPT, onlyIfUnclaimed ? '1' : '0'));
    },

    /**
     * Keeps a claimed fire ours for another `ms` (or shortens the lease to it, to retry
     * after a pause). Resolves false once the lease is gone or another scheduler's.
     * @param {Schedule} schedule
     * @param {number} at
     * @param {string} holder
     * @param {number} ms
     */
    async holdFire(schedule, at, holder, ms) {
      return (await redis.renewLease(keys.schedule(schedule.id).fireLease(at), holder, ms)) === 1;
    },

    /**
     * Notes the error a fire's launch failed with, while it waits to be retried.
     * @param {Schedule} schedule
     * @param {number} at
     * @param {string} error
     */
    async noteFireError(schedule, at, error) {
      await redis.hset(keys.schedule(schedule.id).fire(at), 'error', error);
    },

    /**
     * Moves the cursor forward past fires that will not be looked at one by one.
     * @param {Schedule} schedule
     * @param {number} to
     */
    async advance(schedule, to) {
      return redis.advanceSchedule(keys.schedule(schedule.id).hash, to, schedule.rev, '');
    }
  };
}

/** @typedef {ReturnType<typeof createScheduleStore>} ScheduleStore */
