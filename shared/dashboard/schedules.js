// The schedules the dashboard lists. They belong to the scheduler (shared/scheduler/), which
// stores them in Redis; this module only reads them through the scheduler's own store and
// turns each into a row from the view `pushctl schedule list` shows (schedule-view.js):
// when it fires, in which zone, the next and the last fire.
import { createScheduleStore } from '../scheduler/schedule-store.js';
import { describeSchedule } from '../scheduler/schedule-view.js';

/**
 * @typedef {object} ScheduleRow
 * @property {string} id
 * @property {string} name        the campaign name it launches, or its id
 * @property {string} when        the cron expression, or the one-off time (ISO)
 * @property {string | null} timeZone
 * @property {string | null} nextRunAt  ISO time; null when paused or nothing is left to fire
 * @property {boolean} overdue    the next fire is past the on-time window: no scheduler is running
 * @property {string | null} lastRunAt  ISO time of the newest fire on record
 * @property {string | null} lastOutcome that fire's state (launched, skipped, failed...) and its campaign
 * @property {'active' | 'paused' | 'done'} state
 */

/**
 * @param {import('../redis.js').PushRedis} redis
 * @param {{ keyPrefix: string, scheduler: { toleranceMs: number } }} config
 * @param {() => number} [now]
 */
export function createScheduleReader(redis, config, now = Date.now) {
  const store = createScheduleStore(redis, config);
  const iso = (/** @type {number | null} */ ms) => (ms === null ? null : new Date(ms).toISOString());

  return {
    /** Whether a scheduler store is wired in. */
    available: true,
    /** @returns {Promise<ScheduleRow[]>} */
    async list() {
      const records = await store.list();
      const t = now();
      return Promise.all(records.map(async (record) => {
        const { schedule } = record;
        const view = describeSchedule(record, t, config.scheduler.toleranceMs);
        const [last] = await store.fires(schedule.id, 1);
        const name = schedule.send?.name;
        return {
          id: schedule.id,
          name: typeof name === 'string' && name ? name : schedule.id,
          when: schedule.cron ?? iso(schedule.at) ?? '',
          timeZone: schedule.timeZone ?? null,
          // A paused schedule has a next fire only once resumed: the page shows none.
          nextRunAt: view.state === 'active' ? iso(view.nextFireAt) : null,
          overdue: view.overdue,
          lastRunAt: last ? iso(last.at) : null,
          lastOutcome: last ? `${last.state}${last.campaignId ? ` (${last.campaignId})` : ''}` : null,
          state: view.state
        };
      }));
    }
  };
}

/** @typedef {ReturnType<typeof createScheduleReader>} ScheduleReader */
