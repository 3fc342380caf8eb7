// The ingest process's parts, wired: RabbitMQ events → validation → devices from
// PostgreSQL → the transactional lane of the token bucket → SNS. The entry file
// (producers/ingest.js) only loads config and handles signals.
import { createCampaignStore } from '../campaign/campaign-store.js';
import { createPool } from '../db/pool.js';
import { createRedis, assertRedisReachable, warnIfNotPersistent } from '../redis.js';
import { createSnsClient } from '../sns/sns-client.js';
import { createTokenBucket } from '../token-bucket.js';
import { createDeviceResolver } from './device-resolver.js';
import { createEventConsumer } from './event-consumer.js';
import { createEventLedger } from './event-ledger.js';
import { createEventProcessor } from './event-processor.js';
import { createEventValidator } from './event-validator.js';
import { createTemplateStore } from './templates.js';
import { createTransactionalSender } from './transactional-sender.js';
import { observeIngest } from '../metrics/process-observers.js';
import { detachedOps } from '../metrics/ops-server.js';

/**
 * Starts consuming events. Resolves once Redis answers; RabbitMQ is connected in the
 * background and reconnected whenever it goes away, so a broker restart never
 * restarts this process.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @param {import('../metrics/ops-server.js').OpsContext} [ops] where metrics go (lifecycle.js passes its own)
 */
export async function startIngest(config, logger, ops = detachedOps('ingest')) {
  const redis = createRedis(config.redis, { name: 'pushpace:ingest' });
  await assertRedisReachable(redis, config.redis);
  await warnIfNotPersistent(redis, logger);
  // One query per event, each a few ms: a small pool serves the whole prefetch.
  const pool = createPool(config.databaseUrl, { max: Math.min(config.events.concurrency, 8), application_name: 'pushpace:ingest' });
  const sns = await createSnsClient(config.sns, { maxSockets: config.publishConcurrency });
  const observed = observeIngest({ ops, redis, sns, pool, config, logger });

  const processor = createEventProcessor({
    validator: createEventValidator({ templates: createTemplateStore(config.events.templatesDir) }),
    resolver: createDeviceResolver({ pool, store: createCampaignStore(redis, config) }),
    ledger: createEventLedger(redis, { keyPrefix: config.keyPrefix, dedupeHours: config.events.dedupeHours }),
    sender: createTransactionalSender({ bucket: createTokenBucket(redis, config), sns, redis, config }),
    logger
  });
  const consumer = createEventConsumer({ url: config.amqpUrl, events: config.events, logger });
  consumer.start((delivery, signal) => observed.counted(processor.handle(delivery, signal)));
  logger.info({ sns: config.sns.endpoint ?? 'aws', region: config.sns.region, snsClient: sns.path, transactionalShare: config.transactionalShare,
    templatesDir: config.events.templatesDir }, 'ingest started');

  return {
    readiness: observed.readiness,
    /** Stops taking events, lets those in progress finish or go back, closes connections. */
    async close() {
      await consumer.stop();
      sns.destroy();
      await Promise.allSettled([pool.end(), redis.quit()]);
    }
  };
}
