// A campaign's report history: a compact time series of its progress, rate limit and the
// gateway's p95 against the SLO, kept as long as the campaign itself, for `pushctl report`
// and the dashboard's report page. The chart's series (series-store.js) has a point a second
// but only its last 3 hours, kept 7 days, and the governor's decisions are one stream for
// every campaign, trimmed after about 30 hours; a report must still say how a campaign went
// when it is weeks old.
//
// `{push}:campaign:ID:history`, a stream written by the campaign sampler (one process a
// second, campaign-sampler.js) through append-history.lua: a point at most every
// HISTORY_STEP_MS for the first ~4 hours, then every 1/1000 of the time since the start, so
// a campaign of any length has about 1,000 points for its first 4 hours and a few hundred
// more per tenfold of length after that; capped at HISTORY_POINTS (~60 bytes a point: under
// 200 KB per campaign). Its TTL is the campaign's retention (CAMPAIGN_RETENTION_DAYS).
import { redisKeys } from '../redis.js';

/** The shortest step between two points, ms. */
export const HISTORY_STEP_MS = 15_000;
/** The step grows to this share of the campaign's age, so long campaigns stay small. */
const STEP_SHARE = 1 / 1000;
/** At most about this many points per campaign (the oldest are trimmed beyond it). */
export const HISTORY_POINTS = 3000;

/**
 * @typedef {{ t: number, processed: number, rateLimit: number, p95Ms: number | null, sloMs: number | null }} HistoryPoint
 *   t: ms since the epoch (Redis clock); p95Ms and sloMs from the governor's latest decision, null without one
 */

/**
 * @param {import('../redis.js').PushRedis} redis
 * @param {{ keyPrefix: string }} config
 */
export function createCampaignHistory(redis, { keyPrefix }) {
  const keys = redisKeys(keyPrefix);
  return {
    /**
     * Appends a point to each campaign's history whose last point is at least a step old
     * (or `final`: the campaign just finished). One round trip.
     * @param {{ id: string, startAt: number, processed: number, rateLimit: number, p95Ms: number | null, sloMs: number | null, final: boolean }[]} samples
     * @param {number} [now]
     */
    async append(samples, now = Date.now()) {
      if (samples.length === 0) return;
      const pipeline = redis.pipeline();
      for (const s of samples) {
        const k = keys.campaign(s.id);
        const stepMs = Math.max(HISTORY_STEP_MS, Math.round((now - s.startAt) * STEP_SHARE));
        /** @type {any} */ (pipeline).appendHistory(k.hash, k.history, stepMs, HISTORY_POINTS, s.final ? '1' : '0',
          'n', s.processed, 'r', round(s.rateLimit), 'p', s.p95Ms === null ? '' : round(s.p95Ms), 's', s.sloMs === null ? '' : round(s.sloMs));
      }
      await pipeline.exec();
    },

    /**
     * A campaign's whole history, oldest first.
     * @param {string} id
     * @returns {Promise<HistoryPoint[]>}
     */
    async read(id) {
      const entries = await redis.xrange(keys.campaign(id).history, '-', '+');
      return entries.map(([entryId, fields]) => {
        /** @type {Record<string, string>} */
        const f = {};
        for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]] = fields[i + 1];
        return {
          t: Number(entryId.slice(0, entryId.indexOf('-'))),
          processed: Number(f.n),
          rateLimit: Number(f.r),
          p95Ms: f.p ? Number(f.p) : null,
          sloMs: f.s ? Number(f.s) : null
        };
      });
    }
  };
}

/** @typedef {ReturnType<typeof createCampaignHistory>} CampaignHistory */

/** @param {number} n */
const round = (n) => Math.round(n * 1000) / 1000;
