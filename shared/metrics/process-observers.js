// What each process type adds to its metrics and readiness checks, in one call from its
// wiring file (worker-process.js, ingest-process.js, governor-process.js), so those files only
// gain a line or two and the senders, the governor and the controller none.
import { createCampaignSampler } from './campaign-sampler.js';
import { createCampaignHistory } from './campaign-history.js';
import { registerClusterState } from './cluster-state.js';
import { exportLeadership, observeController } from './controller-metrics.js';
import { postgresCheck, redisCheck, snsCheck } from './readiness.js';
import { eventMetrics } from './registry.js';
import { createSeriesStore } from './series-store.js';
import { instrumentSnsClient } from './sns-metrics.js';
import { createTokenBucket } from '../token-bucket.js';
import { segmentQueueChecks } from '../queue/create-queue.js';
import { rabbitmqCheck } from '../queue/rabbitmq-connection.js';

/** @typedef {import('./ops-server.js').OpsContext} OpsContext */
/** @typedef {import('../../config/index.js').Config} Config */

/**
 * The worker: SNS publishes (kind campaign), the shared state, and the campaign samples
 * the dashboard charts. Call start() once consuming, stop() before closing connections.
 * @param {object} parts
 * @param {OpsContext} parts.ops
 * @param {import('../redis.js').PushRedis} parts.redis
 * @param {import('../campaign/campaign-store.js').CampaignStore} parts.store
 * @param {import('../token-bucket.js').TokenBucket} parts.bucket
 * @param {import('../types.js').QueueAdapter} parts.queue
 * @param {import('../sns/sns-client.js').SnsClient} parts.sns
 * @param {Config} parts.config
 * @param {import('pino').Logger} parts.logger
 */
export function observeWorker({ ops, redis, store, bucket, queue, sns, config, logger }) {
  const publishes = instrumentSnsClient(sns, { kind: 'campaign', registry: ops.registry });
  registerClusterState(ops.registry, { bucket, store, queue, logger });
  const sampler = createCampaignSampler({ redis, store, bucket, series: createSeriesStore(redis, config), history: createCampaignHistory(redis, config), logger });
  return {
    readiness: [
      redisCheck(redis),
      ...segmentQueueChecks(config),
      snsCheck(config.sns, publishes)
    ],
    start: () => sampler.start(),
    stop: () => sampler.stop()
  };
}

/**
 * Ingest: SNS publishes (kind transactional), events by disposition, the bucket.
 * @param {object} parts
 * @param {OpsContext} parts.ops
 * @param {import('../redis.js').PushRedis} parts.redis
 * @param {import('../sns/sns-client.js').SnsClient} parts.sns
 * @param {import('pg').Pool} parts.pool
 * @param {Config} parts.config
 * @param {import('pino').Logger} parts.logger
 */
export function observeIngest({ ops, redis, sns, pool, config, logger }) {
  const publishes = instrumentSnsClient(sns, { kind: 'transactional', registry: ops.registry });
  registerClusterState(ops.registry, { bucket: createTokenBucket(redis, config), logger });
  const { events } = eventMetrics(ops.registry);
  for (const disposition of ['ack', 'retry', 'dead', 'requeue']) events.inc({ disposition }, 0);
  return {
    readiness: [redisCheck(redis), rabbitmqCheck(config.amqpUrl), postgresCheck(pool), snsCheck(config.sns, publishes)],
    /**
     * Counts what became of an event, passing the disposition through.
     * @template {{ action: string }} D
     * @param {Promise<D>} handling
     */
    async counted(handling) {
      const disposition = await handling;
      events.inc({ disposition: disposition.action });
      return disposition;
    }
  };
}

/**
 * The governor: the controller's decisions (gauges and the dashboard's governor series),
 * whether it holds the lease, the bucket.
 * @param {object} parts
 * @param {OpsContext} parts.ops
 * @param {import('../redis.js').PushRedis} parts.redis
 * @param {Config} parts.config
 * @param {import('pino').Logger} parts.logger
 */
export function observeGovernor({ ops, redis, config, logger }) {
  return {
    /**
     * The controller, watched.
     * @param {import('../governor/governor.js').Controller} controller
     */
    controller: (controller) => observeController(controller, {
      registry: ops.registry, sloMs: config.pacing.controller.sloP95Ms, series: createSeriesStore(redis, config), logger
    }),
    /**
     * Exports whether the governor holds the lease, and the bucket it steers.
     * @param {{ leading(): boolean }} governor
     */
    watch(governor) {
      exportLeadership(ops.registry, governor);
      registerClusterState(ops.registry, { bucket: createTokenBucket(redis, config), logger });
    },
    readiness: [redisCheck(redis)]
  };
}
