// What people and scripts see of a schedule: its state, its next fire and the campaign
// that fire will create, and whether it is overdue. `pushctl schedule list|show` and the
// dashboard both show this, so they cannot disagree.
import { nextFire, campaignIdFor } from './schedule-spec.js';

/** @typedef {import('./schedule-store.js').ScheduleRecord} ScheduleRecord */

/**
 * @param {ScheduleRecord} record
 * @param {number} now ms
 * @param {number} toleranceMs SCHEDULER_TOLERANCE_SECONDS: a next fire older than this means no scheduler is running
 */
export function describeSchedule({ schedule: s, enabled, after }, now, toleranceMs) {
  // A paused schedule resumes from the moment it is resumed.
  const next = nextFire(s, enabled ? after : Math.max(after, now));
  return {
    id: s.id,
    /** @type {'active' | 'paused' | 'done'} */
    state: !enabled ? 'paused' : next === null ? 'done' : 'active',
    cron: s.cron,
    at: s.at,
    timezone: s.timeZone,
    missed: s.missed,
    graceMs: s.missed === 'catch-up' ? s.graceMs : null,
    nextFireAt: next,
    nextCampaignId: next === null ? null : campaignIdFor(s.id, next),
    overdue: enabled && next !== null && next < now - toleranceMs
  };
}

/** @typedef {ReturnType<typeof describeSchedule>} ScheduleView */
