// (a) One worker process's publish throughput with each SNS publish path (SNS_CLIENT=lean
// and sdk) against a bare SNSClient.send loop at the same concurrency, all against the
// same emulator process, interleaved round by round so machine noise hits each alike;
// the CPU each spends per publish; and, paced, the rate each achieves against the set one.
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { deletePrefix } from '../shared/redis.js';
import { ROOT, benchPushctl, runNode, startNode, emulatorStats, resetEmulator, median, writeCampaignFiles } from './support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PATHS = /** @type {const} */ (['lean', 'sdk']);
// Preloaded into the worker: on SIGUSR2 it prints its CPU time so far (process.cpuUsage),
// so the bench can take the CPU of the sending alone, without start-up.
const CPU_REPORTER = 'data:text/javascript,process.on("SIGUSR2",()=>{const u=process.cpuUsage();process.stdout.write("cpuMicros="+(u.user+u.system)+"\\n")})';

/**
 * @typedef {{ rate: number, cpuMicrosPerPublish: number }} Measured
 * @typedef {{ bare: Measured, lean: Measured, sdk: Measured, paced: Record<'lean' | 'sdk', number> }} Round
 */

/**
 * @param {{ devices?: number, concurrency?: number, rounds?: number, port?: number, pacedRate?: number, pacedDevices?: number }} [options]
 */
export async function benchPublishThroughput({ devices = 20_000, concurrency = 64, rounds = 5, port = 9931, pacedRate = 500, pacedDevices = 3000 } = {}) {
  const url = `http://127.0.0.1:${port}`;
  const emulator = await startNode(['emulator/main.js', '--port', String(port)], { LOG_LEVEL: 'info' }, /listening/);
  const campaign = await writeCampaignFiles(devices, 'bench', { title: 'Hi', body: 'Hello' });
  const paced = await writeCampaignFiles(pacedDevices, 'paced', { title: 'Hi', body: 'Hello' });

  /** @type {Round[]} */
  const results = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // Each round in a different order, so no path always runs right after another.
      const order = /** @type {('bare' | 'lean' | 'sdk')[]} */ ([['bare', 'lean', 'sdk'], ['lean', 'sdk', 'bare'], ['sdk', 'bare', 'lean']][round % 3]);
      /** @type {Partial<Round>} */
      const result = {};
      for (const what of order) {
        await resetEmulator(url);
        if (what === 'bare') {
          const run = await runNode(['bench/bare-publish-loop.js', url, String(devices), String(concurrency)], {});
          if (run.code !== 0) throw new Error(`bare loop failed: ${run.stderr}`);
          const { cpuMicros } = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
          result.bare = { rate: rateOf(await emulatorStats(url)), cpuMicrosPerPublish: cpuMicros / devices };
        } else {
          result[what] = await workerRun({ url, files: campaign, devices, concurrency, path: what, sendRate: 1_000_000 });
        }
      }
      /** @type {Record<string, number>} */
      const pacedRates = {};
      for (const path of round % 2 ? [...PATHS].reverse() : PATHS) {
        await resetEmulator(url);
        pacedRates[path] = (await workerRun({ url, files: paced, devices: pacedDevices, concurrency, path, sendRate: pacedRate })).rate;
      }
      result.paced = /** @type {Record<'lean' | 'sdk', number>} */ (pacedRates);
      const r = /** @type {Round} */ (result);
      results.push(r);
      console.error(`round ${round + 1}: bare ${r.bare.rate.toFixed(0)}/s (${r.bare.cpuMicrosPerPublish.toFixed(0)} µs), ` +
        `sdk worker ${r.sdk.rate.toFixed(0)}/s (${r.sdk.cpuMicrosPerPublish.toFixed(0)} µs), lean worker ${r.lean.rate.toFixed(0)}/s ` +
        `(${r.lean.cpuMicrosPerPublish.toFixed(0)} µs), lean/bare ${(r.lean.rate / r.bare.rate).toFixed(2)}; ` +
        `paced at ${pacedRate}/s: lean ${r.paced.lean.toFixed(0)}, sdk ${r.paced.sdk.toFixed(0)}`);
    }
  } finally {
    await emulator.stop();
    await campaign.remove();
    await paced.remove();
  }
  const med = (/** @type {(r: Round) => number} */ pick) => median(results.map(pick));
  return {
    devices, concurrency, pacedRate, pacedDevices, rounds: results,
    median: {
      bare: { rate: med((r) => r.bare.rate), cpuMicrosPerPublish: med((r) => r.bare.cpuMicrosPerPublish) },
      sdk: { rate: med((r) => r.sdk.rate), cpuMicrosPerPublish: med((r) => r.sdk.cpuMicrosPerPublish) },
      lean: { rate: med((r) => r.lean.rate), cpuMicrosPerPublish: med((r) => r.lean.cpuMicrosPerPublish) },
      leanOverBare: med((r) => r.lean.rate / r.bare.rate),
      sdkOverBare: med((r) => r.sdk.rate / r.bare.rate),
      pacedLean: med((r) => r.paced.lean),
      pacedSdk: med((r) => r.paced.sdk)
    }
  };
}

/**
 * Enqueues the audience with sending stopped (pushctl rate 0), starts one worker on the
 * given path, notes its CPU once it idles, then lets it send at `sendRate` and measures
 * the publish rate the emulator sees and the worker's CPU per publish.
 * @param {{ url: string, files: { audience: string, message: string }, devices: number, concurrency: number,
 *           path: 'lean' | 'sdk', sendRate: number }} run
 * @returns {Promise<Measured>}
 */
async function workerRun({ url, files, devices, concurrency, path, sendRate }) {
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const env = { KEY_PREFIX: prefix, SNS_ENDPOINT: url, SNS_CLIENT: path, SEND_RATE: String(sendRate),
    SEND_BURST: String(Math.max(1, Math.ceil(sendRate * 0.05))), PUBLISH_CONCURRENCY: String(concurrency),
    WORKER_CONCURRENCY: '4', SEGMENT_SIZE: '500', LOG_LEVEL: 'warn' };
  const stopped = await benchPushctl(['rate', '0', '--yes'], env);
  if (stopped.code !== 0) throw new Error(`pushctl rate 0 failed: ${stopped.stderr}`);
  const sent = await benchPushctl(['send', '--audience', files.audience, '--message', files.message, '--yes'], env);
  if (sent.code !== 0) throw new Error(`pushctl send failed: ${sent.stderr}`);
  const worker = spawn(process.execPath, ['--import', CPU_REPORTER, 'workers/worker.js'], {
    cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  worker.stdout.setEncoding('utf8').on('data', (c) => { output = (output + c).slice(-20_000); });
  /** The CPU time the worker reports next, in µs. */
  const cpuNow = async () => {
    const before = output.length;
    worker.kill('SIGUSR2');
    for (let i = 0; i < 100; i++) {
      const line = /cpuMicros=(\d+)/.exec(output.slice(before));
      if (line) return Number(line[1]);
      await sleep(20);
    }
    throw new Error('the worker did not report its CPU');
  };
  try {
    for (let i = 0; !/worker consuming segments/.test(output); i++) {
      if (worker.exitCode !== null || i > 300) throw new Error(`the worker did not start: ${output}`);
      await sleep(50);
    }
    await sleep(300);
    const cpuAtStart = await cpuNow();
    const resumed = await benchPushctl(['rate', String(sendRate)], env);
    if (resumed.code !== 0) throw new Error(`pushctl rate failed: ${resumed.stderr}`);
    while ((await emulatorStats(url)).published < devices) await sleep(100);
    const cpuMicros = (await cpuNow()) - cpuAtStart;
    return { rate: rateOf(await emulatorStats(url)), cpuMicrosPerPublish: cpuMicros / devices };
  } finally {
    if (worker.exitCode === null) {
      worker.kill('SIGTERM');
      await once(worker, 'exit');
    }
    await dropPrefix(prefix);
  }
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
