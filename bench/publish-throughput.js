// (a) One worker process's publish throughput against a bare SNSClient.send loop
// at the same concurrency, both against the same emulator process, interleaved
// round by round so machine noise hits both alike.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { deletePrefix } from '../shared/redis.js';
import { benchPushctl, runNode, startNode, emulatorStats, resetEmulator, median, writeCampaignFiles } from './support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * @param {{ devices?: number, concurrency?: number, rounds?: number, port?: number }} [options]
 */
export async function benchPublishThroughput({ devices = 20_000, concurrency = 64, rounds = 3, port = 9931 } = {}) {
  const url = `http://127.0.0.1:${port}`;
  const emulator = await startNode(['emulator/main.js', '--port', String(port)], { LOG_LEVEL: 'info' }, /listening/);
  const campaign = await writeCampaignFiles(devices, 'bench', { title: 'Hi', body: 'Hello' });
  const { audience, message } = campaign;

  /** @type {{ bare: number, worker: number, ratio: number }[]} */
  const results = [];
  try {
    for (let round = 0; round < rounds; round++) {
      await resetEmulator(url);
      const bareRun = await runNode(['bench/bare-publish-loop.js', url, String(devices), String(concurrency)], {});
      if (bareRun.code !== 0) throw new Error(`bare loop failed: ${bareRun.stderr}`);
      const bare = rateOf(await emulatorStats(url));

      await resetEmulator(url);
      const worker = await workerRun({ url, audience, message, devices, concurrency });
      results.push({ bare, worker, ratio: worker / bare });
      console.error(`round ${round + 1}: bare ${bare.toFixed(0)}/s, worker ${worker.toFixed(0)}/s, ratio ${(worker / bare).toFixed(3)}`);
    }
  } finally {
    await emulator.stop();
    await campaign.remove();
  }
  return {
    devices, concurrency, rounds: results,
    medianBare: median(results.map((r) => r.bare)),
    medianWorker: median(results.map((r) => r.worker)),
    medianRatio: median(results.map((r) => r.ratio))
  };
}

/**
 * Enqueues the audience first, then starts one worker with a bucket that never
 * limits, and measures the publish rate the emulator sees.
 * @param {{ url: string, audience: string, message: string, devices: number, concurrency: number }} run
 */
async function workerRun({ url, audience, message, devices, concurrency }) {
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const env = { KEY_PREFIX: prefix, SNS_ENDPOINT: url, SEND_RATE: '1000000', SEND_BURST: '100000', PUBLISH_CONCURRENCY: String(concurrency),
    WORKER_CONCURRENCY: '4', SEGMENT_SIZE: '500', LOG_LEVEL: 'warn' };
  const sent = await benchPushctl(['send', '--audience', audience, '--message', message, '--yes'], env);
  if (sent.code !== 0) throw new Error(`pushctl send failed: ${sent.stderr}`);
  const worker = await startNode(['workers/worker.js'], { ...env, LOG_LEVEL: 'info' }, /worker consuming segments/);
  try {
    while ((await emulatorStats(url)).published < devices) await sleep(200);
  } finally {
    await worker.stop();
    await dropPrefix(prefix);
  }
  return rateOf(await emulatorStats(url));
}

/** Publishes per second between the first and the last one. @param {{ published: number, firstAt: number, lastAt: number }} stats */
function rateOf(stats) {
  return ((stats.published - 1) * 1000) / (stats.lastAt - stats.firstAt);
}

/** @param {string} prefix */
export async function dropPrefix(prefix) {
  const redis = new Redis(REDIS_URL);
  await deletePrefix(redis, prefix);
  redis.disconnect();
}
