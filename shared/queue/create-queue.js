// Picks the transport named by QUEUE_BACKEND. Producers and workers only see the QueueAdapter interface.
import { createBullmqQueue } from './bullmq-queue.js';
import { createRabbitmqQueue } from './rabbitmq-queue.js';
import { rabbitmqCheck } from './rabbitmq-connection.js';
import { redisKeys } from '../redis.js';

/** @typedef {import('../types.js').Segment} Segment */

/** The queue segments travel on. */
export const SEGMENT_QUEUE = 'segments';

/**
 * First retry delay of a failed segment: 5, 10, 20, 40 s...: with the sender's own
 * retries, an SNS outage of a couple of minutes delays a campaign instead of failing its devices.
 */
export const SEGMENT_BACKOFF_MS = 5000;

/**
 * What /readyz checks for the segment queue QUEUE_BACKEND names: RabbitMQ accepts a
 * connection; nothing for BullMQ, which lives on the Redis every process checks already.
 * @param {{ queueBackend: string, amqpUrl: string }} config
 * @returns {import('../metrics/readiness.js').ReadinessCheck[]}
 */
export function segmentQueueChecks(config) {
  return config.queueBackend === 'rabbitmq' ? [rabbitmqCheck(config.amqpUrl)] : [];
}

/**
 * The segment queue for a campaign pipeline.
 * @param {import('../../config/index.js').Config} config
 * @param {import('pino').Logger} logger
 * @returns {import('../types.js').QueueAdapter<Segment>}
 */
export function createSegmentQueue(config, logger) {
  const common = {
    name: SEGMENT_QUEUE,
    attempts: config.segmentAttempts,
    backoffMs: SEGMENT_BACKOFF_MS,
    // One job per campaign segment, however often an enqueue is retried (BullMQ; RabbitMQ
    // cannot deduplicate across enqueues, and the segment sender skips devices already sent).
    idOf: (/** @type {Segment} */ segment) => `${segment.campaignId}.${segment.index}`,
    // Local-time delivery: a segment waits on the queue until its zone group's release time.
    releaseAtOf: (/** @type {Segment} */ segment) => segment.releaseAt,
    logger
  };
  if (config.queueBackend === 'rabbitmq') {
    // KEY_PREFIX names the environment on the broker too: queues pushpace.<prefix>.segments...
    return createRabbitmqQueue({ ...common, amqpUrl: config.amqpUrl, namespace: config.keyPrefix });
  }
  return createBullmqQueue({
    ...common,
    redis: config.redis,
    prefix: redisKeys(config.keyPrefix).bullPrefix,
    lockMs: config.segmentLockMs
  });
}
