// What every pushctl command needs: config, a logger on stderr (stdout is for
// results), Redis, the campaign store and the token bucket, opened once.
import { createLogger } from '../../shared/logger.js';
import { createRedis, assertRedisReachable } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import pino from 'pino';

/**
 * @param {import('../../config/index.js').Config} config
 */
export async function openContext(config) {
  const logger = createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, { process: 'pushctl' }, pino.destination(2));
  const redis = createRedis(config.redis, { failFast: true, name: 'pushpace:pushctl' });
  try {
    await assertRedisReachable(redis, config.redis);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  return {
    config,
    logger,
    redis,
    store: createCampaignStore(redis, config),
    bucket: createTokenBucket(redis, config),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    }
  };
}

/** @typedef {Awaited<ReturnType<typeof openContext>>} Context */
