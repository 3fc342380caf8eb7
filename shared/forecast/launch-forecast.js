// The forecast a launch makes and keeps. pushctl send (and its dry run), schedule add and the
// scheduler's fires all ask the same question, "how long, and what load, at today's headroom":
// from the governor's live model when a governor runs (shared/governor/live-model.js), else
// from the fixed rate. A launched campaign keeps it (its `forecast` field), so pushctl report
// can compare it with what happened (shared/campaign/campaign-report.js).
import { createLiveModelStore } from '../governor/live-model.js';
import { readMemoryEntries } from '../governor/model-memory.js';
import { forecastCampaign, fixedRateForecast } from './campaign-forecast.js';
import { redisKeys } from '../redis.js';

/** @typedef {import('./campaign-forecast.js').Forecast} Forecast */

/**
 * The forecast for a launch plan; `source` says whether a live governor made it.
 * @param {import('../redis.js').PushRedis} redis
 * @param {string} keyPrefix
 * @param {{ devices: number, rate: number, maxRate: number | null, startAt: number, kind?: string | null }} campaign
 *   rate: the shared rate now (capped by maxRate); startAt: the first send; kind: its message kind
 * @returns {Promise<Forecast>}
 */
export async function forecastLaunch(redis, keyPrefix, { devices, rate, maxRate, startAt, kind = null }) {
  const model = await createLiveModelStore(redis, keyPrefix).read().catch(() => null);
  if (!model) return fixedRateForecast({ devices, rate });
  // The memory calibrates it; without it (unreadable) the forecast is the model's alone, and says so.
  const earlier = await readMemoryEntries(redis, keyPrefix).catch(() => []);
  return forecastCampaign(model, { devices, startAt, now: Date.now(), maxRate, earlier, kind });
}

/**
 * When a launch's first send is due: its start (a schedule's fire), or a local-time campaign's
 * first release.
 * @param {import('../campaign/launch-request.js').LaunchRequest} request
 * @param {{ releases: Array<{ at: number }> }} plan
 * @param {number} now
 */
export function firstSendAt(request, plan, now) {
  return request.timing.localTime === null ? (request.startAt ?? now) : (plan.releases[0]?.at ?? now);
}

/**
 * What is stored with the campaign at launch, for pushctl report's "forecast vs actual"
 * (campaign-report.js compares the fields named as its `actual`'s).
 * @param {Forecast} f
 * @param {number} madeAt
 */
function forecastRecord(f, madeAt) {
  return {
    source: f.source, madeAt: new Date(madeAt).toISOString(), durationSeconds: f.durationSeconds,
    durationLowSeconds: f.durationLowSeconds, durationHighSeconds: f.durationHighSeconds, averageRate: f.averageRate,
    modelDurationSeconds: f.modelDurationSeconds, calibration: f.calibration,
    peakLoadRps: f.peakLoadRps, capacityRps: f.capacityRps, requestsPerSend: f.requestsPerSend
  };
}

/**
 * Keeps the launch's forecast with its campaign. A help, not a need: the caller logs a failure.
 * @param {import('../redis.js').RedisClient} redis
 * @param {string} keyPrefix
 * @param {string} campaignId
 * @param {Forecast} forecast
 * @param {number} madeAt
 */
export async function keepForecast(redis, keyPrefix, campaignId, forecast, madeAt) {
  await redis.hset(redisKeys(keyPrefix).campaign(campaignId).hash, 'forecast', JSON.stringify(forecastRecord(forecast, madeAt)));
}
