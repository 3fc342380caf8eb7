// Compact rolling time series in Redis, for the dashboard's charts: one stream per
// campaign (its processed count and rate limit, sampled every second by
// campaign-sampler.js) and one for the governor (each decision: gateway p95, SLO, rate).
// Prometheus keeps the long history; these keep just enough for a live chart and are
// readable by any web process without a Prometheus server.
//
// Streams, because XADD with MAXLEN ~ trims in O(1) amortised and entry ids are the Redis
// server's clock in ms, so points written by different hosts line up.

/** Points kept per campaign: the last 3 hours at one point a second (about 400 KB). */
export const CAMPAIGN_POINTS = 10_800;
/** Governor decisions kept: 30 hours at the default 10 s window, 3 hours at 1 s. */
export const GOVERNOR_POINTS = 10_800;
/** A campaign's series outlives its last point by this long. */
const CAMPAIGN_SERIES_TTL_MS = 7 * 24 * 3600_000;

/**
 * @typedef {{ t: number, processed: number, rateLimit: number }} CampaignPoint  t: ms since the epoch (Redis clock)
 * @typedef {{ t: number, p95Ms: number | null, sloMs: number, rate: number, reason: string }} GovernorPoint
 */

/** @param {string} keyPrefix */
export function seriesKeys(keyPrefix) {
  const tag = `{${keyPrefix}}`;
  return {
    /** @param {string} id */
    campaign: (id) => `${tag}:series:campaign:${id}`,
    governor: `${tag}:series:governor`,
    /** Which process samples campaigns this interval (SET NX with a TTL). */
    samplerSlot: `${tag}:series:sampler`
  };
}

/**
 * @param {import('../redis.js').RedisClient} redis
 * @param {{ keyPrefix: string }} config
 */
export function createSeriesStore(redis, { keyPrefix }) {
  const keys = seriesKeys(keyPrefix);

  return {
    keys,

    /**
     * Appends one point per campaign in one round trip.
     * @param {{ id: string, processed: number, rateLimit: number }[]} samples
     */
    async appendCampaigns(samples) {
      if (samples.length === 0) return;
      const pipeline = redis.pipeline();
      for (const s of samples) {
        const key = keys.campaign(s.id);
        pipeline.xadd(key, 'MAXLEN', '~', CAMPAIGN_POINTS, '*', 'n', s.processed, 'r', round(s.rateLimit));
        pipeline.pexpire(key, CAMPAIGN_SERIES_TTL_MS);
      }
      await pipeline.exec();
    },

    /**
     * The last point of a campaign's series, or null.
     * @param {string} id
     * @returns {Promise<CampaignPoint | null>}
     */
    async lastCampaignPoint(id) {
      const [entry] = await redis.xrevrange(keys.campaign(id), '+', '-', 'COUNT', 1);
      return entry ? campaignPoint(entry) : null;
    },

    /**
     * A campaign's newest `count` points, oldest first.
     * @param {string} id
     * @param {number} count
     * @returns {Promise<CampaignPoint[]>}
     */
    async recentCampaign(id, count) {
      const entries = await redis.xrevrange(keys.campaign(id), '+', '-', 'COUNT', count);
      return entries.reverse().map(campaignPoint);
    },

    /**
     * A campaign's points from `sinceMs` on (all when 0), oldest first.
     * @param {string} id
     * @param {number} [sinceMs]
     * @returns {Promise<CampaignPoint[]>}
     */
    async campaign(id, sinceMs = 0) {
      const entries = await redis.xrange(keys.campaign(id), sinceMs > 0 ? String(sinceMs) : '-', '+');
      return entries.map(campaignPoint);
    },

    /** @param {Omit<GovernorPoint, 't'>} point */
    async appendGovernor({ p95Ms, sloMs, rate, reason }) {
      await redis.xadd(keys.governor, 'MAXLEN', '~', GOVERNOR_POINTS, '*',
        'p95', p95Ms === null ? '' : round(p95Ms), 'slo', round(sloMs), 'rate', round(rate), 'reason', reason);
    },

    /**
     * Governor decisions in [fromMs, toMs] ('+' when toMs is omitted), oldest first.
     * @param {number} fromMs
     * @param {number} [toMs]
     * @returns {Promise<GovernorPoint[]>}
     */
    async governor(fromMs, toMs) {
      const entries = await redis.xrange(keys.governor, String(Math.max(0, Math.floor(fromMs))), toMs === undefined ? '+' : String(Math.floor(toMs)));
      return entries.map(governorPoint);
    },

    /**
     * The newest governor decision, or null when no governor has written one.
     * @returns {Promise<GovernorPoint | null>}
     */
    async lastGovernorPoint() {
      const [entry] = await redis.xrevrange(keys.governor, '+', '-', 'COUNT', 1);
      return entry ? governorPoint(entry) : null;
    }
  };
}

/** @typedef {ReturnType<typeof createSeriesStore>} SeriesStore */

/** @param {[string, string[]]} entry @returns {CampaignPoint} */
function campaignPoint([id, fields]) {
  const f = fieldMap(fields);
  return { t: idTime(id), processed: Number(f.n), rateLimit: Number(f.r) };
}

/** @param {[string, string[]]} entry @returns {GovernorPoint} */
function governorPoint([id, fields]) {
  const f = fieldMap(fields);
  return { t: idTime(id), p95Ms: f.p95 === '' || f.p95 === undefined ? null : Number(f.p95), sloMs: Number(f.slo), rate: Number(f.rate), reason: f.reason ?? '' };
}

/** @param {string[]} fields */
function fieldMap(fields) {
  /** @type {Record<string, string>} */
  const map = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return map;
}

/** A stream entry id's time part: `1700000000000-0` → 1700000000000. @param {string} id */
const idTime = (id) => Number(id.slice(0, id.indexOf('-')));

/** @param {number} n */
const round = (n) => Math.round(n * 1000) / 1000;
