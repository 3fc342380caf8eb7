// One RabbitMQ connection kept open for a queue adapter: connect, declare the
// topology, open a confirm channel for publishing and, when the adapter consumes,
// a consumer channel. Any loss (connection, either channel, a consumer cancelled
// by the broker) closes the whole connection and opens a new one, by the one
// reconnect policy (rabbitmq-connection.js). Every amqplib 'error' event has a
// listener: an unhandled one would end the process.
import { connectRabbitmq, keepConnected } from './rabbitmq-connection.js';
import { redactUrl } from '../redact-url.js';
import { UnavailableError } from '../errors.js';
import { declareTopology } from './rabbitmq-topology.js';

/** @typedef {import('amqplib').ConsumeMessage} ConsumeMessage */
/** @typedef {import('./rabbitmq-topology.js').Topology} Topology */
/** @typedef {{ content: Buffer, options: import('amqplib').Options.Publish }} OutgoingMessage */
/**
 * A consumer channel. `open` turns false when the channel closes: its deliveries
 * can then no longer be acked (the broker redelivers them), on it or any other.
 * @typedef {{ channel: import('amqplib').Channel, open: boolean, tag: string, cancelled: boolean }} Subscription
 */
/**
 * @typedef {object} Link
 * @property {import('amqplib').ChannelModel} connection
 * @property {import('amqplib').ConfirmChannel | null} publisher
 * @property {Subscription | null} subscription
 * @property {Promise<void> | null} subscribing
 * @property {boolean} dead
 * @property {Promise<unknown>} lost resolves when the link is lost
 * @property {(reason: unknown) => void} markLost
 */

// A broker that nacks publishes (a quorum queue without a leader) is asked again this often.
const NACK_RETRY_MS = 1000;

/**
 * @param {object} options
 * @param {string} options.amqpUrl
 * @param {Topology} options.topology
 * @param {string} options.connectionName
 * @param {number} options.unavailableAfterMs
 * @param {import('pino').Logger} options.logger
 * @param {() => { prefetch: number, onMessage: (subscription: Subscription, message: ConsumeMessage) => void } | null} options.wantsConsumer
 *   what to subscribe with on each connection, or null while not consuming
 */
export function createRabbitmqSession({ amqpUrl, topology, connectionName, unavailableAfterMs, logger, wantsConsumer }) {
  const where = redactUrl(amqpUrl);
  /** @type {Link | null} */
  let current = null;
  let closed = false;
  /** @type {unknown} */
  let lastError = null;
  /** @type {'quorum' | 'classic' | null} */
  let queueType = null;
  /** @type {Set<{ wake: (link: Link) => void, fail: (error: Error) => void }>} */
  const waiters = new Set();

  /** @param {string} [detail] */
  function unavailable(detail) {
    const error = /** @type {{ code?: unknown, message?: string } | null} */ (lastError);
    // A socket error (ECONNREFUSED, ENOTFOUND...) means no broker there; anything else is the broker's own answer.
    const socketError = typeof error?.code === 'string';
    const reason = detail ?? (socketError ? error?.code : error?.message) ?? 'no connection yet';
    return new UnavailableError(`RabbitMQ is not reachable at ${where} (${reason})${socketError || !error ? '; is rabbitmq-server running?' : ''}`,
      { cause: lastError ?? undefined });
  }

  function closedError() {
    return new UnavailableError(`the queue ${topology.main} at ${where} is closed`);
  }

  /** @returns {Promise<Link>} */
  async function open() {
    const connection = await connectRabbitmq(amqpUrl, connectionName);
    /** @type {(reason: unknown) => void} */
    let resolveLost = () => {};
    /** @type {Link} */
    const link = {
      connection, publisher: null, subscription: null, subscribing: null, dead: false,
      lost: new Promise((resolve) => { resolveLost = resolve; }),
      markLost(reason) {
        if (link.dead) return;
        link.dead = true;
        if (current === link) current = null;
        if (!closed) lastError = reason;
        resolveLost(reason);
        // A lost channel on a live connection: drop the connection too, so the next one starts clean.
        connection.close().catch(() => {});
      }
    };
    connection.on('error', (error) => { if (!closed) lastError = error; });
    connection.on('close', (error) => link.markLost(error ?? new Error('connection closed')));
    connection.on('blocked', (reason) => logger.warn({ reason }, 'RabbitMQ blocks publishing (resource alarm)'));
    connection.on('unblocked', () => logger.info('RabbitMQ unblocked publishing'));
    try {
      const type = await declareTopology(connection, topology, queueType);
      if (type === 'classic' && queueType !== 'classic') logger.warn('RabbitMQ refused a quorum queue; using classic durable queues');
      queueType = type;
      const publisher = await connection.createConfirmChannel();
      publisher.on('error', (error) => { lastError = error; });
      publisher.on('close', () => markLostSoon(link, 'publishing channel closed'));
      link.publisher = publisher;
    } catch (error) {
      link.markLost(error);
      throw error;
    }
    return link;
  }

  /**
   * A channel closed. When the whole connection is going, its 'close' event follows in
   * the same turn and carries the reason worth logging (CONNECTION_FORCED...), so wait one turn.
   * @param {Link} link @param {string} what
   */
  function markLostSoon(link, what) {
    setImmediate(() => link.markLost(new Error(what)));
  }

  /** Subscribes on `link` if the adapter consumes and has not yet. @param {Link} link */
  function ensureSubscribed(link) {
    if (link.subscription || link.dead || !wantsConsumer()) return Promise.resolve();
    link.subscribing ??= (async () => {
      const want = wantsConsumer();
      if (!want) return;
      const channel = await link.connection.createChannel();
      /** @type {Subscription} */
      const subscription = { channel, open: true, tag: '', cancelled: false };
      channel.on('error', (error) => { lastError = error; });
      channel.on('close', () => {
        subscription.open = false;
        markLostSoon(link, 'consumer channel closed');
      });
      // Prefetch bounds what the broker hands this process to the handlers it may run at once.
      await channel.prefetch(want.prefetch);
      const { consumerTag } = await channel.consume(topology.main, (message) => {
        if (message) return want.onMessage(subscription, message);
        // The broker cancelled the consumer (the queue was deleted): start over, re-declaring it.
        if (!subscription.cancelled) link.markLost(new Error(`consumer of ${topology.main} cancelled by the broker`));
      });
      subscription.tag = consumerTag;
      link.subscription = subscription;
      // stopConsuming while this was subscribing: take nothing.
      if (!wantsConsumer()) await cancel(subscription);
    })().catch((error) => {
      link.markLost(error);
      throw error;
    }).finally(() => { link.subscribing = null; });
    return link.subscribing;
  }

  /** @param {Subscription} subscription */
  async function cancel(subscription) {
    if (subscription.cancelled) return;
    subscription.cancelled = true;
    if (subscription.open) await subscription.channel.cancel(subscription.tag).catch(() => {});
  }

  /**
   * The live link, waiting up to `waitMs` for a reconnect.
   * @param {number} waitMs
   * @returns {Promise<Link>}
   */
  function ready(waitMs) {
    if (current && !current.dead) return Promise.resolve(current);
    if (closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { waiters.delete(waiter); reject(unavailable()); }, waitMs);
      const waiter = {
        /** @param {Link} link */ wake: (link) => { clearTimeout(timer); waiters.delete(waiter); resolve(link); },
        /** @param {Error} error */ fail: (error) => { clearTimeout(timer); waiters.delete(waiter); reject(error); }
      };
      waiters.add(waiter);
    });
  }

  /**
   * Publishes on `link` and waits for every confirm; returns the messages not confirmed.
   * @param {Link} link @param {string} queue @param {OutgoingMessage[]} messages
   */
  async function publishOn(link, queue, messages) {
    const publisher = /** @type {import('amqplib').ConfirmChannel} */ (link.publisher);
    /** @type {Promise<OutgoingMessage | null>[]} */
    const confirms = [];
    for (const message of messages) {
      let flowing = true;
      confirms.push(new Promise((resolve) => {
        try {
          flowing = publisher.publish('', queue, message.content, message.options, (error) => resolve(error ? message : null));
        } catch {
          resolve(message); // the channel closed under us
        }
      }));
      // The socket's buffer is full: wait for it to drain rather than buffer a whole campaign in memory.
      if (!flowing && !link.dead) {
        await new Promise((resolve) => {
          publisher.once('drain', resolve);
          link.lost.then(resolve);
        });
      }
    }
    return (await Promise.all(confirms)).filter((message) => message !== null);
  }

  const keeper = keepConnected({
    open,
    isClosed: () => closed,
    async onOpen(link) {
      current = link;
      lastError = null;
      for (const waiter of waiters) waiter.wake(link);
      await ensureSubscribed(link);
    },
    onFailure(error) { lastError = error; },
    where,
    logger
  });

  return {
    /**
     * Publishes persistently and resolves when the broker has confirmed every message.
     * Messages not confirmed because the connection was lost are published again once
     * it is back (a message stored just before the loss may then be stored twice);
     * gives up with UnavailableError after `waitMs` without a connection or progress.
     * `onlyWhile` stops the retrying when it turns false: a copy made to settle a
     * delivery is pointless once that delivery's channel is gone (the broker redelivers it).
     * @param {string} queue @param {OutgoingMessage[]} messages
     * @param {{ waitMs?: number, onlyWhile?: () => boolean }} [options]
     */
    async publish(queue, messages, { waitMs = unavailableAfterMs, onlyWhile = () => true } = {}) {
      let pending = messages;
      let giveUpAt = Date.now() + waitMs;
      while (pending.length > 0) {
        const link = await ready(Math.max(1, giveUpAt - Date.now()));
        if (!onlyWhile()) throw new Error(`publishing to ${queue} abandoned: the delivery it was for is gone`);
        const unconfirmed = await publishOn(link, queue, pending);
        if (unconfirmed.length < pending.length) giveUpAt = Date.now() + waitMs;
        pending = unconfirmed;
        if (pending.length === 0) return;
        if (Date.now() >= giveUpAt) throw unavailable(`${pending.length} message(s) not confirmed`);
        if (!link.dead) await new Promise((resolve) => setTimeout(resolve, NACK_RETRY_MS));
      }
    },

    /** Subscribes now if connected (and on every reconnect); resolves once subscribed, or throws UnavailableError. */
    async subscribe() {
      const giveUpAt = Date.now() + unavailableAfterMs;
      while (true) {
        const link = await ready(Math.max(1, giveUpAt - Date.now()));
        try {
          await ensureSubscribed(link);
          if (link.subscription || !wantsConsumer()) return;
        } catch (error) {
          if (Date.now() >= giveUpAt) throw unavailable(/** @type {Error} */ (error).message);
        }
        await link.lost; // lost while subscribing: the next link subscribes
      }
    },

    /** Cancels the consumer; its channel stays open so handlers in progress can still ack. */
    async unsubscribe() {
      const link = current;
      if (!link) return;
      await link.subscribing?.catch(() => {});
      if (link.subscription) await cancel(link.subscription);
    },

    /**
     * Messages ready in each queue (not those delivered and unacked).
     * @param {string[]} queues
     */
    async depths(queues) {
      const link = await ready(unavailableAfterMs);
      // Its own channel: a missing queue (404) closes the channel it was asked on.
      const channel = await link.connection.createChannel();
      channel.on('error', () => {});
      try {
        return await Promise.all(queues.map(async (queue) => (await channel.checkQueue(queue)).messageCount));
      } finally {
        await channel.close().catch(() => {});
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      keeper.wake();
      for (const waiter of waiters) waiter.fail(closedError());
      const link = current;
      current = null;
      if (link) await link.connection.close().catch(() => {});
      await keeper.done;
    }
  };
}
