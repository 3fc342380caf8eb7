// What a campaign's chart shows, from its sampled series and the governor's decisions:
// per sample, the send rate achieved since the previous sample, the rate limit, and the
// gateway p95 and SLO the governor saw at the time (null without a governor). Pure, so the
// alignment is tested without Redis.

/** @typedef {import('../metrics/series-store.js').CampaignPoint} CampaignPoint */
/** @typedef {import('../metrics/series-store.js').GovernorPoint} GovernorPoint */

/** The achieved rate is averaged over this window, as `pushctl status --watch` does. */
export const RATE_WINDOW_MS = 5000;

/**
 * Aligns the governor's decisions to the campaign's samples: each sample gets the last
 * decision at or before it, unless that is older than `maxGatewayAgeMs` (the governor
 * stopped, or lost its metrics).
 * @param {CampaignPoint[]} points  oldest first; the first one only serves as the predecessor when `since` > 0
 * @param {GovernorPoint[]} decisions  oldest first
 * @param {{ since?: number, maxGatewayAgeMs?: number }} [options]  since: only samples after it (ms)
 */
export function chartSeries(points, decisions, { since = 0, maxGatewayAgeMs = 30_000 } = {}) {
  /** @type {{ t: number[], sendRate: (number | null)[], rateLimit: number[], p95Ms: (number | null)[], sloMs: (number | null)[] }} */
  const chart = { t: [], sendRate: [], rateLimit: [], p95Ms: [], sloMs: [] };
  let d = -1;
  for (let i = 0; i < points.length; i++) {
    const point = points[i];
    if (point.t <= since) continue;
    const previous = i > 0 ? points[i - 1] : null;
    const seconds = previous ? (point.t - previous.t) / 1000 : 0;
    while (d + 1 < decisions.length && decisions[d + 1].t <= point.t) d++;
    const decision = d >= 0 && point.t - decisions[d].t <= maxGatewayAgeMs ? decisions[d] : null;
    chart.t.push(point.t);
    chart.sendRate.push(previous && seconds > 0 ? round(Math.max(0, point.processed - previous.processed) / seconds) : null);
    chart.rateLimit.push(point.rateLimit);
    chart.p95Ms.push(decision ? decision.p95Ms : null);
    chart.sloMs.push(decision ? decision.sloMs : null);
  }
  return chart;
}

/**
 * Sends per second over the last RATE_WINDOW_MS of samples, or null when the newest sample
 * is stale or the samples span too little time to say.
 * @param {CampaignPoint[]} recent  oldest first
 * @param {number} now  ms since the epoch
 */
export function achievedRate(recent, now) {
  const newest = recent[recent.length - 1];
  if (!newest || now - newest.t > 2 * RATE_WINDOW_MS) return null;
  const oldest = recent.find((p) => newest.t - p.t <= RATE_WINDOW_MS);
  if (!oldest || newest.t - oldest.t < 900) return null;
  return ((newest.processed - oldest.processed) * 1000) / (newest.t - oldest.t);
}

/** @param {number} n */
const round = (n) => Math.round(n * 100) / 100;
