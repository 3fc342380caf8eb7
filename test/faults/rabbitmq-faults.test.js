// The whole pipeline on QUEUE_BACKEND=rabbitmq (pushctl send → RabbitMQ → worker
// processes → SNS emulator) while the broker misbehaves: the workers' connections
// are closed by the broker, then the broker restarts. Each time the campaign must
// complete with no device missed and no more duplicates than the sends in flight.
// Then a worker leaves on SIGTERM (hand-back through RabbitMQ: nothing sent twice),
// and enqueue without any broker gives up in time with a redacted URL.
// The restart is of the local broker (rabbitmqctl stop_app/start_app): run this file
// alone on a broker that other work does not depend on at that moment.
import { test, before, after } from 'node:test';
import { once } from 'node:events';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { UnavailableError } from '../../shared/errors.js';
import { createRabbitmqQueue } from '../../shared/queue/rabbitmq-queue.js';
import { rabbitmqTopology, deleteTopology } from '../../shared/queue/rabbitmq-topology.js';
import { SEGMENT_QUEUE } from '../../shared/queue/create-queue.js';
import { AMQP_URL, startStack, waitFor, waitForFinish, uniquePrefix } from '../support/harness.js';

const run = promisify(execFile);
const DEVICES = 9000;
const WORKERS = 2;
const PUBLISH_CONCURRENCY = 16;
// What a worker may have sent but not recorded when its connection goes: its sends in flight.
const DUPLICATE_BOUND = PUBLISH_CONCURRENCY * WORKERS;
const logger = pino({ level: 'silent' });

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {(() => Promise<void>)[]} */
const cleanups = [];

before(async () => {
  await ensureBrokerRunning();
  stack = await startStack({
    devices: DEVICES,
    workers: WORKERS,
    settings: { QUEUE_BACKEND: 'rabbitmq', AMQP_URL, SEND_RATE: 1200, SEGMENT_SIZE: 250, WORKER_CONCURRENCY: 2, PUBLISH_CONCURRENCY }
  });
});

after(async () => {
  // Whatever happened above, leave the broker running for whoever comes next.
  await ensureBrokerRunning();
  await stack?.close();
  for (const cleanup of cleanups) await cleanup().catch((error) => console.log(`# cleanup: ${error.message}`));
});

/** @param {string[]} args */
async function rabbitmqctl(...args) {
  const { stdout } = await run('rabbitmqctl', args, { timeout: 60_000 });
  return stdout;
}

async function brokerRunning() {
  return run('rabbitmq-diagnostics', ['-q', 'check_running'], { timeout: 30_000 }).then(() => true, () => false);
}

async function ensureBrokerRunning() {
  if (await brokerRunning()) return;
  await rabbitmqctl('start_app');
  await waitFor(brokerRunning, { timeoutMs: 60_000, intervalMs: 500, what: 'RabbitMQ to run' });
}

/**
 * Closes, from the broker's side, the segment-queue connections of the stack's
 * worker processes (named pushpace:<prefix>:segments:<pid> by the adapter).
 */
async function closeWorkerConnections() {
  const names = new Set(stack.workers.map((worker) => `pushpace:${stack.prefix}:${SEGMENT_QUEUE}:${worker.child.pid}`));
  const listing = await rabbitmqctl('-s', 'list_connections', 'pid', 'client_properties');
  const victims = listing.split('\n')
    .map((line) => ({ pid: line.split('\t')[0], name: /\{"connection_name","([^"]*)"\}/.exec(line)?.[1] }))
    .filter((connection) => connection.name && names.has(connection.name));
  for (const { pid } of victims) await rabbitmqctl('close_connection', pid, 'test: connection closed mid-campaign');
  return victims.length;
}

/**
 * Sends the campaign, runs `disrupt` once a quarter is out, and checks the outcome.
 * @param {string} label @param {() => Promise<void>} disrupt
 */
async function campaignSurvives(label, disrupt) {
  const { id } = await stack.send();
  await waitFor(async () => stack.emulator.stats().published > DEVICES / 4, { timeoutMs: 30_000, what: 'a quarter of the sends' });
  const started = Date.now();
  await disrupt();
  const status = await waitForFinish(id, stack.env, 90_000);
  const stats = stack.emulator.stats();
  const duplicates = stats.published - DEVICES;
  console.log(`# ${label}: completed ${((Date.now() - started) / 1000).toFixed(1)} s after the fault; ` +
    `${duplicates} duplicate publishes (bound ${DUPLICATE_BOUND})`);
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES, 'every device has an outcome');
  assert.equal(stats.distinctTargets, DEVICES, 'zero devices missed');
  assert.ok(duplicates <= DUPLICATE_BOUND, `${duplicates} duplicates exceed the ${DUPLICATE_BOUND} sends in flight`);
  for (const worker of stack.workers) assert.equal(worker.child.exitCode, null, `a worker exited: ${worker.output()}`);
  if (process.env.SHOW_WORKER_LOGS) for (const worker of stack.workers) console.log(worker.output().replace(/^/gm, '# '));
}

test('workers whose connections the broker closes mid-campaign reconnect; the campaign completes', { timeout: 120_000 }, async () => {
  await campaignSurvives('connections closed', async () => {
    assert.equal(await closeWorkerConnections(), WORKERS, 'one segment-queue connection per worker');
  });
  for (const worker of stack.workers) assert.match(worker.output(), /RabbitMQ connection restored/);
});

test('a broker restart mid-campaign is waited out; the campaign completes, and enqueue waits for the broker', { timeout: 150_000 }, async () => {
  // A producer on the same broker: enqueueing while it is down waits for it, within the bound.
  const namespace = uniquePrefix();
  const producer = createRabbitmqQueue({ amqpUrl: AMQP_URL, namespace, name: 'restart', attempts: 1, logger });
  cleanups.push(async () => {
    await producer.close();
    await deleteTopology(AMQP_URL, rabbitmqTopology({ namespace, name: 'restart', attempts: 1, backoffMs: 1000 }));
  });
  await producer.enqueue([{ before: true }]);
  /** @type {Promise<void> | undefined} */
  let enqueuedDuringRestart;

  await campaignSurvives('broker restarted', async () => {
    await rabbitmqctl('stop_app');
    enqueuedDuringRestart = producer.enqueue([{ during: true }]);
    enqueuedDuringRestart.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
    await sleep(1000);
    await rabbitmqctl('start_app');
    await waitFor(brokerRunning, { timeoutMs: 60_000, intervalMs: 500, what: 'RabbitMQ to run again' });
  });
  await enqueuedDuringRestart;
  for (const worker of stack.workers) {
    const restored = worker.output().match(/RabbitMQ connection restored/g)?.length ?? 0;
    assert.ok(restored >= 2, `reconnected after each fault (${restored} times)`);
  }
  assert.equal((await producer.counts()).waiting, 2, 'both items are stored, the one from before the restart too');
});

test('SIGTERM mid-campaign hands segments back through RabbitMQ: exit 0 in time, nothing lost or sent twice', { timeout: 120_000 }, async () => {
  const { id } = await stack.send();
  await waitFor(async () => stack.emulator.stats().published > DEVICES / 4, { timeoutMs: 30_000, what: 'a quarter of the sends' });
  const leaving = stack.workers[0];
  const signalledAt = Date.now();
  leaving.child.kill('SIGTERM');
  const [code] = await once(leaving.child, 'exit');
  const seconds = (Date.now() - signalledAt) / 1000;
  console.log(`# SIGTERM: exit ${code} after ${seconds.toFixed(2)} s`);
  assert.equal(code, 0, leaving.output());
  assert.ok(seconds < 25, `took ${seconds} s`);

  // The other worker takes the handed-back segments at once.
  const status = await waitForFinish(id, stack.env, 90_000);
  const stats = stack.emulator.stats();
  assert.equal(status.state, 'completed');
  assert.equal(stats.distinctTargets, DEVICES, 'nothing lost');
  assert.equal(stats.published, DEVICES, 'nothing sent twice: in-flight sends were recorded before hand-back');
});

test('enqueue without a broker gives up with UnavailableError naming the URL without its password', async () => {
  // Port 1: nothing listens there, so every connect is refused at once.
  const queue = createRabbitmqQueue({ amqpUrl: 'amqp://pushpace:s3cret@127.0.0.1:1', name: 'nowhere', attempts: 1, unavailableAfterMs: 1500, logger });
  const started = Date.now();
  try {
    await assert.rejects(queue.enqueue([{ n: 1 }]), (error) => {
      assert.ok(error instanceof UnavailableError);
      assert.match(error.message, /amqp:\/\/pushpace:\*\*\*@127\.0\.0\.1:1/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    const waited = Date.now() - started;
    assert.ok(waited >= 1400 && waited < 5000, `gave up after ${waited} ms`);
  } finally {
    await queue.close();
  }
});
