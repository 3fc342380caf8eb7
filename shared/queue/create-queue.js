// Picks the transport named by QUEUE_BACKEND. Producers and workers only see the QueueAdapter interface.
import { createBullmqQueue } from './bullmq-queue.js';
import { redisKeys } from '../redis.js';

/** @typedef {import('../types.js').Segment} Segment */

/** The queue segments travel on. */
export const SEGMENT_QUEUE = 'segments';

/**
 * The segment queue for a campaign pipeline.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @returns {import('../types.js').QueueAdapter<Segment>}
 */
export function createSegmentQueue(config, logger) {
  return createBullmqQueue({
    redisUrl: config.redisUrl,
    prefix: redisKeys(config.keyPrefix).bullPrefix,
    name: SEGMENT_QUEUE,
    attempts: config.segmentAttempts,
    // 5, 10, 20, 40 s...: with the sender's own retries, an SNS outage of a couple
    // of minutes delays a campaign instead of failing its devices.
    backoffMs: 5000,
    lockMs: config.segmentLockMs,
    // One job per campaign segment, however often an enqueue is retried.
    idOf: (segment) => `${segment.campaignId}.${segment.index}`,
    logger
  });
}
