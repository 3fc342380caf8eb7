// Helpers for integration tests: real Redis, a real SNS emulator over HTTP,
// worker and pushctl as child processes, and a clean key prefix per test file.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { createSnsEmulator } from '../../emulator/sns-emulator.js';
import { deletePrefix } from '../../shared/redis.js';
import { loadConfig } from '../../config/index.js';
import { SEGMENT_QUEUE, SEGMENT_BACKOFF_MS } from '../../shared/queue/create-queue.js';
import { rabbitmqTopology, deleteTopology } from '../../shared/queue/rabbitmq-topology.js';
import { runPushctl } from '../../scripts/run-pushctl.js';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A key prefix no other test uses. */
export const uniquePrefix = () => `t-${randomUUID().slice(0, 8)}`;

/**
 * Deletes every key of a prefix (BullMQ's and ours share the {prefix} hash tag).
 * @param {string} prefix
 */
export async function dropPrefix(prefix) {
  const redis = new Redis(REDIS_URL);
  try {
    await deletePrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

/**
 * Starts the SNS emulator on a free port.
 * @param {Parameters<typeof createSnsEmulator>[0]} [options]
 */
export async function startEmulator(options) {
  const emulator = createSnsEmulator(options);
  const url = await emulator.listen(0, '127.0.0.1');
  return { emulator, url };
}

/**
 * The environment a worker or pushctl gets in tests.
 * @param {{ prefix: string, snsUrl: string } & Record<string, string | number>} settings
 */
export function testEnv({ prefix, snsUrl, ...more }) {
  /** @type {Record<string, string>} */
  const env = {
    PATH: process.env.PATH ?? '',
    REDIS_URL,
    DATABASE_URL,
    KEY_PREFIX: prefix,
    SNS_ENDPOINT: snsUrl,
    LOG_LEVEL: 'warn'
  };
  for (const [name, value] of Object.entries(more)) env[name] = String(value);
  return env;
}

/**
 * Spawns a worker process; resolves once it logs that it consumes.
 * @param {Record<string, string>} env
 */
export async function startWorker(env) {
  const child = spawn(process.execPath, [join(ROOT, 'workers/worker.js')], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + 15_000;
  while (!output.includes('worker consuming segments')) {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}: ${output}`);
    if (Date.now() > deadline) throw new Error(`worker did not start: ${output}`);
    await sleep(50);
  }
  return {
    child,
    output: () => output,
    /** Stops it if still running (SIGTERM, then SIGKILL). */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await once(child, 'exit');
      clearTimeout(timer);
    }
  };
}

/**
 * Runs pushctl to completion.
 * @param {string[]} args
 * @param {Record<string, string>} env
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export function pushctl(args, env) {
  return runPushctl(args, { env });
}

/**
 * Polls `probe` until it returns a truthy value.
 * @template T
 * @param {() => Promise<T>} probe
 * @param {{ timeoutMs?: number, intervalMs?: number, what?: string }} [options]
 * @returns {Promise<T>}
 */
export async function waitFor(probe, { timeoutMs = 60_000, intervalMs = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * Polls `pushctl status --json` until the campaign is finished.
 * @param {string} id
 * @param {Record<string, string>} env
 * @param {number} [timeoutMs]
 */
export async function waitForFinish(id, env, timeoutMs = 120_000) {
  // Poll the campaign's hash directly: spawning pushctl twice a second would
  // take CPU from the workers under test. The answer comes from pushctl.
  const redis = new Redis(REDIS_URL);
  try {
    await waitFor(async () => ['completed', 'expired', 'cancelled', 'failed'].includes(String(await redis.hget(`{${env.KEY_PREFIX}}:campaign:${id}`, 'state'))),
      { timeoutMs, intervalMs: 250, what: `campaign ${id} to finish` });
  } finally {
    redis.disconnect();
  }
  return campaignStatus(id, env);
}

/**
 * `pushctl status ID --json`, parsed.
 * @param {string} id
 * @param {Record<string, string>} env
 */
export async function campaignStatus(id, env) {
  const { code, stdout, stderr } = await pushctl(['status', id, '--json'], env);
  if (code !== 0) throw new Error(`pushctl status exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

/**
 * A temporary directory with an audience of `count` made-up devices as CSV.
 * @param {number} count
 * @param {{ extraLines?: string[], header?: string }} [options]
 */
export async function makeAudience(count, { extraLines = [], header = 'endpointArn,platform,userId,locale' } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'pushpace-test-'));
  const path = join(dir, 'audience.csv');
  const lines = [header];
  for (let i = 0; i < count; i++) lines.push(`${deviceArn(i)},${i % 3 === 0 ? 'APNS' : 'GCM'},user-${i},${i % 2 ? 'fi' : 'en'}`);
  lines.push(...extraLines);
  await writeFile(path, lines.join('\n') + '\n');
  return { dir, path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** @param {number} i */
export function deviceArn(i) {
  const platform = i % 3 === 0 ? 'APNS' : 'GCM';
  return `arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/pushpace-test/${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;
}

/** Writes a small valid message file into `dir`. @param {string} dir */
export async function makeMessage(dir, message = { title: 'Sale', body: 'Everything 20% off today', locales: { fi: { title: 'Ale', body: 'Kaikki -20 % tänään' } } }) {
  const path = join(dir, 'message.json');
  await writeFile(path, JSON.stringify(message));
  return path;
}

/**
 * The usual fixture: an emulator, an audience of `devices` with a message, a key
 * prefix and `workers` worker processes. `send(args)` runs pushctl send on the
 * audience (after resetting the emulator) and returns the parsed --json answer.
 * @param {{ devices: number, workers?: number, settings?: Record<string, string | number>,
 *           emulator?: Parameters<typeof createSnsEmulator>[0] }} options emulator: its options (an onDelivery hook...)
 */
export async function startStack({ devices, workers = 1, settings = {}, emulator }) {
  const sns = await startEmulator(emulator);
  const audience = await makeAudience(devices);
  const message = await makeMessage(audience.dir);
  const prefix = uniquePrefix();
  const env = testEnv({ prefix, snsUrl: sns.url, ...settings });
  /** @type {Awaited<ReturnType<typeof startWorker>>[]} */
  const running = [];
  for (let i = 0; i < workers; i++) running.push(await startWorker(env));
  return {
    sns, emulator: sns.emulator, audience, message, prefix, env, workers: running,
    /** @param {string[]} [extraArgs] @param {object} [faults] emulator faults for this campaign */
    async send(extraArgs = [], faults = {}) {
      sns.emulator.reset();
      sns.emulator.setFaults(faults);
      const sent = await pushctl(['send', '--audience', audience.path, '--message', message, '--yes', '--json', ...extraArgs], env);
      if (sent.code !== 0) throw new Error(`pushctl send exited ${sent.code}: ${sent.stderr}`);
      return /** @type {{ id: string, devices: number, disabled: number }} */ (JSON.parse(sent.stdout));
    },
    async close() {
      await Promise.all(running.map((w) => w.stop()));
      await sns.emulator.close();
      await audience.remove();
      await dropPrefix(prefix);
      if (env.QUEUE_BACKEND === 'rabbitmq') await dropRabbitmqQueues(env);
    }
  };
}

/**
 * Deletes the segment queues a test stack declared on RabbitMQ.
 * @param {Record<string, string>} env
 */
export async function dropRabbitmqQueues(env) {
  const config = loadConfig(env);
  await deleteTopology(config.amqpUrl, rabbitmqTopology({ namespace: config.keyPrefix, name: SEGMENT_QUEUE,
    attempts: config.segmentAttempts, backoffMs: SEGMENT_BACKOFF_MS }));
}

/**
 * Deletes a test's event exchange and its ingest queues (the queue, its retry and dead-letter queues).
 * @param {{ exchange: string, queue: string }} names
 */
export async function dropEvents({ exchange, queue }) {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const name of [queue, `${queue}.retry`, `${queue}.dead`]) await channel.deleteQueue(name);
    await channel.deleteExchange(exchange);
  } finally {
    await connection.close().catch(() => {});
  }
}
