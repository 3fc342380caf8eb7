// The worker process's parts, wired: segment queue → segment sender → SNS.
// The entry file (workers/worker.js) only loads config and handles signals.
import { createRedis, assertRedisReachable, warnIfNotPersistent } from './redis.js';
import { createCampaignStore } from './campaign-store.js';
import { createTokenBucket } from './token-bucket.js';
import { createSnsClient } from './sns-client.js';
import { createSegmentSender } from './segment-sender.js';
import { createSegmentQueue } from './queue/create-queue.js';
import { observeWorker } from './metrics/process-observers.js';
import { detachedOps } from './metrics/ops-server.js';

/** @typedef {import('./types.js').Segment} Segment */

/**
 * Starts consuming segments. Resolves once the consumer is running.
 * @param {import('../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @param {import('./metrics/ops-server.js').OpsContext} [ops] where metrics go (lifecycle.js passes its own)
 */
export async function startDispatcher(config, logger, ops = detachedOps('worker')) {
  const redis = createRedis(config.redisUrl, { name: 'pushpace:worker' });
  await assertRedisReachable(redis, config.redisUrl);
  await warnIfNotPersistent(redis, logger);
  const store = createCampaignStore(redis, config);
  const bucket = createTokenBucket(redis, config);
  const sns = createSnsClient(config.sns, { maxSockets: config.publishConcurrency });
  const sender = createSegmentSender({ store, bucket, sns, logger, config });
  const queue = createSegmentQueue(config, logger);
  // Metrics, readiness checks and the dashboard's progress samples (shared/metrics/).
  const observed = observeWorker({ ops, redis, store, bucket, queue, sns, config, logger });

  await queue.consume((segment) => sender.send(segment), {
    concurrency: config.workerConcurrency,
    onDeadLetter: (segment, error) => failRemaining(store, segment, error)
  });
  logger.info({ sns: config.sns.endpoint ?? 'aws', region: config.sns.region, concurrency: config.workerConcurrency,
    publishConcurrency: config.publishConcurrency }, 'worker consuming segments');
  observed.start();

  return {
    readiness: observed.readiness,
    /** Stops taking segments, hands back what is in flight and closes connections. */
    async close() {
      observed.stop();
      sender.stop();
      await queue.stopConsuming();
      await queue.close();
      sns.destroy();
      await redis.quit().catch(() => {});
    }
  };
}

/**
 * A dead-lettered segment's devices that never got an outcome are failed with
 * the reason, so the campaign still completes and says why they were not sent.
 * @param {import('./campaign-store.js').CampaignStore} store
 * @param {Segment} segment
 * @param {Error} error
 */
async function failRemaining(store, segment, error) {
  const done = await store.doneFlags(segment.campaignId, segment.firstSeq, segment.devices.length);
  const reason = `not sent: ${error.message}`.slice(0, 300);
  const outcomes = segment.devices.flatMap((device, i) => done[i] ? [] : [{
    seq: segment.firstSeq + i, endpointArn: device.endpointArn, outcome: /** @type {const} */ ('failed'), reason
  }]);
  await store.recordOutcomes(segment.campaignId, outcomes);
  await store.finishSegment(segment.campaignId, segment.index, 0);
}
