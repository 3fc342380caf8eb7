// The web process's parts, wired: Redis → campaign store, bucket, series → the dashboard
// server on $PORT, with /metrics, /healthz and /readyz on the same port. It also samples
// campaign progress for the charts (one sampler across all processes takes each interval)
// and exports the shared-state gauges. producers/web.js only starts it.
import { createRedis, assertRedisReachable } from '../redis.js';
import { createCampaignStore } from '../campaign/campaign-store.js';
import { createTokenBucket } from '../token-bucket.js';
import { createSegmentQueue, segmentQueueChecks } from '../queue/create-queue.js';
import { createSeriesStore } from '../metrics/series-store.js';
import { createCampaignSampler } from '../metrics/campaign-sampler.js';
import { createCampaignHistory } from '../metrics/campaign-history.js';
import { registerClusterState } from '../metrics/cluster-state.js';
import { redisCheck } from '../metrics/readiness.js';
import { detachedOps } from '../metrics/ops-server.js';
import { createDashboardAuth } from './dashboard-auth.js';
import { createDashboardServer } from './dashboard-server.js';
import { createScheduleReader } from './schedules.js';
import { createLiveModelStore } from '../governor/live-model.js';
import { createLoadAheadThread } from '../forecast/load-ahead-thread.js';

/**
 * Starts the dashboard. Resolves once it listens.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @param {import('../metrics/ops-server.js').OpsContext} [ops] metrics and health (lifecycle.js passes its own)
 */
export async function startWeb(config, logger, ops = detachedOps('web')) {
  const redis = createRedis(config.redis, { name: 'pushpace:web' });
  await assertRedisReachable(redis, config.redis);
  const store = createCampaignStore(redis, config);
  const bucket = createTokenBucket(redis, config);
  const series = createSeriesStore(redis, config);
  // Only its counts are read, for the queue gauges; nothing is consumed here.
  const queue = createSegmentQueue(config, logger);
  registerClusterState(ops.registry, { bucket, store, queue, logger });
  const history = createCampaignHistory(redis, config);
  const sampler = createCampaignSampler({ redis, store, bucket, series, history, logger });
  const auth = createDashboardAuth(config.dashboard);
  const forecaster = createLoadAheadThread();
  const app = createDashboardServer({
    store, bucket, series, history, auth, logger,
    schedules: createScheduleReader(redis, config),
    liveModel: createLiveModelStore(redis, config.keyPrefix),
    predictLoad: forecaster.compute,
    ops
  });
  await app.listen({ port: config.port, host: '0.0.0.0' });
  sampler.start();
  const address = app.server.address();
  logger.info({ port: typeof address === 'object' && address ? address.port : config.port, controlEnabled: auth.controlEnabled,
    publicReads: auth.publicReads }, 'dashboard listening');
  if (!auth.controlEnabled) logger.warn('DASHBOARD_TOKEN is not set: pause, resume and cancel are disabled on the dashboard');

  return {
    readiness: [redisCheck(redis), ...segmentQueueChecks(config)],
    /** Stops sampling, lets requests in progress finish and closes connections. */
    async close() {
      sampler.stop();
      await app.close();
      await forecaster.close();
      await queue.close().catch(() => {});
      await redis.quit().catch(() => {});
    }
  };
}
