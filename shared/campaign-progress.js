// What a campaign's numbers mean for people: processed, remaining, percent, ETA.
// pushctl and (later) the dashboard both show this, so they agree.

/** @typedef {import('./campaign-store.js').Campaign} Campaign */

/** States a campaign never leaves. */
export const FINISHED_STATES = new Set(['completed', 'cancelled', 'failed']);

/**
 * @param {Campaign} campaign
 * @param {{ rate: number, now?: number, achievedRate?: number | null }} pace
 *   rate: the bucket's current rate; achievedRate: sends/s measured by the caller, if any
 */
export function campaignProgress(campaign, { rate, now = Date.now(), achievedRate = null }) {
  const processed = campaign.delivered + campaign.disabled + campaign.failed;
  const finished = FINISHED_STATES.has(campaign.state);
  const remaining = finished ? 0 : Math.max(0, campaign.total - processed - campaign.cancelled);
  const effectiveRate = campaign.maxRate ? Math.min(rate, campaign.maxRate) : rate;
  const paceForEta = achievedRate && achievedRate > 0 ? achievedRate : effectiveRate;
  const end = campaign.finishedAt ?? now;
  const elapsedSeconds = (end - campaign.createdAt) / 1000;
  return {
    id: campaign.id,
    name: campaign.name,
    state: campaign.state,
    total: campaign.total,
    enqueued: campaign.enqueued,
    delivered: campaign.delivered,
    failed: campaign.failed,
    disabled: campaign.disabled,
    cancelled: campaign.cancelled,
    skipped: campaign.skipped,
    duplicates: campaign.duplicates,
    excluded: campaign.excluded,
    processed,
    remaining,
    percent: campaign.total > 0 ? Math.min(100, (processed / campaign.total) * 100) : (finished ? 100 : 0),
    rate: effectiveRate,
    achievedRate,
    etaSeconds: finished ? 0 : (paceForEta > 0 ? remaining / paceForEta : null),
    /** processed devices per second since the campaign was created */
    averageRate: elapsedSeconds > 0 ? processed / elapsedSeconds : 0,
    elapsedSeconds,
    createdAt: new Date(campaign.createdAt).toISOString(),
    finishedAt: campaign.finishedAt ? new Date(campaign.finishedAt).toISOString() : null,
    error: campaign.error
  };
}

/** @typedef {ReturnType<typeof campaignProgress>} CampaignProgress */

/**
 * Seconds to send `devices` at `rate` sends/s.
 * @param {number} devices
 * @param {number} rate
 */
export function estimateSeconds(devices, rate) {
  return rate > 0 ? devices / rate : Infinity;
}
