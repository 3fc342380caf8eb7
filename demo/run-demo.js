// One demo run on the real stack: Redis, BullMQ, worker processes, the governor process, the
// SNS emulator, a gateway with finite capacity (its own process, Prometheus /metrics) and
// simulated devices that call it after their push arrives. The governor steers the shared
// rate from the gateway's /metrics alone; the demo then checks what it promised: the p95
// within the SLO in ≥ 95% of 5-s windows, every device sent to exactly once, all within
// 3 minutes. docs/demo.md describes the setup and what to look for.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../config/index.js';
import { createRedis, assertRedisReachable, deletePrefix, redisKeys } from '../shared/redis.js';
import { createSnsEmulator } from '../emulator/sns-emulator.js';
import { requestTimeMassPerSecond } from '../shared/pacing/wake-up-model.js';
import { createDevices } from './devices.js';
import { DEMO, governorEnv } from './settings.js';
import { startGateway, startGovernor, startWorker, pushctl } from './stack.js';

/** @typedef {import('./stack.js').GovernorTick} GovernorTick */

/**
 * @typedef {object} DemoRecord  everything measured, for the report
 * @property {number} startedAt        ms since the epoch
 * @property {number} campaignStart
 * @property {number | null} campaignEnd  when the campaign completed (null: it did not)
 * @property {number} evaluationEnd    the last send's wake-ups (99%) have arrived
 * @property {number} audience
 * @property {GovernorTick[]} ticks
 * @property {number[]} samples        the gateway's [endMs, latencyMs, status] triples
 * @property {Map<number, number>} deliveriesPerSecond
 * @property {ReturnType<import('./devices.js').Devices['stats']>} devices
 * @property {{ published: number, distinctTargets: number }} emulator
 * @property {Record<string, string>} campaign  the campaign's hash: state and counters
 * @property {string} prefix
 * @property {string | null} failure   why the run stopped early
 */

/**
 * Runs the demo; `onTick` is told of each governor decision (the live line).
 * @param {object} options
 * @param {number} [options.audience]
 * @param {(tick: GovernorTick, progress: { delivered: number, campaignStart: number | null }) => void} options.onTick
 * @param {(message: string) => void} options.note   progress of the setup
 * @param {AbortSignal} [options.signal]  Ctrl-C: stop, clean up, report what there is
 * @returns {Promise<DemoRecord>}
 */
export async function runDemo({ audience = DEMO.audience, onTick, note, signal }) {
  const startedAt = Date.now();
  const config = loadConfig(process.env);
  const prefix = `demo-${randomUUID().slice(0, 8)}`;
  /** @type {Array<() => Promise<unknown> | unknown>} run in reverse order, whatever happens */
  const cleanups = [];
  /** @type {GovernorTick[]} */
  const ticks = [];
  /** @type {DemoRecord} */
  const record = {
    startedAt, campaignStart: startedAt, campaignEnd: null, evaluationEnd: startedAt, audience, ticks, samples: [],
    deliveriesPerSecond: new Map(), devices: /** @type {any} */ ({}), emulator: { published: 0, distinctTargets: 0 },
    campaign: {}, prefix, failure: null
  };
  let campaignStarted = false;
  const deadline = startedAt + DEMO.maxWallMs - 10_000;
  const checkTime = (/** @type {string} */ what) => {
    if (signal?.aborted) throw new Error(`interrupted while ${what}`);
    if (Date.now() > deadline) throw new Error(`out of time while ${what}`);
  };

  const redis = createRedis(config.redisUrl, { name: 'pushpace:demo' });
  cleanups.push(() => redis.quit().catch(() => {}));
  /** What to measure before anything stops, also after a failure or Ctrl-C. @type {Array<() => Promise<void> | void>} */
  const collect = [];
  try {
    await assertRedisReachable(redis, config.redisUrl);
    cleanups.push(() => deletePrefix(redis, prefix));
    // The children get the caller's environment (REDIS_URL...) with the demo's own settings on top.
    const baseEnv = { ...process.env, REDIS_URL: config.redisUrl, KEY_PREFIX: prefix, QUEUE_BACKEND: 'bullmq', LOG_LEVEL: 'warn', SEND_RATE: '20' };

    note(`key prefix ${prefix}; starting the gateway, the SNS emulator, ${DEMO.workers} workers and the governor`);
    const gateway = await startGateway(DEMO.gateway, baseEnv);
    cleanups.push(() => gateway.stop());
    collect.push(async () => {
      record.samples = /** @type {{ samples: number[] }} */ (await (await fetch(`${gateway.url}/_demo/samples`)).json()).samples;
    });
    const devices = createDevices({ gatewayUrl: gateway.url, baselineRps: DEMO.baselineRps, ...DEMO.wakeUp });
    cleanups.push(() => devices.stop());
    const emulator = createSnsEmulator({ onDelivery: (arn, at) => devices.delivered(arn, at) });
    const snsUrl = await emulator.listen(0);
    cleanups.push(() => emulator.close());
    collect.push(() => {
      record.devices = devices.stats();
      record.deliveriesPerSecond = devices.deliveriesPerSecond();
      const { published, distinctTargets } = emulator.stats();
      record.emulator = { published, distinctTargets };
    });
    devices.start();

    const env = { ...baseEnv, SNS_ENDPOINT: snsUrl, ...governorEnv(gateway.url) };
    const workers = await Promise.all(Array.from({ length: DEMO.workers }, () => startWorker(env)));
    cleanups.push(() => Promise.all(workers.map((w) => w.stop())));
    const governor = await startGovernor(env, (tick) => {
      ticks.push(tick);
      onTick(tick, { delivered: devices.stats().deliveries, campaignStart: campaignStarted ? record.campaignStart : null });
    });
    cleanups.push(() => governor.stop());

    // The governor runs all the time in production, so it has seen the baseline (and the
    // idle gateway's latency) before a campaign starts.
    while (ticks.filter((t) => t.gateway).length < DEMO.warmupTicks) {
      checkTime('the governor warms up');
      await sleep(50);
    }

    const dir = await mkdtemp(join(tmpdir(), 'pushpace-demo-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const files = await writeCampaignFiles(dir, audience);
    record.campaignStart = Date.now();
    campaignStarted = true;
    const sent = JSON.parse(await pushctl(['send', '--audience', files.audience, '--message', files.message,
      '--name', 'demo announcement', '--yes', '--json'], env));
    note(`campaign ${sent.id}: ${sent.devices} devices enqueued`);

    const hash = redisKeys(prefix).campaign(sent.id).hash;
    collect.push(async () => { record.campaign = await redis.hgetall(hash); });
    for (;;) {
      const state = await redis.hget(hash, 'state');
      if (state === 'completed') break;
      if (state === 'failed' || state === 'cancelled' || state === 'expired') throw new Error(`the campaign ended ${state}`);
      checkTime('the campaign sends');
      await sleep(250);
    }
    record.campaignEnd = Date.now();

    // Judge the gateway until the last send's wake-ups have (99%) arrived, as the simulator
    // does: the load a send causes comes seconds after it.
    const settle = devices.stats().lastDeliveryAt + requestDelayQuantileMs(0.99);
    note(`campaign completed; waiting ${((settle - Date.now()) / 1000).toFixed(1)} s for the last wake-ups`);
    while (Date.now() < settle || (devices.stats().inFlight > 0 && Date.now() < settle + 10_000)) {
      checkTime('the last wake-ups arrive');
      await sleep(100);
    }
  } catch (error) {
    record.failure = /** @type {Error} */ (error).message;
  } finally {
    record.evaluationEnd = Date.now();
    for (const measure of collect) {
      try {
        await measure();
      } catch (error) {
        note(`measuring failed: ${/** @type {Error} */ (error).message}`);
      }
    }
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        note(`cleanup failed: ${/** @type {Error} */ (error).message}`);
      }
    }
  }
  return record;
}

/**
 * The audience (made-up endpoint ARNs, one per device) and the message.
 * @param {string} dir
 * @param {number} count
 */
async function writeCampaignFiles(dir, count) {
  const lines = ['endpointArn,platform,locale'];
  for (let i = 0; i < count; i++) {
    const platform = i % 3 === 0 ? 'APNS' : 'GCM';
    lines.push(`arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/pushpace-demo/${String(i).padStart(8, '0')}-0000-4000-8000-000000000000,${platform},${i % 4 === 0 ? 'fi' : 'en'}`);
  }
  const audience = join(dir, 'audience.csv');
  const message = join(dir, 'message.json');
  await writeFile(audience, lines.join('\n') + '\n');
  await writeFile(message, JSON.stringify({
    title: 'Our biggest sale starts now', body: 'Everything 30% off until Sunday.',
    locales: { fi: { title: 'Suurin alemme alkaa nyt', body: 'Kaikki -30 % sunnuntaihin asti.' } },
    data: { screen: 'sale' }
  }));
  return { audience, message };
}

/**
 * The time by which a share q of a send's wake-up requests have arrived, in the devices' true
 * model (log-normal open delay, exponential session).
 * @param {number} q
 */
export function requestDelayQuantileMs(q) {
  const { openDelayMedianMs, openDelaySigma, sessionMeanMs } = DEMO.wakeUp;
  const mass = requestTimeMassPerSecond({
    openDelay: [{ share: 1, medianMs: openDelayMedianMs, sigma: openDelaySigma }],
    session: { kind: 'exponential', meanMs: sessionMeanMs }
  });
  let sum = 0;
  for (let i = 0; i < mass.length; i++) if ((sum += mass[i]) >= q) return (i + 1) * 1000;
  return mass.length * 1000;
}
