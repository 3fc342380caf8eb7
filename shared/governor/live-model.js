// The governor's live model, published: each tick the governor writes what its controller
// believes (requests per send ± sd, the likeliest wake-up shape, baseline, capacity, SLO,
// the rate it set) to Redis with a TTL of a few ticks, so `pushctl send --dry-run` and the
// dashboard can forecast a campaign (shared/forecast/campaign-forecast.js) from it, and a
// snapshot that stopped being renewed reads as "no governor". Beside it, without a TTL, the
// baseline by UTC hour, learned from the governor's own ticks: a campaign scheduled for
// 20:00 is forecast at 20:00's baseline, not at the baseline of the moment it is scheduled.
//
// The keys live under KEY_PREFIX's hash tag, beside the model memory (`{prefix}:model:*`).
import { redisKeys } from '../redis.js';

/** @typedef {import('../redis.js').PushRedis} PushRedis */
/** @typedef {import('../forecast/campaign-forecast.js').LiveModel} LiveModel */

/** The snapshot outlives this many ticks without a renewal, then reads as no governor. */
const TTL_TICKS = 3;

/** How much one window moves its hour's baseline: about a week of that hour's windows (360 a day at 10 s) counts. */
const HOUR_WEIGHT_CAP = 2000;

/** The controller options a forecast replays the plan with (the rest are the defaults). */
const FORECAST_OPTIONS = /** @type {const} */ ([
  'sloP95Ms', 'setpointRatio', 'minRate', 'maxRate', 'openProbability', 'requestsPerOpen', 'openDelayMedianMs', 'openDelaySigma',
  'sessionMs', 'priorUncertainty', 'capacityRps', 'saturationRatio', 'sloCapacityRatio', 'shortCampaignMs', 'missShare', 'confidence', 'planSoftness', 'reserveShare', 'baselineDrift', 'gainDrift',
  'rpsNoise', 'excessNoiseWeight', 'binMs', 'metricsWindowMs', 'metricsLagMs', 'kernelTailMass'
]);

/** @param {string} keyPrefix */
export function liveModelKeys(keyPrefix) {
  const keys = redisKeys(keyPrefix);
  return { live: keys.liveModel, baselineByHour: keys.baselineByHour };
}

/**
 * The live model from a controller's snapshot (createInspectableController's) and its options.
 * @param {Record<string, any>} snapshot
 * @param {Readonly<import('../pacing/controller-options.js').ControllerOptions>} options  resolved
 * @param {{ at: number, rate: number, reason: string, remaining?: number | null, baselineByHour?: LiveModel['baselineByHour'],
 *   rememberedShape?: { medianFactor: number, sigmaFactor: number } | null }} tick
 *   rememberedShape: the open-delay shape the memory holds (wake-up-memory.js), given between campaigns
 * @returns {LiveModel}
 */
export function liveModelOf(snapshot, options, { at, rate, reason, remaining = null, baselineByHour = [], rememberedShape = null }) {
  /** @type {Record<string, number>} */
  const picked = {};
  for (const key of FORECAST_OPTIONS) picked[key] = options[key];
  // A replay starts a fresh controller, whose estimate would be on trial again (capacity-
  // estimator.js followTrial). Only while the live one's still is does the replay try it too;
  // a snapshot that does not say counts as tried (a governor that has steered).
  picked.capacityTrialShare = Number.isFinite(snapshot.capacityTrial) ? options.capacityTrialShare : 1;
  return {
    at,
    requestsPerSend: finite(snapshot.requestsPerSend, options.openProbability * options.requestsPerOpen),
    requestsPerSendSd: finite(snapshot.requestsPerSendSd, 0),
    baselineRps: finite(snapshot.baseline, 0),
    baselineSd: finite(snapshot.baselineSd, 0),
    // On a jumpy gateway the plan fills the lowest estimate of the last minute (capacity-estimator.js lowest).
    capacityRps: finite(Math.min(snapshot.capacity, snapshot.capacityEnvelope ?? Infinity), options.capacityRps),
    sloP95Ms: options.sloP95Ms,
    medianFactor: finite(snapshot.medianFactor, 1),
    sigmaFactor: finite(snapshot.sigmaFactor, 1),
    excessNoiseRps: finite(snapshot.excessNoiseRps, 0),
    rate,
    reason,
    remaining,
    baselineByHour,
    rememberedShape,
    options: picked
  };
}

/**
 * One window's baseline folded into its UTC hour: a running mean whose weight is capped, so
 * the hour follows a change over days rather than weeks.
 * @param {LiveModel['baselineByHour']} byHour
 * @param {number} at  ms since the epoch
 * @param {number} baselineRps
 * @returns {LiveModel['baselineByHour']}
 */
export function foldHourBaseline(byHour, at, baselineRps) {
  const hour = new Date(at).getUTCHours();
  const old = byHour.find((h) => h.hour === hour) ?? { hour, rps: baselineRps, windows: 0 };
  const windows = old.windows + 1;
  const rps = old.rps + (baselineRps - old.rps) / Math.min(windows, HOUR_WEIGHT_CAP);
  return [...byHour.filter((h) => h.hour !== hour), { hour, rps, windows }].sort((a, b) => a.hour - b.hour);
}

/**
 * The live model in Redis.
 * @param {PushRedis} redis
 * @param {string} keyPrefix
 */
export function createLiveModelStore(redis, keyPrefix) {
  const keys = liveModelKeys(keyPrefix);
  return {
    /**
     * @param {LiveModel} model
     * @param {number} tickMs  the governor's tick: the snapshot expires after TTL_TICKS of them
     */
    async publish(model, tickMs) {
      const hour = new Date(model.at).getUTCHours();
      const entry = model.baselineByHour.find((h) => h.hour === hour);
      const multi = redis.multi().set(keys.live, JSON.stringify(model), 'PX', Math.max(1000, TTL_TICKS * tickMs));
      if (entry) multi.hset(keys.baselineByHour, String(hour), JSON.stringify({ rps: entry.rps, windows: entry.windows }));
      await multi.exec();
    },

    /** The live model, or null when no governor renewed it lately (or it is unreadable). @returns {Promise<LiveModel | null>} */
    async read() {
      const text = await redis.get(keys.live);
      if (!text) return null;
      try {
        const model = JSON.parse(text);
        return model && typeof model === 'object' && Number.isFinite(model.requestsPerSend) ? model : null;
      } catch {
        return null;
      }
    },

    /** The baseline by hour learned so far (a new governor continues from it). @returns {Promise<LiveModel['baselineByHour']>} */
    async readBaselineByHour() {
      const fields = await redis.hgetall(keys.baselineByHour);
      /** @type {LiveModel['baselineByHour']} */
      const byHour = [];
      for (const [hour, text] of Object.entries(fields)) {
        try {
          const { rps, windows } = JSON.parse(text);
          if (Number.isFinite(rps) && Number.isFinite(windows)) byHour.push({ hour: Number(hour), rps, windows });
        } catch { /* a bad field is skipped */ }
      }
      return byHour.sort((a, b) => a.hour - b.hour);
    }
  };
}

/** @typedef {ReturnType<typeof createLiveModelStore>} LiveModelStore */

/** @param {unknown} value @param {number} fallback */
function finite(value, fallback) {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
