// The QueueAdapter contract (shared/types.d.ts), one set of cases run against every
// backend on the real local servers: Redis for BullMQ, RabbitMQ for the AMQP adapter.
// Each case gets its own key prefix / namespace; everything is deleted in `after`.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { connect } from 'amqplib';
import { createBullmqQueue } from '../../shared/queue/bullmq-queue.js';
import { createRabbitmqQueue } from '../../shared/queue/rabbitmq-queue.js';
import { rabbitmqTopology, deleteTopology } from '../../shared/queue/rabbitmq-topology.js';
import { redisKeys } from '../../shared/redis.js';
import { PermanentError, TransientError } from '../../shared/errors.js';
import { REDIS_URL, AMQP_URL, uniquePrefix, dropPrefix, waitFor } from '../support/harness.js';

/** @typedef {{ id: number, releaseAt?: number }} Item */
/** @typedef {import('../../shared/types.js').QueueAdapter<Item>} Queue */

const BACKENDS = /** @type {const} */ (['bullmq', 'rabbitmq']);
const logger = pino({ level: 'silent' });

/** @type {Queue[]} */
const queues = [];
/** @type {(() => Promise<void>)[]} */
const cleanups = [];
/** @type {Map<Queue, string>} each queue's namespace, for a second adapter on it */
const namespaces = new Map();

after(async () => {
  await Promise.allSettled(queues.map((queue) => queue.close()));
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

/**
 * A queue of `backend` in a namespace no other case uses, closed and deleted in `after`;
 * or, given `shared`, a second adapter on that namespace (another process's view of it).
 * @param {'bullmq' | 'rabbitmq'} backend
 * @param {{ attempts?: number, backoffMs?: number, shared?: string }} [options]
 * @returns {Queue}
 */
function openQueue(backend, { attempts = 3, backoffMs = 200, shared } = {}) {
  const prefix = shared ?? uniquePrefix();
  const name = 'contract';
  // As in production (create-queue.js): BullMQ refuses its own numeric job ids as the dead copy's id.
  /** @param {Item} item */
  const idOf = (item) => `item-${item.id}`;
  /** @param {Item} item */
  const releaseAtOf = (item) => item.releaseAt;
  /** @type {Queue} */
  let queue;
  if (backend === 'bullmq') {
    queue = createBullmqQueue({ redis: REDIS_URL, prefix: redisKeys(prefix).bullPrefix, name, attempts, backoffMs, idOf, releaseAtOf, logger });
    if (!shared) cleanups.push(() => dropPrefix(prefix));
  } else {
    queue = createRabbitmqQueue({ amqpUrl: AMQP_URL, namespace: prefix, name, attempts, backoffMs, idOf, releaseAtOf, logger });
    if (!shared) cleanups.push(() => deleteTopology(AMQP_URL, rabbitmqTopology({ namespace: prefix, name, attempts, backoffMs })));
  }
  namespaces.set(queue, prefix);
  queues.push(queue);
  return queue;
}

/** @param {number} n */
const items = (n) => Array.from({ length: n }, (_, id) => ({ id }));

/**
 * Polls counts() until they equal `expected`; fails with the last counts seen.
 * @param {Queue} queue
 * @param {{ waiting: number, active: number, delayed: number, dead: number }} expected
 */
async function expectCounts(queue, expected, timeoutMs = 5000) {
  let last = await queue.counts();
  const deadline = Date.now() + timeoutMs;
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await sleep(100);
    last = await queue.counts();
  }
  assert.deepEqual(last, expected);
}

const EMPTY = { waiting: 0, active: 0, delayed: 0, dead: 0 };

for (const backend of BACKENDS) {
  describe(`QueueAdapter on ${backend}`, { timeout: 30_000 }, () => {
    test('every item is handled once and acked', async () => {
      const queue = openQueue(backend);
      await queue.enqueue(items(30));
      /** @type {number[]} */
      const handled = [];
      await queue.consume(async ({ id }) => { handled.push(id); }, { concurrency: 4 });
      await waitFor(async () => handled.length >= 30, { timeoutMs: 10_000, what: '30 items handled' });
      await expectCounts(queue, EMPTY);
      assert.deepEqual([...handled].sort((a, b) => a - b), items(30).map(({ id }) => id), 'each once');
    });

    test('never more than `concurrency` handlers at once', async () => {
      const queue = openQueue(backend);
      await queue.enqueue(items(15));
      let running = 0;
      let most = 0;
      let done = 0;
      await queue.consume(async () => {
        running++;
        most = Math.max(most, running);
        await sleep(50);
        running--;
        done++;
      }, { concurrency: 3 });
      await waitFor(async () => done >= 15, { timeoutMs: 10_000, what: '15 items handled' });
      assert.equal(most, 3, 'concurrency is used, and not exceeded');
    });

    test('a throwing handler is retried with growing delays and a growing attempt number', async () => {
      const queue = openQueue(backend, { attempts: 4, backoffMs: 200 });
      /** @type {{ attempt: number, at: number }[]} */
      const calls = [];
      await queue.consume(async (_item, attempt) => {
        calls.push({ attempt, at: Date.now() });
        if (attempt < 3) throw new TransientError(`try ${attempt} failed`);
      }, { concurrency: 1 });
      await queue.enqueue(items(1));
      await waitFor(async () => calls.length >= 3, { timeoutMs: 10_000, what: 'three attempts' });
      await expectCounts(queue, EMPTY);
      assert.deepEqual(calls.map((call) => call.attempt), [1, 2, 3]);
      const [first, second] = [calls[1].at - calls[0].at, calls[2].at - calls[1].at];
      console.log(`# ${backend}: retry delays ${first} ms, ${second} ms (backoff 200 ms, doubling)`);
      assert.ok(first >= 180 && first < 1500, `first retry after ${first} ms`);
      assert.ok(second >= 380 && second < 2000, `second retry after ${second} ms`);
      assert.ok(second > first, 'the delay grows');
    });

    test('after the last attempt the item is dead-lettered once', async () => {
      const queue = openQueue(backend, { attempts: 3, backoffMs: 100 });
      /** @type {number[]} */
      const attempts = [];
      /** @type {{ payload: any, error: Error }[]} */
      const dead = [];
      await queue.consume(async (_item, attempt) => {
        attempts.push(attempt);
        throw new TransientError('SNS unavailable');
      }, { concurrency: 2, onDeadLetter: (payload, error) => { dead.push({ payload, error }); } });
      await queue.enqueue([{ id: 7 }]);
      await waitFor(async () => dead.length >= 1, { timeoutMs: 10_000, what: 'onDeadLetter' });
      await expectCounts(queue, { ...EMPTY, dead: 1 });
      await sleep(300); // nothing more happens to it
      assert.deepEqual(attempts, [1, 2, 3]);
      assert.equal(dead.length, 1);
      assert.deepEqual(dead[0].payload, { id: 7 });
      assert.equal(dead[0].error.message, 'SNS unavailable');
    });

    test('a permanent error dead-letters at once', async () => {
      const queue = openQueue(backend, { attempts: 5, backoffMs: 100 });
      /** @type {number[]} */
      const attempts = [];
      /** @type {{ payload: any, error: Error }[]} */
      const dead = [];
      await queue.consume(async (_item, attempt) => {
        attempts.push(attempt);
        throw new PermanentError('payload invalid');
      }, { concurrency: 1, onDeadLetter: (payload, error) => { dead.push({ payload, error }); } });
      await queue.enqueue([{ id: 1 }]);
      await waitFor(async () => dead.length >= 1, { timeoutMs: 10_000, what: 'onDeadLetter' });
      await expectCounts(queue, { ...EMPTY, dead: 1 });
      await sleep(300);
      assert.deepEqual(attempts, [1]);
      assert.equal(dead.length, 1);
      assert.ok(dead[0].error instanceof PermanentError);
    });

    test('{ deferMs } redelivers after about that delay without using an attempt', async () => {
      // One attempt only: were a deferral counted, the item would be dead-lettered.
      const queue = openQueue(backend, { attempts: 1 });
      /** @type {{ attempt: number, at: number }[]} */
      const calls = [];
      let deadLettered = 0;
      await queue.consume(async (_item, attempt) => {
        calls.push({ attempt, at: Date.now() });
        if (calls.length < 3) return { deferMs: 500 };
      }, { concurrency: 1, onDeadLetter: () => { deadLettered++; } });
      await queue.enqueue(items(1));
      await waitFor(async () => calls.length >= 3, { timeoutMs: 10_000, what: 'two deferrals and a completion' });
      await expectCounts(queue, EMPTY);
      assert.deepEqual(calls.map((call) => call.attempt), [1, 1, 1]);
      assert.equal(deadLettered, 0);
      for (const gap of [calls[1].at - calls[0].at, calls[2].at - calls[1].at]) {
        assert.ok(gap >= 450 && gap < 1500, `deferred 500 ms, came back after ${gap} ms`);
      }
    });

    test('stopConsuming waits for the handler in progress and takes nothing more', async () => {
      const queue = openQueue(backend);
      await queue.enqueue(items(3));
      let started = 0;
      let finished = 0;
      await queue.consume(async () => {
        started++;
        await sleep(600);
        finished++;
      }, { concurrency: 1 });
      await waitFor(async () => started === 1, { timeoutMs: 10_000, what: 'a handler to start' });
      await queue.stopConsuming();
      assert.equal(finished, 1, 'stopConsuming resolved after the handler finished');
      await sleep(500);
      assert.equal(started, 1, 'nothing taken after stopConsuming');
      await expectCounts(queue, { ...EMPTY, waiting: 2 });
    });

    test('a delayed item is not delivered before its time, even across a consumer restart', async () => {
      const first = openQueue(backend);
      const releaseAt = Date.now() + 2000;
      await first.enqueue([{ id: 1, releaseAt }, { id: 2 }]);
      /** @type {{ id: number, at: number }[]} */
      const calls = [];
      /** @param {Item} item */
      const handler = async ({ id }) => { calls.push({ id, at: Date.now() }); };
      await first.consume(handler, { concurrency: 2 });
      await waitFor(async () => calls.length >= 1, { timeoutMs: 5000, what: 'the item without a release time' });
      assert.deepEqual(calls.map((call) => call.id), [2], 'only the undelayed item at first');
      await expectCounts(first, { ...EMPTY, delayed: 1 }, 1000);
      // A worker restart before the release time: the item waits on the broker, not in the stopped consumer.
      await first.stopConsuming();
      const second = openQueue(backend, { shared: namespaces.get(first) });
      await second.consume(handler, { concurrency: 2 });
      await waitFor(async () => calls.length >= 2, { timeoutMs: 10_000, what: 'the delayed item' });
      const late = calls[1].at - releaseAt;
      console.log(`# ${backend}: a delayed item was handled ${late} ms after its release time`);
      assert.equal(calls[1].id, 1);
      assert.ok(late >= 0, `handled ${-late} ms before its release time`);
      assert.ok(late < 1000, `handled ${late} ms after its release time`);
      await expectCounts(second, EMPTY);
      await sleep(300);
      assert.equal(calls.length, 2, 'each handled once');
    });

    test('5,000 items enqueue fast and none is lost', async () => {
      const queue = openQueue(backend);
      const started = Date.now();
      await queue.enqueue(items(5000));
      const enqueueMs = Date.now() - started;
      /** @type {Set<number>} */
      const seen = new Set();
      let handled = 0;
      await queue.consume(async ({ id }) => { seen.add(id); handled++; }, { concurrency: 50 });
      await waitFor(async () => seen.size >= 5000, { timeoutMs: 20_000, what: 'all 5,000 items' });
      console.log(`# ${backend}: enqueue of 5,000 items took ${enqueueMs} ms; all handled ${Date.now() - started} ms after the start`);
      assert.ok(enqueueMs < 5000, `enqueue took ${enqueueMs} ms`);
      await expectCounts(queue, EMPTY);
      assert.equal(handled, 5000, 'each handled once');
    });
  });
}

describe('RabbitMQ specifics', () => {
  test('a dead-lettered copy carries its reason in headers', async () => {
    const prefix = uniquePrefix();
    const options = { namespace: prefix, name: 'contract', attempts: 2, backoffMs: 100 };
    const queue = createRabbitmqQueue({ amqpUrl: AMQP_URL, ...options, logger });
    queues.push(queue);
    const topology = rabbitmqTopology(options);
    cleanups.push(() => deleteTopology(AMQP_URL, topology));
    let deadLettered = 0;
    await queue.consume(async () => { throw new TransientError('SNS unavailable'); }, { concurrency: 1, onDeadLetter: () => { deadLettered++; } });
    await queue.enqueue([{ id: 3 }]);
    await waitFor(async () => deadLettered === 1, { timeoutMs: 10_000, what: 'onDeadLetter' });

    const connection = await connect(AMQP_URL);
    try {
      const channel = await connection.createChannel();
      const copy = await channel.get(topology.dead, { noAck: true });
      assert.ok(copy, 'a copy in the dead queue');
      assert.deepEqual(JSON.parse(copy.content.toString()), { id: 3 });
      const headers = copy.properties.headers ?? {};
      assert.equal(headers['x-reason'], 'SNS unavailable');
      assert.equal(headers['x-attempts'], 2);
      assert.equal(headers['x-error-code'], 'PUSH_ERR_TRANSIENT');
      assert.ok(Math.abs(Date.parse(headers['x-failed-at']) - Date.now()) < 10_000, `x-failed-at ${headers['x-failed-at']}`);
    } finally {
      await connection.close();
    }
  });
});
