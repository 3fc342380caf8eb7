// The worker process's parts, wired: segment queue → segment sender → SNS.
// The entry file (workers/worker.js) only loads config and handles signals.
import { createRedis, assertRedisReachable, warnIfNotPersistent } from '../redis.js';
import { createCampaignStore } from '../campaign/campaign-store.js';
import { createTokenBucket } from '../token-bucket.js';
import { createSnsClient } from '../sns/sns-client.js';
import { createSegmentSender, kept } from './segment-sender.js';
import { createSegmentQueue } from '../queue/create-queue.js';
import { observeWorker } from '../metrics/process-observers.js';
import { detachedOps } from '../metrics/ops-server.js';

/** @typedef {import('../types.js').Segment} Segment */

/**
 * Starts consuming segments. Resolves once the consumer is running.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @param {import('../metrics/ops-server.js').OpsContext} [ops] where metrics go (lifecycle.js passes its own)
 */
export async function startWorker(config, logger, ops = detachedOps('worker')) {
  const redis = createRedis(config.redis, { name: 'pushpace:worker' });
  await assertRedisReachable(redis, config.redis);
  await warnIfNotPersistent(redis, logger);
  const store = createCampaignStore(redis, config);
  const bucket = createTokenBucket(redis, config);
  const sns = await createSnsClient(config.sns, { maxSockets: config.publishConcurrency });
  const sender = createSegmentSender({ store, bucket, sns, logger, config });
  const queue = createSegmentQueue(config, logger);
  // Metrics, readiness checks and the dashboard's progress samples (shared/metrics/).
  const observed = observeWorker({ ops, redis, store, bucket, queue, sns, config, logger });

  await queue.consume((segment) => sender.send(segment), {
    concurrency: config.workerConcurrency,
    onDeadLetter: (segment, error) => settleDeadLettered(store, segment, error)
  });
  logger.info({ sns: config.sns.endpoint ?? 'aws', region: config.sns.region, snsClient: sns.path, concurrency: config.workerConcurrency,
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
 * Settles a dead-lettered segment: its devices that never got an outcome are counted
 * as what they are by now, so the campaign still completes and says why they were not
 * sent: `cancelled` when the campaign was cancelled (or failed) meanwhile, `expired`
 * when its deadline has passed (nothing is sent after it, so no retry could have reached
 * them), else `failed` with the reason. Each is recorded only for a device without an
 * outcome, like every other outcome. Nothing is written for a campaign that is gone.
 * @param {import('../campaign/campaign-store.js').CampaignStore} store
 * @param {Segment} segment
 * @param {Error} error
 * @param {number} [now]
 */
export async function settleDeadLettered(store, segment, error, now = Date.now()) {
  const campaign = await store.get(segment.campaignId);
  if (!campaign) return;
  const done = await store.doneFlags(segment.campaignId, segment.firstSeq, segment.devices.length, campaign.outcomeBits);
  const unsent = segment.devices.flatMap((device, i) => done[i] ? [] : [{ seq: segment.firstSeq + i, ...kept(device) }]);
  if (campaign.state === 'cancelled' || campaign.state === 'failed') {
    await store.dropSegment(campaign, segment.index, unsent);
    return;
  }
  // As in the sender: the segment's own deadline (its zone's), else the campaign's.
  // Campaigns with 2-bit outcomes have no deadlines.
  const deadlineAt = segment.deadlineAt ?? campaign.deadlineAt;
  const expired = campaign.outcomeBits === 3 && deadlineAt !== null && now >= deadlineAt;
  const reason = `not sent: ${error.message}`.slice(0, 300);
  await store.recordOutcomes(segment.campaignId, unsent.map((device) => expired
    ? { ...device, outcome: /** @type {const} */ ('expired') }
    : { ...device, outcome: /** @type {const} */ ('failed'), reason }));
  await store.finishSegment(segment.campaignId, segment.index, 0);
}
