// The governor process's parts, wired: gateway metric source → pacing controller →
// the shared token bucket, under a Redis lease. workers/governor.js only starts it.
import { ConfigError } from '../errors.js';
import { createRedis, assertRedisReachable } from '../redis.js';
import { createTokenBucket } from '../token-bucket.js';
import { createInspectableController } from '../pacing/controller.js';
import { createGatewayMetrics, gatewaySourceConfig, GATEWAY_METRIC_KINDS_TEXT } from '../gateway-metrics/gateway-metrics.js';
import { createGovernor } from './governor.js';
import { createModelMemory } from './model-memory.js';
import { createLiveModelStore } from './live-model.js';
import { resolveControllerOptions } from '../pacing/controller-options.js';
import { createCampaignStore } from '../campaign/campaign-store.js';
import { devicesStillToSend } from '../campaign/campaign-progress.js';
import { observeGovernor } from '../metrics/process-observers.js';
import { detachedOps } from '../metrics/ops-server.js';

/**
 * Starts a governor: it stands by until it holds the lease, then decides the rate
 * once per metrics window.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @param {import('../metrics/ops-server.js').OpsContext} [ops] where metrics go (lifecycle.js passes its own)
 */
export async function startGovernor(config, logger, ops = detachedOps('governor')) {
  const { kind, requestRate } = config.gatewayMetrics;
  const { metricsLagMs, metricsWindowMs } = config.pacing.controller;
  // Without metrics the controller can only hold the rate at its safe floor, which
  // would quietly cap every campaign: refuse to start instead.
  if (kind === 'none') {
    throw new ConfigError('GATEWAY_METRICS is not set: the governor needs a gateway metric source ' +
      `(${GATEWAY_METRIC_KINDS_TEXT}, at GATEWAY_METRICS_URL); without one, set the rate with pushctl rate`);
  }
  const metrics = createGatewayMetrics(gatewaySourceOptions(config));
  const redis = createRedis(config.redis, { name: 'pushpace:governor' });
  await assertRedisReachable(redis, config.redis);
  // Decisions as metrics and as the dashboard's gateway series (shared/metrics/).
  const observed = observeGovernor({ ops, redis, config, logger });
  const campaigns = createCampaignStore(redis, config);
  /** @type {Promise<import('../types.js').Campaign[]> | null} */
  let reading = null;
  /** The running campaigns: one read for the tick's two questions (devices left, kind), asked together. */
  const runningCampaigns = () => (reading ??= campaigns.active()
    .then((active) => active.filter((campaign) => campaign.state === 'running'))
    .finally(() => { reading = null; }));
  const governor = createGovernor({
    redis,
    keyPrefix: config.keyPrefix,
    bucket: createTokenBucket(redis, config),
    // PACING_* (config/index.js): the SLO, priors, bounds and metrics timing.
    controller: observed.controller(createInspectableController(config.pacing.controller)),
    readGateway: async () => gatewaySample(await metrics.read(), { kind, requestRate, metricsLagMs, metricsWindowMs, logger }),
    readRemaining: async () => {
      const running = await runningCampaigns();
      const releases = await Promise.all(running.map((campaign) => (campaign.localTime ? campaigns.releases(campaign.id) : [])));
      return devicesStillToSend(running.map((campaign, i) => ({ campaign, releases: releases[i] })));
    },
    // The kind the running campaigns name (pushctl send --kind), when they agree: the memory's
    // prior for it, and the kind a finished campaign is remembered under.
    readKind: async () => {
      const kinds = new Set((await runningCampaigns()).map((campaign) => campaign.kind));
      return kinds.size === 0 ? undefined : kinds.size === 1 ? [...kinds][0] : null;
    },
    logger,
    // What finished campaigns taught: each campaign's prior comes from it (pushctl model show|reset).
    memory: createModelMemory(redis, config.keyPrefix, resolveControllerOptions(config.pacing.controller)),
    // What the controller believes, each tick: pushctl send --dry-run and schedule add forecast from it.
    liveModel: { store: createLiveModelStore(redis, config.keyPrefix), options: resolveControllerOptions(config.pacing.controller) },
    // One decision per metrics window: the controller expects observations at that pace,
    // and a metrics-scrape source's window is the time between two reads.
    tickMs: config.pacing.controller.metricsWindowMs
  });
  governor.start();
  observed.watch(governor);
  logger.info({ holderId: governor.holderId, source: kind, pacing: config.pacing.controller }, 'governor started');
  return {
    readiness: observed.readiness,
    async close() {
      await governor.stop();
      await metrics.close();
      await redis.quit().catch(() => {});
    }
  };
}

/**
 * A source's reading as the controller's gateway sample, or null; logs what is wrong with it.
 * @param {import('../gateway-metrics/reading.js').GatewayReading} reading
 * @param {{ kind: string, requestRate: 'measured' | 'none', metricsLagMs: number, metricsWindowMs: number, logger: { warn(fields: object, message: string): void } }} context
 * @returns {import('../types.js').GatewaySample | null}
 */
export function gatewaySample(reading, { kind, requestRate, metricsLagMs, metricsWindowMs, logger }) {
  if (reading.error) logger.warn({ source: kind, error: reading.error }, 'gateway metrics unreadable');
  const g = reading.gateway;
  // The controller places each reading PACING_METRICS_LAG_MS back in time. Data a window
  // older than that (CloudWatch running late) is placed too late, so say so.
  if (g && reading.ageMs > metricsLagMs + metricsWindowMs) {
    logger.warn({ source: kind, ageMs: reading.ageMs, metricsLagMs }, 'gateway metrics older than PACING_METRICS_LAG_MS allows for; raise it');
  }
  // Latency is what the controller steers by; without it the reading counts as
  // unavailable. A missing p99 or error ratio is read as the p95 and none. A source that
  // sees no request rate (the active probe) passes rps null, and the controller reads the
  // load off its latency curve.
  if (!g || g.p95Ms === null) return null;
  return { p95Ms: g.p95Ms, p99Ms: g.p99Ms ?? g.p95Ms, errorRatio: g.errorRatio ?? 0, rps: requestRate === 'none' ? null : g.rps };
}

/**
 * The metric source's options, with its window matched to the controller's: each reading
 * must cover one decision window (each kind's rule: gateway-metrics/gateway-metrics.js).
 * @param {import('../../config/index.js').Config} config
 * @returns {import('../gateway-metrics/gateway-metrics.js').GatewayMetricsConfig}
 */
export function gatewaySourceOptions(config) {
  const { kind, ...settings } = config.gatewayMetrics;
  if (kind === 'none') throw new ConfigError(`GATEWAY_METRICS ${kind} is not a metric source`);
  return gatewaySourceConfig(kind, { ...settings, windowMs: config.pacing.controller.metricsWindowMs });
}
