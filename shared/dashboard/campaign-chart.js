// What a campaign's chart shows, from its sampled series and the governor's decisions:
// per sample, the send rate achieved since the previous sample, the rate limit, and the
// gateway p95, SLO and decision reason the governor had at the time (null without a
// governor). Pure, so the alignment is tested without Redis.

/** @typedef {import('../metrics/series-store.js').CampaignPoint} CampaignPoint */
/** @typedef {import('../metrics/series-store.js').GovernorPoint} GovernorPoint */

/** The achieved rate is averaged over this window, as `pushctl status --watch` does. */
export const RATE_WINDOW_MS = 5000;

/**
 * @typedef {object} ChartSeries
 * @property {number[]} t  ms since the epoch
 * @property {(number | null)[]} sendRate  sends/s since the previous sample; null for a start window (see startRate)
 * @property {(number | null)[]} startRate  sends/s of a window in which sending started or resumed, else null
 * @property {(number | null)[]} rateLimit  null while the campaign does not send (paused, finished)
 * @property {(number | null)[]} p95Ms
 * @property {(number | null)[]} sloMs
 * @property {(string | null)[]} reason  the governor's reason code (shared/pacing/rate-reasons.js says it in words)
 */

/**
 * Aligns the governor's decisions to the campaign's samples: each sample gets the last
 * decision at or before it, unless that is older than `maxGatewayAgeMs` (the governor
 * stopped, or lost its metrics).
 * @param {CampaignPoint[]} points  oldest first; the first one only serves as the predecessor when `since` > 0
 * @param {GovernorPoint[]} decisions  oldest first
 * @param {{ since?: number, maxGatewayAgeMs?: number }} [options]  since: only samples after it (ms)
 * @returns {ChartSeries}
 */
export function chartSeries(points, decisions, { since = 0, maxGatewayAgeMs = 30_000 } = {}) {
  /** @type {ChartSeries} */
  const chart = { t: [], sendRate: [], startRate: [], rateLimit: [], p95Ms: [], sloMs: [], reason: [] };
  let d = -1;
  for (let i = 0; i < points.length; i++) {
    const point = points[i];
    if (point.t <= since) continue;
    const previous = i > 0 ? points[i - 1] : null;
    const seconds = previous ? (point.t - previous.t) / 1000 : 0;
    while (d + 1 < decisions.length && decisions[d + 1].t <= point.t) d++;
    const decision = d >= 0 && point.t - decisions[d].t <= maxGatewayAgeMs ? decisions[d] : null;
    const rate = previous && seconds > 0 ? round(Math.max(0, point.processed - previous.processed) / seconds) : null;
    // The window in which sending starts (nothing processed before it) or resumes (the
    // previous sample was taken while the campaign did not send) holds the token bucket's
    // burst on top of the limit: it is charted apart, as a marked point, so a start above the
    // limit does not read as a limiter that fails.
    const starts = previous !== null && ((previous.processed === 0 && point.processed > 0) || (previous.rateLimit === 0 && point.rateLimit > 0));
    chart.t.push(point.t);
    chart.sendRate.push(starts ? null : rate);
    chart.startRate.push(starts ? rate : null);
    // The sampler writes 0 for a campaign that is paused or finished: the limit line stops
    // there rather than falling to 0, which would read as "the limit was cut to nothing".
    chart.rateLimit.push(point.rateLimit > 0 ? point.rateLimit : null);
    chart.p95Ms.push(decision ? decision.p95Ms : null);
    chart.sloMs.push(decision ? decision.sloMs : null);
    chart.reason.push(decision ? decision.reason || null : null);
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
