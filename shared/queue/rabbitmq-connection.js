// The one policy for keeping a RabbitMQ connection, used by the segment queue
// (rabbitmq-session.js) and by event ingestion (events/event-consumer.js): connect
// with a heartbeat and a timeout, and after any loss (connection, channel, a consumer
// cancelled by the broker) open a new connection after 250 ms, doubling to 10 s,
// jittered, so a broker restart is waited out and a fleet of processes does not
// reconnect in step. The process never exits over a lost broker. Also the readiness
// check every process that uses RabbitMQ runs (/readyz).
import { connect } from 'amqplib';
import { redactUrl } from '../redact-url.js';

const FIRST_RECONNECT_MS = 250;
const MAX_RECONNECT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;
// Without heartbeats a silently dropped TCP connection (NAT, a dead host) is only
// noticed when a write fails; the broker's default of 60 s means minutes.
const HEARTBEAT_SECONDS = 15;

/**
 * Opens a connection under a name the management UI shows (and an operator, or a
 * test, can close it by).
 * @param {string} amqpUrl
 * @param {string} connectionName
 */
export function connectRabbitmq(amqpUrl, connectionName) {
  return connect(withHeartbeat(amqpUrl), { clientProperties: { connection_name: connectionName }, timeout: CONNECT_TIMEOUT_MS });
}

/**
 * Keeps a connection up until `isClosed()` turns true: opens one with `open` (which
 * also declares what the caller needs on it), hands it to `onOpen`, waits until it is
 * lost, waits the backoff, and opens the next. Call wake() on close to cut the wait short.
 * @template {{ connection: import('amqplib').ChannelModel, lost: Promise<unknown> }} L
 * @param {object} options
 * @param {() => Promise<L>} options.open       connects and sets the connection up; throws when either fails
 * @param {() => boolean} options.isClosed
 * @param {(link: L) => Promise<void> | void} [options.onOpen]  each new connection, once open (subscribe, wake waiters...)
 * @param {(error: unknown) => void} [options.onFailure]        a connect, set-up or onOpen that failed
 * @param {string} options.where                the broker, for logs (password redacted)
 * @param {import('pino').Logger} options.logger
 * @returns {{ done: Promise<void>, wake: () => void }}
 */
export function keepConnected({ open, isClosed, onOpen, onFailure, where, logger }) {
  /** @type {() => void} */
  let wake = () => {};

  async function maintain() {
    let delay = FIRST_RECONNECT_MS;
    let everConnected = false;
    while (!isClosed()) {
      try {
        const link = await open();
        if (isClosed()) {
          await link.connection.close().catch(() => {});
          break;
        }
        if (everConnected) logger.info('RabbitMQ connection restored');
        everConnected = true;
        await onOpen?.(link);
        delay = FIRST_RECONNECT_MS;
        const reason = await link.lost;
        if (!isClosed()) logger.warn({ reason: messageOf(reason) }, 'RabbitMQ connection lost; reconnecting');
      } catch (error) {
        onFailure?.(error);
        if (!isClosed()) logger.warn({ reason: messageOf(error), where, retryInMs: delay }, 'RabbitMQ connect failed; retrying');
      }
      if (isClosed()) break;
      // Half to all of the delay: clients that lost the same broker spread out.
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, delay / 2 + Math.random() * delay / 2);
        wake = () => { clearTimeout(timer); resolve(undefined); };
      });
      delay = Math.min(delay * 2, MAX_RECONNECT_MS);
    }
  }

  return { done: maintain(), wake: () => wake() };
}

/**
 * RabbitMQ accepts a connection (opened and closed again; the result is kept 10 s).
 * @param {string} url AMQP_URL
 * @returns {import('../metrics/readiness.js').ReadinessCheck}
 */
export function rabbitmqCheck(url) {
  return {
    name: 'rabbitmq',
    timeoutMs: 3000,
    cacheMs: 10_000,
    async check() {
      const connection = await connect(url, { clientProperties: { connection_name: 'pushpace:readyz' }, timeout: 2500 })
        .catch((error) => { throw new Error(`${redactUrl(url)}: ${error.message}`); });
      // A failing close still proves the broker answered.
      await connection.close().catch(() => {});
    }
  };
}

/** @param {unknown} error */
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `amqpUrl` with a heartbeat, unless it sets one.
 * @param {string} amqpUrl
 */
function withHeartbeat(amqpUrl) {
  const url = new URL(amqpUrl);
  if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(HEARTBEAT_SECONDS));
  return url.toString();
}
