// The RabbitMQ side of ingestion: declares the topology, consumes with a prefetch of
// INGEST_CONCURRENCY, hands each message to a handler and carries out its answer
// (ack, dead-letter with a reason, retry after a delay, or requeue). A lost
// connection or channel is reopened by the one reconnect policy
// (queue/rabbitmq-connection.js); the process never exits over it.
//
// Topology, all durable:
//   exchange EVENTS_EXCHANGE (topic) --EVENTS_ROUTING_KEYS--> queue EVENTS_QUEUE
//   EVENTS_QUEUE.retry  events waiting RETRY_DELAY_MS after a transient failure; its
//                       dead-lettering moves them back to EVENTS_QUEUE when they expire
//   EVENTS_QUEUE.dead   poison events, with the reason in the x-reason header
import { redactUrl } from '../redact-url.js';
import { connectRabbitmq, keepConnected } from '../queue/rabbitmq-connection.js';

/** @typedef {import('./event-processor.js').Delivery} Delivery */
/** @typedef {import('./event-processor.js').Disposition} Disposition */
/** @typedef {(delivery: Delivery, signal: AbortSignal) => Promise<Disposition>} DeliveryHandler */
/**
 * @typedef {object} Session one connection with its channel and consumer
 * @property {import('amqplib').ChannelModel} connection
 * @property {import('amqplib').ConfirmChannel} channel
 * @property {string | null} consumerTag
 * @property {boolean} closed   set once it is lost or closed; its messages can no longer be acked
 * @property {Promise<string>} lost resolves with the reason when the connection or channel goes away
 * @property {(reason: string) => Promise<void>} markLost marks it lost and closes the connection
 */

/** How long an event waits in the retry queue. Part of the queue's arguments: changing it needs the queue deleted. */
export const RETRY_DELAY_MS = 5_000;
// Headers RabbitMQ writes when it dead-letters; a copy we republish must not carry them.
const BROKER_HEADERS = /^x-(death|first-death-|last-death-)/;

/**
 * The names of everything the consumer declares.
 * @param {{ exchange: string, queue: string, routingKeys: readonly string[] }} events
 */
export function eventTopology({ exchange, queue, routingKeys }) {
  return { exchange, queue, routingKeys: [...routingKeys], retryQueue: `${queue}.retry`, deadQueue: `${queue}.dead` };
}

/**
 * @param {object} options
 * @param {string} options.url AMQP_URL
 * @param {{ exchange: string, queue: string, routingKeys: readonly string[], concurrency: number }} options.events
 * @param {import('pino').Logger} options.logger
 */
export function createEventConsumer({ url, events, logger }) {
  const topology = eventTopology(events);
  const shutdown = new AbortController();
  /** @type {Set<Promise<void>>} */
  const inFlight = new Set();
  /** @type {Session | null} */
  let session = null;
  /** @type {{ done: Promise<void>, wake: () => void } | null} */
  let keeper = null;

  /** @returns {Promise<Session>} */
  async function open() {
    const connection = await connectRabbitmq(url, 'pushpace:ingest');
    /** @type {(reason: string) => void} */
    let resolveLost = () => {};
    /** @type {Promise<void>} */
    let closing = Promise.resolve();
    /** @type {Session} */
    const current = {
      connection,
      channel: /** @type {any} */ (null),
      consumerTag: null,
      closed: false,
      lost: new Promise((resolve) => { resolveLost = resolve; }),
      markLost: (reason) => {
        if (current.closed) return closing;
        current.closed = true;
        resolveLost(reason);
        // A channel can close while its connection lives on (a channel error); drop both.
        closing = connection.close().catch(() => {});
        return closing;
      }
    };
    // Without 'error' listeners an error event would crash the process; 'close' follows it.
    connection.on('error', (error) => logger.warn({ err: error }, 'RabbitMQ connection error'));
    connection.on('close', () => void current.markLost('connection closed'));
    try {
      const channel = await connection.createConfirmChannel();
      current.channel = channel;
      channel.on('error', (error) => logger.warn({ err: error }, 'RabbitMQ channel error'));
      channel.on('close', () => void current.markLost('channel closed'));
      await channel.assertExchange(topology.exchange, 'topic', { durable: true });
      await channel.assertQueue(topology.queue, { durable: true });
      for (const pattern of topology.routingKeys) await channel.bindQueue(topology.queue, topology.exchange, pattern);
      await channel.assertQueue(topology.deadQueue, { durable: true });
      await channel.assertQueue(topology.retryQueue, {
        durable: true,
        arguments: { 'x-message-ttl': RETRY_DELAY_MS, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': topology.queue }
      });
      await channel.prefetch(events.concurrency);
      ({ consumerTag: current.consumerTag } = await channel.consume(topology.queue, (message) => {
        // null: RabbitMQ cancelled the consumer (the queue was deleted); reconnecting declares it again.
        if (message === null) void current.markLost('consumer cancelled by RabbitMQ');
        else onMessage(current, message);
      }, { noAck: false }));
    } catch (error) {
      await current.markLost('set-up failed');
      throw error;
    }
    return current;
  }

  /**
   * @param {Session} current
   * @param {import('amqplib').ConsumeMessage} message
   */
  function onMessage(current, message) {
    if (shutdown.signal.aborted) {
      safely(() => current.channel.nack(message, false, true));
      return;
    }
    const delivery = toDelivery(message);
    const task = handler(delivery, shutdown.signal)
      .catch((error) => {
        logger.error({ err: error }, 'event handler threw; retrying the event');
        return /** @type {Disposition} */ ({ action: 'retry', reason: String(error?.message ?? error) });
      })
      .then((disposition) => settle(current, message, delivery, disposition))
      .catch((error) => logger.warn({ err: error }, 'could not settle an event; RabbitMQ will deliver it again'))
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  }

  /**
   * Carries out a disposition on the channel the message came from. When that
   * channel is gone, nothing can be done: RabbitMQ delivers the message again, and
   * the idempotency record keeps it from being sent twice.
   * @param {Session} current
   * @param {import('amqplib').ConsumeMessage} message
   * @param {Delivery} delivery
   * @param {Disposition} disposition
   */
  async function settle(current, message, delivery, disposition) {
    if (current.closed) return;
    const { channel } = current;
    if (disposition.action === 'ack') return safely(() => channel.ack(message));
    if (disposition.action === 'requeue') return safely(() => channel.nack(message, false, true));
    /** @type {Record<string, unknown>} */
    const headers = {};
    for (const [name, value] of Object.entries(message.properties.headers ?? {})) if (!BROKER_HEADERS.test(name)) headers[name] = value;
    headers['x-original-routing-key'] = delivery.routingKey;
    const target = disposition.action === 'dead' ? topology.deadQueue : topology.retryQueue;
    if (disposition.action === 'dead') {
      // AMQP header values are strings of any length, but a header table is capped at 64 KB.
      headers['x-reason'] = disposition.reason.slice(0, 1000);
      headers['x-failed-at'] = new Date().toISOString();
      headers['x-attempt'] = delivery.attempt;
    } else {
      headers['x-attempt'] = delivery.attempt + 1;
      headers['x-last-error'] = disposition.reason.slice(0, 1000);
    }
    try {
      // Straight to the queue through the default exchange, confirmed before the ack:
      // a crash in between delivers the original again, never loses it.
      await publishConfirmed(channel, target, message.content, {
        persistent: true,
        contentType: message.properties.contentType,
        contentEncoding: message.properties.contentEncoding,
        messageId: message.properties.messageId,
        timestamp: message.properties.timestamp,
        type: message.properties.type,
        appId: message.properties.appId,
        correlationId: message.properties.correlationId,
        headers
      });
    } catch (error) {
      logger.warn({ err: error, queue: target }, 'could not move an event; RabbitMQ will deliver it again');
      if (!current.closed) safely(() => channel.nack(message, false, true));
      return;
    }
    if (!current.closed) safely(() => channel.ack(message));
  }

  /** @type {DeliveryHandler} */
  let handler = async () => ({ action: 'requeue' });

  return {
    topology,

    /**
     * Starts consuming in the background: connects (retrying while RabbitMQ is
     * away), declares the topology and hands every message to `handle`.
     * @param {DeliveryHandler} handle
     */
    start(handle) {
      handler = handle;
      // Connects (retrying while RabbitMQ is away) and consumes until the session is lost, then again, until stop().
      keeper = keepConnected({
        open,
        isClosed: () => shutdown.signal.aborted,
        onOpen(current) {
          session = current;
          logger.info({ exchange: topology.exchange, queue: topology.queue, routingKeys: topology.routingKeys, concurrency: events.concurrency },
            'ingest consuming events');
        },
        where: redactUrl(url),
        logger
      });
    },

    /**
     * Stops taking messages, lets the handlers finish (their waits end at once,
     * their sends in flight land) and closes the connection.
     */
    async stop() {
      shutdown.abort();
      keeper?.wake();
      const current = session;
      if (current && !current.closed) {
        // No new deliveries; those already here finish or go back.
        if (current.consumerTag) await current.channel.cancel(current.consumerTag).catch(() => {});
      }
      await Promise.allSettled([...inFlight]);
      await current?.markLost('stopped');
      await keeper?.done;
    }
  };
}

/**
 * The handler's view of a message: body, the routing key it was published with
 * (kept in a header across the retry queue), its publish time and attempt number.
 * @param {import('amqplib').ConsumeMessage} message
 * @returns {Delivery}
 */
function toDelivery(message) {
  const headers = message.properties.headers ?? {};
  const attempt = Number(headers['x-attempt']);
  /** @type {Delivery} */
  const delivery = {
    body: message.content,
    routingKey: typeof headers['x-original-routing-key'] === 'string' ? headers['x-original-routing-key'] : message.fields.routingKey,
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1
  };
  const timestamp = Number(message.properties.timestamp);
  // AMQP says seconds; most Node publishers put Date.now(). Anything above 10^11 is ms
  // (10^11 seconds is the year 5138).
  if (Number.isFinite(timestamp) && timestamp > 0) delivery.timestamp = timestamp > 1e11 ? timestamp : timestamp * 1000;
  return delivery;
}

/**
 * @param {import('amqplib').ConfirmChannel} channel
 * @param {string} queue
 * @param {Buffer} content
 * @param {import('amqplib').Options.Publish} options
 * @returns {Promise<void>}
 */
function publishConfirmed(channel, queue, content, options) {
  return new Promise((resolve, reject) => {
    try {
      channel.publish('', queue, content, options, (error) => (error ? reject(error instanceof Error ? error : new Error('publish not confirmed')) : resolve()));
    } catch (error) {
      reject(error); // the channel closed under us
    }
  });
}

/** Acks and nacks on a channel that just closed throw; the broker redelivers anyway. @param {() => void} action */
function safely(action) {
  try {
    action();
  } catch {
    // nothing to do: see settle()
  }
}
