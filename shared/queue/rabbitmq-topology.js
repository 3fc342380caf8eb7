// The RabbitMQ queues behind one logical queue, and how they are declared.
//
//   pushpace.<namespace>.<name>            the main queue: consumers take items here
//   pushpace.<namespace>.<name>.wait.<ms>  one per delay: x-message-ttl <ms>, then dead-lettered
//                                          (through the default exchange) back to the main queue
//   pushpace.<namespace>.<name>.dead       dead-lettered items, reason in headers
//
// Delays need no plugin: a message published to a wait queue expires after the
// queue's TTL and the broker moves it to the main queue. Every message in one wait
// queue has the same TTL, so expiry order is queue order and nothing waits behind a
// longer delay. The set of wait queues is fixed (the retry delays plus a ladder for
// deferrals), so counts() can find every delayed item and the broker never collects
// a queue per distinct delay a handler ever asked for. Items with a release time
// (local-time delivery) climb down the same ladder: see releaseHopMs.
import { connect } from 'amqplib';

/**
 * Deferral delays (ms) a handler's `deferMs` is rounded to, to the nearest in ratio
 * (so at most ~1.6× off): 2 s, the segment sender's pause recheck, is exact.
 */
export const DEFER_LEVELS_MS = Object.freeze([100, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000]);
// Retry delays double per attempt; past an hour a retry is no more likely to succeed,
// and an AMQP TTL must fit 32 bits anyway.
const MAX_RETRY_DELAY_MS = 3_600_000;
// A consumer that dies mid-item (SIGKILL, lost connection) is not the item's fault:
// the broker redelivers it this many times before moving it to the dead queue
// (quorum queues only; RabbitMQ 4 would otherwise stop at 20). BullMQ's maxStalledCount.
const DELIVERY_LIMIT = 100;

/**
 * @typedef {object} Topology
 * @property {string} main
 * @property {string} dead
 * @property {number[]} delays   every delay that has a wait queue, ascending
 * @property {(delayMs: number) => string} waitQueue
 * @property {string[]} queues   every queue name, for declaring and deleting
 */

/**
 * The queue names of one logical queue. Pure: tests use it to delete what an adapter declared.
 * @param {{ namespace: string, name: string, attempts: number, backoffMs: number }} options
 * @returns {Topology}
 */
export function rabbitmqTopology({ namespace, name, attempts, backoffMs }) {
  const main = `pushpace.${namespace}.${name}`;
  const retries = [];
  for (let attempt = 1; attempt < attempts; attempt++) retries.push(retryDelayMs(attempt, backoffMs));
  const delays = [...new Set([...retries, ...DEFER_LEVELS_MS])].filter((ms) => ms > 0).sort((a, b) => a - b);
  /** @param {number} delayMs */
  const waitQueue = (delayMs) => `${main}.wait.${delayMs}`;
  return { main, dead: `${main}.dead`, delays, waitQueue, queues: [main, `${main}.dead`, ...delays.map(waitQueue)] };
}

/**
 * How long an item waits before attempt `attempt + 1`: backoffMs, doubling per attempt (BullMQ's 'exponential').
 * @param {number} attempt the attempt that failed, from 1
 * @param {number} backoffMs
 */
export function retryDelayMs(attempt, backoffMs) {
  return Math.min(MAX_RETRY_DELAY_MS, Math.round(backoffMs * 2 ** (attempt - 1)));
}

/**
 * The wait-queue delay a deferral uses: 0 stays 0 (straight back to the main
 * queue), anything else the existing delay nearest in ratio.
 * @param {number[]} delays ascending
 * @param {number} deferMs
 */
export function deferDelayMs(delays, deferMs) {
  if (!(deferMs > 0) || delays.length === 0) return 0;
  let best = delays[0];
  for (const delay of delays) if (Math.abs(Math.log(delay / deferMs)) < Math.abs(Math.log(best / deferMs))) best = delay;
  return best;
}

// A hop through a wait queue takes its TTL plus the broker's expiry and dead-letter
// latency, measured at 40-60 ms on a quorum queue; a hop is chosen to end this much
// before the release time, and the consumer holds the item for the rest.
const HOP_LATENCY_MS = 75;

/**
 * The wait queue that brings an item with `remainingMs` to go closest to its release
 * time without passing it: the longest delay that ends before it, or 0 when even the
 * shortest would not (the consumer then holds the item for the rest itself, at most
 * the shortest delay plus the broker's latency). A release hours away hops through
 * the longest wait queue repeatedly; each hop measures from the release time again,
 * so errors do not add up.
 * @param {number[]} delays ascending
 * @param {number} remainingMs
 */
export function releaseHopMs(delays, remainingMs) {
  let best = 0;
  for (const delay of delays) if (delay + HOP_LATENCY_MS <= remainingMs) best = delay;
  return best;
}

/**
 * Declares every queue, durable. Quorum queues (replicated, and they dead-letter
 * at-least-once, so a delayed item cannot vanish between a wait queue and the main
 * queue); classic durable queues only if the broker refuses quorum for the main
 * queue (an old broker, or a classic queue of that name already there).
 * @param {import('amqplib').ChannelModel} connection
 * @param {Topology} topology
 * @param {'quorum' | 'classic' | null} known the type found on an earlier connect
 * @returns {Promise<'quorum' | 'classic'>}
 */
export async function declareTopology(connection, topology, known) {
  let type = known ?? 'quorum';
  let channel = await openChannel(connection);
  try {
    try {
      await channel.assertQueue(topology.main, { durable: true, arguments: mainArguments(type, topology) });
    } catch (error) {
      // 406 PRECONDITION_FAILED (inequivalent arguments) or 540 NOT_IMPLEMENTED close the
      // channel, not the connection: try again as a classic queue on a fresh channel.
      const code = /** @type {{ code?: number }} */ (error).code;
      if (type !== 'quorum' || (code !== 406 && code !== 540)) throw error;
      type = 'classic';
      channel = await openChannel(connection);
      await channel.assertQueue(topology.main, { durable: true, arguments: mainArguments(type, topology) });
    }
    await channel.assertQueue(topology.dead, { durable: true, arguments: { 'x-queue-type': type } });
    for (const delay of topology.delays) {
      await channel.assertQueue(topology.waitQueue(delay), { durable: true, arguments: waitArguments(type, topology, delay) });
    }
  } finally {
    await channel.close().catch(() => {});
  }
  return type;
}

/**
 * Deletes every queue of a topology (tests, and an operator retiring a namespace).
 * @param {string} amqpUrl
 * @param {Topology} topology
 */
export async function deleteTopology(amqpUrl, topology) {
  const connection = await connect(amqpUrl);
  connection.on('error', () => {});
  try {
    const channel = await openChannel(connection);
    for (const queue of topology.queues) await channel.deleteQueue(queue);
  } finally {
    await connection.close().catch(() => {});
  }
}

/** @param {import('amqplib').ChannelModel} connection */
async function openChannel(connection) {
  const channel = await connection.createChannel();
  // A channel error is also delivered to the pending operation, which is where it is handled;
  // without a listener the 'error' event itself would crash the process.
  channel.on('error', () => {});
  return channel;
}

/** @param {'quorum' | 'classic'} type @param {Topology} topology */
function mainArguments(type, topology) {
  // Rejected items (a dead-letter copy that could not be written) go to the dead
  // queue through the broker, and so do items past the delivery limit.
  const args = { 'x-queue-type': type, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': topology.dead };
  return type === 'quorum' ? { ...args, ...atLeastOnce, 'x-delivery-limit': DELIVERY_LIMIT } : args;
}

/** @param {'quorum' | 'classic'} type @param {Topology} topology @param {number} delay */
function waitArguments(type, topology, delay) {
  const args = { 'x-queue-type': type, 'x-message-ttl': delay, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': topology.main };
  return type === 'quorum' ? { ...args, ...atLeastOnce } : args;
}

// Quorum queues dead-letter with publisher confirms only with this strategy, which
// requires reject-publish overflow (it has no effect here: no queue has a length limit).
const atLeastOnce = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };
