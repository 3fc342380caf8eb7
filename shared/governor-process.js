// The governor process's parts, wired: gateway metric source → pacing controller →
// the shared token bucket, under a Redis lease. workers/governor.js only starts it.
import { ConfigError } from './errors.js';
import { createRedis, assertRedisReachable } from './redis.js';
import { createTokenBucket } from './token-bucket.js';
import { createInspectableController } from './pacing/controller.js';
import { CONTROLLER_DEFAULTS } from './pacing/controller-options.js';
import { createGatewayMetrics } from './gateway-metrics/gateway-metrics.js';
import { createGovernor } from './governor.js';

/**
 * Starts a governor: it stands by until it holds the lease, then decides the rate
 * once per metrics window.
 * @param {import('../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 */
export async function startGovernor(config, logger) {
  const { kind, url, histogram } = config.gatewayMetrics;
  // Without metrics the controller can only hold the rate at its safe floor, which
  // would quietly cap every campaign: refuse to start instead.
  if (kind === 'none' || !url) {
    throw new ConfigError('GATEWAY_METRICS is not set: the governor needs a gateway metric source ' +
      '(prometheus-api, metrics-scrape or active-probe, at GATEWAY_METRICS_URL); without one, set the rate with pushctl rate');
  }
  const metrics = createGatewayMetrics(kind === 'active-probe' ? { kind, url } : { kind, url, ...(kind === 'prometheus-api' ? { metric: histogram } : { histogram }) });
  const redis = createRedis(config.redisUrl, { name: 'pushpace:governor' });
  await assertRedisReachable(redis, config.redisUrl);
  const governor = createGovernor({
    redis,
    keyPrefix: config.keyPrefix,
    bucket: createTokenBucket(redis, config),
    controller: createInspectableController(),
    readGateway: async () => {
      const reading = await metrics.read();
      if (reading.error) logger.warn({ source: kind, error: reading.error }, 'gateway metrics unreadable');
      const g = reading.gateway;
      // Latency and load are what the controller steers by; without them the reading
      // counts as unavailable. A missing p99 or error ratio is read as the p95 and none.
      if (!g || g.p95Ms === null || g.rps === null) return null;
      return { p95Ms: g.p95Ms, p99Ms: g.p99Ms ?? g.p95Ms, errorRatio: g.errorRatio ?? 0, rps: g.rps };
    },
    logger,
    // One decision per metrics window: the controller expects observations at that pace.
    tickMs: CONTROLLER_DEFAULTS.metricsWindowMs
  });
  governor.start();
  logger.info({ holderId: governor.holderId, source: kind }, 'governor started');
  return {
    async close() {
      await governor.stop();
      await metrics.close();
      await redis.quit().catch(() => {});
    }
  };
}
