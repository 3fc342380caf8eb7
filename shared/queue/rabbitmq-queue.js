// The queue interface (types.d.ts QueueAdapter) on RabbitMQ, with the same
// semantics as bullmq-queue.js: an item is acked when the handler resolves;
// `{ deferMs }` hands it back without counting an attempt; a throw retries it
// after backoffMs, doubling; after the last attempt, or at once for a permanent
// error, a copy goes to the dead queue with the reason and onDeadLetter is called.
//
// Queues and delays: rabbitmq-topology.js. Retries and deferrals are new messages
// (published with confirms, then the original is acked), so the attempt number
// travels in the `x-attempt` header and redeliveries after a lost connection do
// not count as attempts. One connection per adapter, reopened with backoff
// (rabbitmq-session.js); a delivery is acked only on the channel it came on.
//
// Release times: an item whose releaseAtOf is in the future carries it in the
// `x-release-at` header and goes to the longest wait queue that does not overshoot
// it. When it comes back early the adapter sends it down the ladder again without
// calling the handler (and without counting an attempt); under the shortest wait it
// holds the item itself for the last few ms. Wait queues are durable, so a release
// survives worker and broker restarts; with no consumer running the item waits in
// the main queue and is checked again when one starts. No plugin is needed: a
// per-message TTL would expire only at the head of its queue, behind longer ones.
import { PushError, PermanentError } from '../errors.js';
import { rabbitmqTopology, retryDelayMs, deferDelayMs, releaseHopMs } from './rabbitmq-topology.js';
import { createRabbitmqSession } from './rabbitmq-session.js';

/** @typedef {import('../types.js').QueueAdapter} QueueAdapter */
/** @typedef {import('../types.js').HandlerResult} HandlerResult */
/** @typedef {import('amqplib').ConsumeMessage} ConsumeMessage */
/** @typedef {import('./rabbitmq-session.js').Subscription} Subscription */
/** @typedef {{ subscription: Subscription, message: ConsumeMessage }} Delivery */

const ATTEMPT_HEADER = 'x-attempt';
const RELEASE_HEADER = 'x-release-at';
// Dead-letter headers are read by people (management UI); the reason is an error message.
const MAX_REASON_LENGTH = 1000;
// A handler finishing during shutdown may hand its item back only this long after
// the broker went away: the process has 25 s in all to stop.
const STOPPING_PUBLISH_WAIT_MS = 5000;

/**
 * Resolves once the wall clock has reached `at` (ms since the epoch). One setTimeout for the
 * difference is not enough: timers count whole ms on the event loop's clock, not Date.now's,
 * and one fired 1 ms before the release time in 29 of 200 tries here (the queue contract
 * test saw a delayed item handled 1 ms early); so it sleeps again until the time has come.
 * @param {number} at
 */
export async function sleepUntil(at) {
  for (let left = at - Date.now(); left > 0; left = at - Date.now()) {
    await new Promise((resolve) => setTimeout(resolve, left));
  }
}

/**
 * @param {object} options
 * @param {string} options.amqpUrl
 * @param {string} [options.namespace] isolates environments and tests on one broker (KEY_PREFIX)
 * @param {string} options.name        queue name
 * @param {number} options.attempts    tries per item before it is dead-lettered
 * @param {number} [options.backoffMs] first retry delay; doubles each attempt
 * @param {(payload: any) => string} [options.idOf] a stable id per item, sent as the AMQP message-id
 * @param {(payload: any) => number | undefined} [options.releaseAtOf] when an item may be handled (ms since the epoch); undefined: at once
 * @param {number} [options.unavailableAfterMs] how long enqueue, counts and consume wait for a lost broker before throwing UnavailableError
 * @param {import('pino').Logger} options.logger
 * @returns {QueueAdapter}
 */
export function createRabbitmqQueue({ amqpUrl, namespace = 'push', name, attempts, backoffMs = 1000, idOf, releaseAtOf, unavailableAfterMs = 30_000, logger }) {
  const topology = rabbitmqTopology({ namespace, name, attempts, backoffMs });
  const log = logger.child({ queue: topology.main });
  /** @type {{ handler: (payload: any, attempt: number) => Promise<HandlerResult>, concurrency: number, onDeadLetter?: (payload: any, error: Error) => Promise<void> | void } | null} */
  let consumer = null;
  let stopping = false;
  /** @type {Delivery[]} deliveries received but not started: prefetch may exceed free slots after a reconnect */
  const backlog = [];
  let running = 0;
  /** @type {Set<() => void>} */
  const idleWaiters = new Set();

  const session = createRabbitmqSession({
    amqpUrl,
    topology,
    // The name shows in the management UI and lets an operator (or a test) close this process's connection.
    connectionName: `pushpace:${namespace}:${name}:${process.pid}`,
    unavailableAfterMs,
    logger: log,
    wantsConsumer: () => (consumer && !stopping ? { prefetch: consumer.concurrency, onMessage: receive } : null)
  });

  /** @param {Subscription} subscription @param {ConsumeMessage} message */
  function receive(subscription, message) {
    backlog.push({ subscription, message });
    pump();
  }

  function pump() {
    while (consumer && running < consumer.concurrency && backlog.length > 0) {
      const delivery = /** @type {Delivery} */ (backlog.shift());
      // Its channel is gone: the broker has already put it back for redelivery.
      if (!delivery.subscription.open) continue;
      if (stopping) {
        settle(delivery, 'requeue');
        continue;
      }
      running++;
      handle(delivery).catch((error) => log.error({ err: error }, 'queue item handling failed')).finally(() => {
        running--;
        pump();
        if (running === 0) for (const wake of idleWaiters) wake();
      });
    }
  }

  /** @param {Delivery} delivery */
  async function handle(delivery) {
    const { message } = delivery;
    const { handler, onDeadLetter } = /** @type {NonNullable<typeof consumer>} */ (consumer);
    const attempt = attemptOf(message);
    if (await heldForRelease(delivery, attempt)) return;
    /** @type {unknown} */
    let payload;
    /** @type {HandlerResult} */
    let result = undefined;
    /** @type {Error | null} */
    let failure = null;
    try {
      payload = JSON.parse(message.content.toString('utf8'));
    } catch (error) {
      failure = new PermanentError(`message is not JSON: ${/** @type {Error} */ (error).message}`);
    }
    if (!failure) {
      try {
        result = await handler(payload, attempt);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
      }
    }
    // The channel died while the handler ran: the item is redelivered (to this or
    // another consumer) with the same attempt number, so there is nothing to settle
    // here, and its delivery tag means nothing on any newer channel.
    if (!delivery.subscription.open) {
      log.info({ attempt }, 'channel lost while an item was handled; it will be redelivered');
      return;
    }
    try {
      if (failure) {
        const permanent = failure instanceof PushError && !failure.retryable;
        if (!permanent && attempt < attempts) {
          await republish(delivery, attempt + 1, retryDelayMs(attempt, backoffMs));
        } else {
          await deadLetter(delivery, payload, failure, attempt, onDeadLetter);
          return;
        }
      } else if (result && typeof result.deferMs === 'number') {
        // Handed back, not failed: the same attempt number travels on.
        await republish(delivery, attempt, deferDelayMs(topology.delays, result.deferMs));
      }
      settle(delivery, 'ack');
    } catch (error) {
      if (!delivery.subscription.open) {
        log.info({ attempt }, 'channel lost while an item was rescheduled; it will be redelivered');
        return;
      }
      // The retry or hand-back copy was not stored: put the original back instead.
      log.error({ err: error, attempt }, 'could not reschedule a queue item; returning it to the queue');
      settle(delivery, 'requeue');
    }
  }

  /**
   * An item back before its release time goes down the wait-queue ladder again (true),
   * or, with less than the shortest wait left, is held here until it is due (false).
   * @param {Delivery} delivery @param {number} attempt
   */
  async function heldForRelease(delivery, attempt) {
    const releaseAt = Number(delivery.message.properties.headers?.[RELEASE_HEADER]);
    const remaining = Number.isFinite(releaseAt) ? releaseAt - Date.now() : 0;
    if (remaining <= 0) return false;
    const hop = releaseHopMs(topology.delays, remaining);
    if (hop === 0) {
      await sleepUntil(releaseAt);
      return false;
    }
    try {
      await republish(delivery, attempt, hop);
      settle(delivery, 'ack');
    } catch (error) {
      if (delivery.subscription.open) {
        log.error({ err: error, attempt }, 'could not delay an item until its release time; returning it to the queue');
        settle(delivery, 'requeue');
      }
    }
    return true;
  }

  /**
   * Publishes the delivery's message again with `attempt`, after `delayMs` (through a wait queue) or at once.
   * @param {Delivery} delivery @param {number} attempt @param {number} delayMs
   */
  async function republish({ subscription, message }, attempt, delayMs) {
    const queue = delayMs > 0 ? topology.waitQueue(delayMs) : topology.main;
    const headers = { ...withoutDeathHeaders(message.properties.headers), [ATTEMPT_HEADER]: attempt };
    await session.publish(queue, [{ content: message.content, options: publishOptions(message.properties.messageId, headers) }],
      { waitMs: stopping ? STOPPING_PUBLISH_WAIT_MS : unavailableAfterMs, onlyWhile: () => subscription.open });
  }

  /**
   * Copies the item to the dead queue with the reason and tells the owner, retrying
   * both; acks it after. If the copy cannot be written the item is rejected, and the
   * main queue's dead-letter settings move it to the dead queue through the broker.
   * @param {Delivery} delivery @param {unknown} payload @param {Error} error @param {number} attempt
   * @param {((payload: any, error: Error) => Promise<void> | void) | undefined} onDeadLetter
   */
  async function deadLetter(delivery, payload, error, attempt, onDeadLetter) {
    const { message } = delivery;
    const reason = error.message.slice(0, MAX_REASON_LENGTH);
    const code = /** @type {{ code?: unknown }} */ (error).code;
    let copied = false;
    try {
      await withRetries(() => delivery.subscription.open, async () => {
        if (!copied) {
          const headers = { ...withoutDeathHeaders(message.properties.headers), 'x-reason': reason, 'x-attempts': attempt,
            'x-failed-at': new Date().toISOString(), ...(typeof code === 'string' ? { 'x-error-code': code } : {}) };
          await session.publish(topology.dead, [{ content: message.content, options: publishOptions(message.properties.messageId, headers) }],
            { onlyWhile: () => delivery.subscription.open });
          copied = true;
        }
        if (payload !== undefined) await onDeadLetter?.(payload, error);
      });
      log.error({ messageId: message.properties.messageId, attempt, reason }, 'item dead-lettered');
    } catch (failure) {
      log.error({ err: failure, messageId: message.properties.messageId, attempt, reason }, copied
        ? 'item dead-lettered, but onDeadLetter failed'
        : 'could not copy an item to the dead queue; rejecting it to the dead queue through the broker');
    }
    settle(delivery, copied ? 'ack' : 'reject');
  }

  /**
   * Acks, requeues or rejects a delivery on its own channel, if that channel is still open.
   * @param {Delivery} delivery @param {'ack' | 'requeue' | 'reject'} how
   */
  function settle({ subscription, message }, how) {
    if (!subscription.open) return;
    try {
      if (how === 'ack') subscription.channel.ack(message);
      else subscription.channel.nack(message, false, how === 'requeue');
    } catch (error) {
      // Closed between the check and the call: the broker redelivers it.
      log.warn({ err: error }, 'could not settle a delivery; it will be redelivered');
    }
  }

  function whenIdle() {
    if (running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => { idleWaiters.delete(wake); resolve(undefined); };
      idleWaiters.add(wake);
    });
  }

  return {
    async enqueue(items) {
      if (items.length === 0) return;
      /** @type {Set<string>} */
      const seen = new Set();
      /** @type {Map<string, import('./rabbitmq-session.js').OutgoingMessage[]>} messages per queue: main, or a wait queue */
      const byQueue = new Map();
      const now = Date.now();
      for (const payload of items) {
        const id = idOf?.(payload);
        if (id !== undefined) {
          // Within one call the same id is stored once, as BullMQ's jobId would; across calls
          // RabbitMQ cannot tell, so a consumer must tolerate a repeat (the segment sender does).
          if (seen.has(id)) continue;
          seen.add(id);
        }
        /** @type {Record<string, number>} */
        const headers = { [ATTEMPT_HEADER]: 1 };
        let queue = topology.main;
        const releaseAt = releaseAtOf?.(payload);
        if (releaseAt !== undefined && releaseAt > now) {
          headers[RELEASE_HEADER] = Math.ceil(releaseAt);
          const hop = releaseHopMs(topology.delays, releaseAt - now);
          if (hop > 0) queue = topology.waitQueue(hop);
        }
        let messages = byQueue.get(queue);
        if (!messages) byQueue.set(queue, messages = []);
        messages.push({ content: Buffer.from(JSON.stringify(payload)), options: publishOptions(id, headers) });
      }
      for (const [queue, messages] of byQueue) await session.publish(queue, messages);
    },

    async consume(handler, { concurrency, onDeadLetter }) {
      if (consumer) throw new Error(`already consuming ${topology.main}`);
      consumer = { handler, concurrency, onDeadLetter };
      stopping = false;
      await session.subscribe();
    },

    async stopConsuming() {
      if (!consumer || stopping) return whenIdle();
      stopping = true;
      await session.unsubscribe();
      // Received but not started: back to the queue at once, for another consumer.
      for (const delivery of backlog.splice(0)) settle(delivery, 'requeue');
      await whenIdle();
    },

    async counts() {
      const depths = await session.depths([topology.main, topology.dead, ...topology.delays.map(topology.waitQueue)]);
      const [waiting, dead, ...delayed] = depths;
      return { waiting, active: running + backlog.length, delayed: delayed.reduce((sum, n) => sum + n, 0), dead };
    },

    async close() {
      if (consumer) await this.stopConsuming();
      await session.close();
    }
  };
}

/** @param {ConsumeMessage} message */
function attemptOf(message) {
  const attempt = Number(message.properties.headers?.[ATTEMPT_HEADER]);
  return Number.isInteger(attempt) && attempt >= 1 ? attempt : 1;
}

/**
 * The broker's x-death bookkeeping is about wait queues; a republished copy starts clean.
 * @param {Record<string, any> | undefined} headers
 */
function withoutDeathHeaders(headers = {}) {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => !/^x-(death|first-death|last-death)/.test(key)));
}

/** @param {string | undefined} messageId @param {Record<string, any>} headers */
function publishOptions(messageId, headers) {
  return { persistent: true, contentType: 'application/json', messageId, headers };
}

/**
 * Runs `work` up to 4 times, 1 s apart: dead-lettering must not be lost to a
 * blip, or the item would vanish with nobody told. Stops early once `worthIt`
 * turns false (the delivery is lost and will come back to be dead-lettered again).
 * @param {() => boolean} worthIt
 * @param {() => Promise<void>} work
 */
async function withRetries(worthIt, work) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 4 || !worthIt()) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
