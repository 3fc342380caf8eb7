// The scheduler's launch: a fire of a schedule becomes a campaign through the one
// launch (campaign/launch.js), with the schedule's stored send options parsed at the
// fire, the message stored when it was added, and the campaign id derived from the fire.
import { createCampaignStore } from '../campaign/campaign-store.js';
import { parseLaunchRequest } from '../campaign/launch-request.js';
import { forecastLaunch, firstSendAt, keepForecast } from '../forecast/launch-forecast.js';
import { prepareLaunch, launch } from '../campaign/launch.js';
import { createTokenBucket } from '../token-bucket.js';
import { createSegmentQueue } from '../queue/create-queue.js';

/**
 * The launch a scheduler calls for each fire it claimed. Stops enqueueing when the
 * scheduler loses its claim on the fire (the signal).
 * @param {object} deps
 * @param {import('../../config/index.js').Config} deps.config
 * @param {import('pino').Logger} deps.logger
 * @param {import('../redis.js').PushRedis} deps.redis
 * @returns {import('./scheduler.js').Launch}
 */
export function createFireLaunch({ config, logger, redis }) {
  const store = createCampaignStore(redis, config);
  const bucket = createTokenBucket(redis, config);
  return async ({ schedule: s, fireAt, campaignId, signal }) => {
    // A fire launched late (catch-up) still counts local times and TTLs from its planned instant.
    const request = await parseLaunchRequest(s.send, {
      command: 'send', now: Date.now(), startAt: fireAt, defaultTimezone: config.defaultTimezone, message: s.message, id: campaignId
    });
    const plan = await prepareLaunch(request, { config, store, bucket });
    try {
      if (plan.warnings.length > 0) logger.warn({ scheduleId: s.id, campaignId, warnings: plan.warnings }, 'launching with warnings');
      // Made before the launch, as pushctl send makes it, and kept with the campaign for its report.
      const madeAt = Date.now();
      const forecast = await forecastLaunch(redis, config.keyPrefix, {
        devices: plan.devices, rate: plan.rate, maxRate: request.maxRate, kind: request.kind, startAt: firstSendAt(request, plan, madeAt)
      });
      const queue = createSegmentQueue(config, logger);
      try {
        const result = await launch(plan, { config, store, queue, logger, signal });
        await keepForecast(redis, config.keyPrefix, result.id, forecast, madeAt)
          .catch((error) => logger.warn({ err: error, campaignId: result.id }, 'storing the forecast with the campaign failed'));
        return { devices: result.devices };
      } finally {
        await queue.close().catch(() => {});
      }
    } finally {
      await plan.close();
    }
  };
}
