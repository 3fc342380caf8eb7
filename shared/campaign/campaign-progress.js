// What a campaign's numbers mean for people: processed, remaining, percent, ETA.
// pushctl and the dashboard both show this, so they agree.

/** @typedef {import('../types.js').Campaign} Campaign */
/** @typedef {import('./local-time.js').ReleaseGroup} ReleaseGroup */

/** States a campaign never leaves. */
export const FINISHED_STATES = new Set(['completed', 'expired', 'cancelled', 'failed']);

/**
 * @param {Campaign} campaign
 * @param {{ rate: number, now?: number, achievedRate?: number | null, releases?: ReleaseGroup[] }} pace
 *   rate: the bucket's current rate; achievedRate: sends/s measured by the caller, if any;
 *   releases: a local-time campaign's release plan (store.releases), for what is still waiting
 */
export function campaignProgress(campaign, { rate, now = Date.now(), achievedRate = null, releases = [] }) {
  const processed = campaign.delivered + campaign.disabled + campaign.failed;
  const finished = FINISHED_STATES.has(campaign.state);
  const remaining = finished ? 0 : Math.max(0, campaign.total - processed - campaign.cancelled - campaign.expired);
  const effectiveRate = campaign.maxRate ? Math.min(rate, campaign.maxRate) : rate;
  const paceForEta = achievedRate && achievedRate > 0 ? achievedRate : effectiveRate;
  const end = campaign.finishedAt ?? now;
  const elapsedSeconds = (end - campaign.createdAt) / 1000;
  const waiting = finished ? [] : releases.filter((group) => group.at > now);
  const waitingDevices = waiting.reduce((n, group) => n + group.devices, 0);
  const last = waiting.at(-1);
  // Sending the rest takes remaining / pace, but not less than waiting for the last
  // group and sending it (the groups before it go out meanwhile, from the same bucket).
  const etaSeconds = finished ? 0 : paceForEta > 0
    ? Math.max(remaining / paceForEta, last ? (last.at - now) / 1000 + last.devices / paceForEta : 0)
    : null;
  return {
    id: campaign.id,
    name: campaign.name,
    kind: campaign.kind,
    state: campaign.state,
    total: campaign.total,
    enqueued: campaign.enqueued,
    delivered: campaign.delivered,
    failed: campaign.failed,
    disabled: campaign.disabled,
    cancelled: campaign.cancelled,
    /** devices not sent because their deadline passed first */
    expired: campaign.expired,
    skipped: campaign.skipped,
    duplicates: campaign.duplicates,
    excluded: campaign.excluded,
    processed,
    remaining,
    percent: campaign.total > 0 ? Math.min(100, (processed / campaign.total) * 100) : (finished ? 100 : 0),
    rate: effectiveRate,
    achievedRate,
    etaSeconds,
    /** processed devices per second since the campaign was created */
    averageRate: elapsedSeconds > 0 ? processed / elapsedSeconds : 0,
    elapsedSeconds,
    createdAt: new Date(campaign.createdAt).toISOString(),
    finishedAt: campaign.finishedAt ? new Date(campaign.finishedAt).toISOString() : null,
    error: campaign.error,
    /** the campaign-wide deadline; a local-time campaign with a TTL also has one per group (ttlSeconds after its release) */
    deadlineAt: campaign.deadlineAt === null ? null : new Date(campaign.deadlineAt).toISOString(),
    deadlinePassed: campaign.deadlineAt !== null && now >= campaign.deadlineAt,
    ttlSeconds: campaign.ttlMs === null ? null : campaign.ttlMs / 1000,
    localTime: campaign.localTime,
    defaultTimezone: campaign.defaultTimezone,
    /** zone groups of a local-time campaign whose release time is still ahead; null when none */
    waiting: waiting.length === 0 ? null : {
      groups: waiting.length,
      zones: waiting.reduce((n, group) => n + group.zones.length, 0),
      devices: waitingDevices,
      nextAt: new Date(waiting[0].at).toISOString(),
      nextZones: waiting[0].zones
    },
    releases: releases.map((group) => ({ at: new Date(group.at).toISOString(), zones: group.zones, devices: group.devices }))
  };
}

/** @typedef {ReturnType<typeof campaignProgress>} CampaignProgress */

/**
 * Devices the running campaigns still have to send, now or at a zone group's later release.
 * The governor tells the pacing controller, whose plan then uses the room the last sends
 * leave behind. A group released later counts: its sends will need room within the wake-up
 * horizon, and leaving it out would let the plan spend that room on a burst first. Groups due
 * after the campaign's deadline are never sent and do not count. null while a running
 * campaign's audience is still being enqueued: its total is not known yet. Paused campaigns,
 * and campaigns past their deadline, send nothing and count nothing.
 * @param {Array<{ campaign: Campaign, releases: ReleaseGroup[] }>} running
 * @param {number} [now]
 * @returns {number | null}
 */
export function devicesStillToSend(running, now = Date.now()) {
  let devices = 0;
  for (const { campaign, releases } of running) {
    if (campaign.state !== 'running') continue;
    if (!campaign.enqueued) return null;
    // Past the campaign's deadline nothing more is sent: what is left expires.
    const deadline = campaign.deadlineAt;
    if (deadline !== null && now >= deadline) continue;
    const { remaining } = campaignProgress(campaign, { rate: 0, now, releases });
    const neverSent = deadline === null ? 0 : releases.filter((group) => group.at >= deadline).reduce((n, group) => n + group.devices, 0);
    devices += Math.max(0, remaining - neverSent);
  }
  return devices;
}

/**
 * Seconds to send `devices` at `rate` sends/s.
 * @param {number} devices
 * @param {number} rate
 */
export function estimateSeconds(devices, rate) {
  return rate > 0 ? devices / rate : Infinity;
}
