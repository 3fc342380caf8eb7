// The queue interface (types.d.ts QueueAdapter) on BullMQ. BullMQ keeps jobs in
// the same Redis as the token bucket; a job is a segment, acked when the handler
// resolves, retried with exponential backoff when it throws, and copied to a
// dead-letter queue after its last attempt or at once for a permanent error. An
// item with a future release time is added as a delayed job: it waits in Redis (so
// worker restarts do not lose it) and BullMQ promotes it when the time comes.
import { Queue, Worker, DelayedError } from 'bullmq';
import { PushError } from '../errors.js';
import { openRedis } from '../redis.js';

/** @typedef {import('../types.js').QueueAdapter} QueueAdapter */
/** @typedef {import('../types.js').ConsumeOptions} ConsumeOptions */
/** @typedef {import('../types.js').HandlerResult} HandlerResult */

/**
 * @param {object} options
 * @param {import('../redis.js').RedisTarget | string} options.redis  config.redis: BullMQ's connections get the same TLS check as ours
 * @param {string} options.prefix      BullMQ key prefix (hash-tagged, from redisKeys)
 * @param {string} options.name        queue name
 * @param {number} options.attempts    tries per item before it is dead-lettered
 * @param {number} [options.backoffMs] first retry delay; doubles each attempt
 * @param {number} [options.lockMs]    how long a crashed consumer holds an item before it is redelivered
 * @param {(payload: any) => string} [options.idOf] a stable id per item: enqueueing the same id twice stores it once
 * @param {(payload: any) => number | undefined} [options.releaseAtOf] when an item may be handled (ms since the epoch); undefined: at once
 * @param {import('pino').Logger} options.logger
 * @returns {QueueAdapter}
 */
export function createBullmqQueue({ redis: target, prefix, name, attempts, backoffMs = 1000, lockMs = 10_000, idOf, releaseAtOf, logger }) {
  // BullMQ needs maxRetriesPerRequest: null, which is what openRedis gives a connection that retries.
  const connection = () => openRedis(target, { name: `pushpace:${name}` });
  const producerConnection = connection();
  const queue = new Queue(name, { connection: producerConnection, prefix });
  const deadQueue = new Queue(`${name}-dead`, { connection: producerConnection, prefix });
  /** @type {Worker | null} */
  let worker = null;
  /** @type {import('../redis.js').RedisClient | null} */
  let workerConnection = null;

  return {
    async enqueue(items) {
      if (items.length === 0) return;
      const now = Date.now();
      await queue.addBulk(items.map((payload) => ({
        name: 'item',
        data: payload,
        opts: {
          jobId: idOf?.(payload),
          delay: delayUntil(releaseAtOf?.(payload), now),
          attempts,
          backoff: { type: 'exponential', delay: backoffMs },
          removeOnComplete: true,
          // Only a failed dead-letter copy lands here (see below); keep it for a week to look at.
          removeOnFail: { age: 7 * 24 * 3600 }
        }
      })));
    },

    async consume(handler, { concurrency, onDeadLetter }) {
      workerConnection = connection();
      worker = new Worker(name, async (job, token) => {
        const attempt = job.attemptsMade + 1;
        /** @type {HandlerResult} */
        let result;
        try {
          result = await handler(job.data, attempt);
        } catch (error) {
          const permanent = error instanceof PushError && !error.retryable;
          if (!permanent && attempt < attempts) throw error; // BullMQ retries with backoff
          // Last attempt, or retrying cannot help: dead-letter it here, inside the
          // job, so the copy is made before the job is acked and cannot be lost.
          const reason = /** @type {Error} */ (error).message;
          await withRetries(async () => {
            await deadQueue.add('dead', { payload: job.data, reason, attempts: attempt, failedAt: Date.now() },
              { jobId: `dead-${job.id}`, removeOnComplete: false });
            await onDeadLetter?.(job.data, /** @type {Error} */ (error));
          });
          logger.error({ queue: name, jobId: job.id, attempt, reason }, 'item dead-lettered');
          return;
        }
        if (result && typeof result.deferMs === 'number') {
          // Handed back, not failed: no attempt is counted.
          await job.moveToDelayed(Date.now() + result.deferMs, token);
          throw new DelayedError();
        }
      }, {
        connection: workerConnection,
        prefix,
        concurrency,
        lockDuration: lockMs,
        stalledInterval: Math.max(1000, Math.floor(lockMs / 2)),
        // A consumer killed mid-item is not the item's fault: let it be redelivered many times.
        maxStalledCount: 100
      });
      worker.on('error', (error) => logger.error({ queue: name, err: error }, 'queue consumer error'));
      await worker.waitUntilReady();
    },

    async stopConsuming() {
      await worker?.close();
    },

    async counts() {
      const [counts, dead] = await Promise.all([queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'), deadQueue.count()]);
      return { waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0), active: counts.active ?? 0, delayed: counts.delayed ?? 0, dead };
    },

    async close() {
      await worker?.close();
      await Promise.all([queue.close(), deadQueue.close()]);
      await Promise.allSettled([producerConnection.quit(), workerConnection?.quit()]);
    }
  };
}

/**
 * BullMQ's job delay for a release time: none when it is absent or already past.
 * @param {number | undefined} releaseAt
 * @param {number} now
 */
function delayUntil(releaseAt, now) {
  return releaseAt !== undefined && releaseAt > now ? Math.ceil(releaseAt - now) : undefined;
}

/**
 * Runs `work` up to 4 times, 1 s apart: dead-lettering must not be lost to a
 * blip, or the item would vanish with nobody told.
 * @param {() => Promise<void>} work
 */
async function withRetries(work) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 4) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
