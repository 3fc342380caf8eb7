// The scheduler process's parts, wired: Redis, the schedule and campaign stores, the
// core (scheduler.js), the launch of a fire (launch-fire.js) and node-cron as its
// once-a-second trigger. producers/scheduler.js only starts it.
import cron from 'node-cron';
import { createRedis, assertRedisReachable } from '../redis.js';
import { createCampaignStore } from '../campaign/campaign-store.js';
import { redisCheck } from '../metrics/readiness.js';
import { segmentQueueChecks } from '../queue/create-queue.js';
import { schedulerMetrics } from '../metrics/registry.js';
import { detachedOps } from '../metrics/ops-server.js';
import { createScheduleStore } from './schedule-store.js';
import { createScheduler } from './scheduler.js';
import { createFireLaunch } from './launch-fire.js';

/**
 * Starts a scheduler: from now on it looks at every schedule once a second.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @param {import('../metrics/ops-server.js').OpsContext} [ops] where metrics go (lifecycle.js passes its own)
 */
export async function startScheduler(config, logger, ops = detachedOps('scheduler')) {
  const { fires } = schedulerMetrics(ops.registry);
  for (const outcome of ['launched', 'skipped', 'failed']) fires.inc({ outcome }, 0);
  const redis = createRedis(config.redis, { name: 'pushpace:scheduler' });
  await assertRedisReachable(redis, config.redis);
  const scheduler = createScheduler({
    store: createScheduleStore(redis, config),
    campaigns: createCampaignStore(redis, config),
    launch: createFireLaunch({ config, logger, redis }),
    logger,
    leaseMs: config.scheduler.leaseMs,
    toleranceMs: config.scheduler.toleranceMs,
    onFire: (outcome) => fires.inc({ outcome })
  });
  // node-cron only paces the ticks (every second, on the second): which fires are due,
  // in which time zone and across daylight-saving changes, the core works out itself.
  const trigger = cron.schedule('* * * * * *', () => { void scheduler.tick(); }, {
    name: 'pushpace-scheduler-tick',
    logger: {
      info: (message) => logger.debug(message),
      warn: (message) => logger.debug(message),
      error: (message, error) => logger.error({ err: error }, String(message)),
      debug: () => {}
    }
  });
  void scheduler.tick();
  logger.info({ holderId: scheduler.holderId, toleranceMs: config.scheduler.toleranceMs, leaseMs: config.scheduler.leaseMs }, 'scheduler started');
  return {
    // What every launch needs: Redis, and the broker its segments go to (as for web and worker).
    readiness: [redisCheck(redis), ...segmentQueueChecks(config)],
    async close() {
      await trigger.destroy();
      // Launches in progress finish first: a fire abandoned half-way would have to be failed.
      await scheduler.close();
      await redis.quit().catch(() => redis.disconnect());
    }
  };
}
