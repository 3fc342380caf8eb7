// One demo run on the real stack: Redis, BullMQ, worker processes, the governor process, the
// SNS emulator, a gateway with finite capacity (its own process, Prometheus /metrics: the
// modelled one or the real one) and simulated devices that call it after their push
// arrives. The governor steers the shared rate from the gateway's /metrics or from its
// probe alone; the demo then checks what it promised: the p95 within the SLO in ≥ 95% of
// 5-s windows, every device sent to exactly once, all within the world's time limit.
// Without a governor (a fixed rate) it is one point of the bench's sweep.
// docs/demo.md describes the setup and what to look for.
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

/** @typedef {import('./settings.js').DemoWorld} DemoWorld */
/** @typedef {import('./settings.js').SourceName} SourceName */
import { startGateway, startGovernor, startWorker, pushctl } from './stack.js';

/** @typedef {import('./stack.js').GovernorTick} GovernorTick */

/**
 * @typedef {object} DemoRecord  everything measured, for the report
 * @property {number} startedAt        ms since the epoch
 * @property {number} campaignStart
 * @property {number | null} campaignEnd  when the campaign completed (null: it did not)
 * @property {number} evaluationEnd    the last send's wake-ups (99%) have arrived
 * @property {number} audience
 * @property {DemoWorld} world
 * @property {SourceName | null} source  where the governor read the gateway (null: no governor)
 * @property {number | null} fixedRate   sends/s set once, without a governor
 * @property {GovernorTick[]} ticks
 * @property {number[]} samples        the users' requests as [endMs, latencyMs, status] triples, from the world's judge (gateway or phones)
 * @property {Record<string, number> | null} gatewayStats  the real gateway's CPU work, measured
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
 * @param {DemoWorld} [options.world]
 * @param {number} [options.audience]    the world's unless given
 * @param {SourceName} [options.source]  the governor's gateway metric source (default scrape)
 * @param {number} [options.fixedRate]   no governor: the bucket is set to this once
 * @param {(tick: GovernorTick, progress: { delivered: number, campaignStart: number | null }) => void} options.onTick
 * @param {(message: string) => void} options.note   progress of the setup
 * @param {AbortSignal} [options.signal]  Ctrl-C: stop, clean up, report what there is
 * @param {StopWhen} [options.stopWhen]  asked every few seconds once the campaign starts, in a
 *   world judged by the phones: a reason stops the run there (the bench's sweep ends a fixed
 *   rate whose verdict can no longer change)
 * @returns {Promise<DemoRecord>}
 */
export async function runDemo({ world = DEMO, audience = world.audience, source = 'scrape', fixedRate, onTick, note, signal, stopWhen }) {
  const startedAt = Date.now();
  const config = loadConfig(process.env);
  const prefix = `demo-${randomUUID().slice(0, 8)}`;
  /** @type {Array<() => Promise<unknown> | unknown>} run in reverse order, whatever happens */
  const cleanups = [];
  /** @type {GovernorTick[]} */
  const ticks = [];
  /** @type {DemoRecord} */
  const record = {
    startedAt, campaignStart: startedAt, campaignEnd: null, evaluationEnd: startedAt, audience, world,
    source: fixedRate === undefined ? source : null, fixedRate: fixedRate ?? null, ticks, samples: [], gatewayStats: null,
    deliveriesPerSecond: new Map(), devices: /** @type {any} */ ({}), emulator: { published: 0, distinctTargets: 0 },
    campaign: {}, prefix, failure: null
  };
  let campaignStarted = false;
  const deadline = startedAt + world.maxWallMs - 10_000;
  const checkTime = (/** @type {string} */ what) => {
    if (signal?.aborted) throw new Error(`interrupted while ${what}`);
    if (Date.now() > deadline) throw new Error(`out of time while ${what}`);
  };
  /** @type {(() => number[]) | null} the judge's samples so far, where they are in this process */
  let judgeSamples = null;
  let lastStopCheck = 0;
  const checkStop = (/** @type {string} */ what) => {
    if (!stopWhen || !judgeSamples || !campaignStarted || Date.now() - lastStopCheck < STOP_CHECK_MS) return;
    lastStopCheck = Date.now();
    const reason = stopWhen({ samples: judgeSamples(), campaignStart: record.campaignStart, deadline, now: lastStopCheck });
    if (reason) throw new Error(`stopped while ${what}: ${reason}`);
  };

  const redis = createRedis(config.redis, { name: 'pushpace:demo' });
  cleanups.push(() => redis.quit().catch(() => {}));
  /** What to measure before anything stops, also after a failure or Ctrl-C. @type {Array<() => Promise<void> | void>} */
  const collect = [];
  try {
    await assertRedisReachable(redis, config.redis);
    cleanups.push(() => deletePrefix(redis, prefix));
    // The children get the caller's environment (REDIS_URL...) with the demo's own settings on top.
    const baseEnv = { ...process.env, REDIS_URL: config.redis.url, KEY_PREFIX: prefix, QUEUE_BACKEND: 'bullmq', LOG_LEVEL: 'warn', SEND_RATE: '20', ...world.env };

    note(`key prefix ${prefix}; starting the ${world.gateway.kind} gateway, the SNS emulator, ${world.workers} workers` +
      (fixedRate === undefined ? ` and the governor (${source})` : `; no governor, ${fixedRate} sends/s`));
    const gateway = await startGateway(world.gateway, baseEnv, config.databaseUrl);
    cleanups.push(() => gateway.stop());
    const devices = createDevices({ gatewayUrl: gateway.url, baselineRps: world.baselineRps, ...world.wakeUp });
    if (world.judgedBy === 'phones') judgeSamples = devices.samples;
    collect.push(async () => {
      // A copy: stopping the phones later fails their calls in flight, which are no user's wait.
      record.samples = world.judgedBy === 'phones' ? devices.samples().slice()
        : /** @type {{ samples: number[] }} */ (await (await fetch(`${gateway.url}/_demo/samples`)).json()).samples;
      if (world.gateway.kind === 'real') record.gatewayStats = /** @type {Record<string, number>} */ (await (await fetch(`${gateway.url}/_demo/stats`)).json());
    });
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

    const env = { ...baseEnv, SNS_ENDPOINT: snsUrl, ...governorEnv(world, gateway.url, source) };
    const workers = await Promise.all(Array.from({ length: world.workers }, () => startWorker(env)));
    cleanups.push(() => Promise.all(workers.map((w) => w.stop())));
    if (fixedRate === undefined) {
      const governor = await startGovernor(env, (tick) => {
        ticks.push(tick);
        onTick(tick, { delivered: devices.stats().deliveries, campaignStart: campaignStarted ? record.campaignStart : null });
      });
      cleanups.push(() => governor.stop());
      // The governor runs all the time in production, so it has seen the baseline (and the
      // idle gateway's latency) before a campaign starts.
      while (ticks.filter((t) => t.gateway).length < world.warmupTicks) {
        checkTime('the governor warms up');
        await sleep(50);
      }
    } else {
      // A fixed rate, as an operator sets it with pushctl; a burst of one spreads it evenly.
      await pushctl(['rate', String(fixedRate)], env);
      await sleep(world.warmupTicks * world.priors.metricsWindowMs);
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
    let lastProgress = { at: Date.now(), deliveries: 0 };
    for (;;) {
      const state = await redis.hget(hash, 'state');
      if (state === 'completed') break;
      if (state === 'failed' || state === 'cancelled' || state === 'expired') throw new Error(`the campaign ended ${state}`);
      checkTime('the campaign sends');
      checkStop('the campaign sends');
      const { deliveries } = devices.stats();
      if (deliveries > lastProgress.deliveries) lastProgress = { at: Date.now(), deliveries };
      else if (Date.now() - lastProgress.at > 30_000) throw new Error(`nothing sent for 30 s at ${deliveries} of ${audience} (bucket: ${JSON.stringify(await redis.hgetall(redisKeys(prefix).bucket))})`);
      await sleep(250);
    }
    record.campaignEnd = Date.now();

    // Judge the gateway until the last send's wake-ups have (99%) arrived, as the simulator
    // does: the load a send causes comes seconds after it.
    const settle = devices.stats().lastDeliveryAt + requestDelayQuantileMs(world, 0.99);
    note(`campaign completed; waiting ${((settle - Date.now()) / 1000).toFixed(1)} s for the last wake-ups`);
    while (Date.now() < settle || (devices.stats().inFlight > 0 && Date.now() < settle + 10_000)) {
      checkTime('the last wake-ups arrive');
      checkStop('the last wake-ups arrive');
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
 * @callback StopWhen  whether a run can stop before its end: a reason, or null to go on
 * @param {{ samples: readonly number[], campaignStart: number, deadline: number, now: number }} progress
 *   samples: the phones' calls so far, as DemoRecord.samples; deadline: when the run is cut off (ms since the epoch)
 * @returns {string | null}
 */

/** How often stopWhen is asked. */
const STOP_CHECK_MS = 5000;

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
 * @param {DemoWorld} world
 * @param {number} q
 */
function requestDelayQuantileMs(world, q) {
  const { openDelayMedianMs, openDelaySigma, sessionMeanMs } = world.wakeUp;
  const mass = requestTimeMassPerSecond({
    openDelay: [{ share: 1, medianMs: openDelayMedianMs, sigma: openDelaySigma }],
    session: { kind: 'exponential', meanMs: sessionMeanMs }
  });
  let sum = 0;
  for (let i = 0; i < mass.length; i++) if ((sum += mass[i]) >= q) return (i + 1) * 1000;
  return mass.length * 1000;
}
