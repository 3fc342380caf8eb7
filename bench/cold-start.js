// Cold start on the real stack (issue #11, point 4): with no metrics history and no model
// memory, a campaign whose whole predicted wake-up load fits well inside the prior headroom
// goes out at once, 1,000 devices in under 30 s; one whose load does not fit (20,000) is
// still paced.
//
//   node bench/cold-start.js            prints the section (npm run bench -- cold-start appends it to RESULTS.md)
//
// Every run has a fresh key prefix (no governor journal, no model memory) and its own
// processes: the demo's modelled gateway with its /metrics histogram and the users nobody
// pushed, two workers, the governor reading that histogram (metrics-scrape) with the
// project's default priors but the capacity an operator's load test gives, and the SNS
// emulator, whose deliveries reach simulated phones that open the app on the default
// priors' real (not compressed) timing. The 1,000-device campaign runs in two orders:
//  - queued: `pushctl send`, then the governor starts (a deploy, a restart): its first
//    decision has the campaign's devices and no gateway window, the cold-start rule's case;
//  - live: the governor starts, takes its first decision (which only primes the scrape),
//    then `pushctl send`: what an operator sees on a fresh install.
// The 20,000-device contrast runs queued, where the cold-start rule is asked; it is
// watched for four decisions and cancelled.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../config/index.js';
import { CONTROLLER_DEFAULTS } from '../shared/pacing/controller-options.js';
import { createRedis, deletePrefix, redisKeys } from '../shared/redis.js';
import { createSnsEmulator } from '../emulator/sns-emulator.js';
import { createDevices } from '../demo/devices.js';
import { DEMO } from '../demo/settings.js';
import { startGateway, startGovernor, startWorker, pushctl } from '../demo/stack.js';
import { median, writeCampaignFiles } from './support.js';

/** @typedef {import('../demo/stack.js').GovernorTick} GovernorTick */
/** @typedef {'queued' | 'live'} Order */

const d = CONTROLLER_DEFAULTS;
/** The world: the demo's modelled gateway (16 processes × 20 ms, 800 requests/s at full CPU), real time. */
export const COLD_WORLD = Object.freeze({
  gateway: /** @type {import('../demo/settings.js').ModelledGatewaySettings} */ (DEMO.gateway),
  baselineRps: DEMO.baselineRps,
  // p95 at the default setpoint (0.8 × 400 ms) at about 620 requests/s (demo/gateway.js rateAtP95): a load test's figure, rounded down.
  capacityRps: 600,
  // The phones follow the default priors (uniform 60-s sessions have a 30-s mean).
  wakeUp: { openProbability: d.openProbability, requestsPerOpen: d.requestsPerOpen, openDelayMedianMs: d.openDelayMedianMs, openDelaySigma: d.openDelaySigma, sessionMeanMs: d.sessionMs / 2 },
  workers: 2,
  small: 1000,
  large: 20_000,
  targetSeconds: 30
});

/**
 * @typedef {object} ColdRun
 * @property {Order} order
 * @property {number} devices
 * @property {number | null} seconds   launch (pushctl send started) to the last device delivered; null: not all were
 * @property {number} delivered        by then (the contrast: when it was cancelled)
 * @property {number[]} deliveredBy    delivered within 10, 20 and 30 s of the launch
 * @property {boolean} exactlyOnce     each device published to once (the contrast: none twice)
 * @property {Array<{ t: number, reason: string, rate: number, remaining: number | null, p95Ms: number | null, rps: number | null }>} decisions  t: s from the launch
 * @property {number | null} firstWindowAt  s from the launch to the first decision with a gateway window
 * @property {number} peakP95Ms        the highest p95 the governor read while it ran
 */

/**
 * Runs `rounds` rounds: 1,000 queued, 1,000 live, 20,000 queued.
 * @param {{ rounds?: number, note?: (message: string) => void }} [options]
 */
export async function benchColdStart({ rounds = 3, note = () => {} } = {}) {
  const started = Date.now();
  /** @type {Array<{ small: Record<Order, ColdRun>, large: ColdRun }>} */
  const results = [];
  for (let round = 1; round <= rounds; round++) {
    const queued = await runOnce('queued', COLD_WORLD.small, note);
    note(`round ${round}: 1,000 queued: ${queued.seconds?.toFixed(1)} s (${queued.decisions.map((x) => x.reason).join(', ')})`);
    const live = await runOnce('live', COLD_WORLD.small, note);
    note(`round ${round}: 1,000 live: ${live.seconds?.toFixed(1)} s (${live.decisions.map((x) => x.reason).join(', ')})`);
    const large = await runOnce('queued', COLD_WORLD.large, note);
    note(`round ${round}: 20,000 queued: ${large.deliveredBy.join(' / ')} by 10/20/30 s (${large.decisions.map((x) => x.reason).join(', ')})`);
    results.push({ small: { queued, live }, large });
  }
  /** @param {Order} order */
  const summary = (order) => {
    const runs = results.map((r) => r.small[order]);
    const seconds = runs.map((x) => x.seconds ?? Infinity);
    return { median: median(seconds), min: Math.min(...seconds), max: Math.max(...seconds),
      met: runs.every((x) => x.seconds !== null && x.seconds < COLD_WORLD.targetSeconds && x.exactlyOnce) };
  };
  // Paced: the rule did not let it out at once, the first decision after the launch was the
  // safe rate, and it was not all sent within the small campaign's target.
  const paced = results.map(({ large }) => !large.decisions.some((x) => x.reason === 'cold-start') &&
    large.decisions[0]?.rate <= CONTROLLER_DEFAULTS.safeRate && large.deliveredBy[2] < large.devices && large.exactlyOnce);
  const small = { queued: summary('queued'), live: summary('live') };
  return { world: COLD_WORLD, rounds, results, small, paced, met: small.queued.met && small.live.met && paced.every(Boolean), runtimeSeconds: (Date.now() - started) / 1000 };
}

/**
 * One campaign on a fresh stack.
 * @param {Order} order @param {number} devices @param {(message: string) => void} note
 * @returns {Promise<ColdRun>}
 */
async function runOnce(order, devices, note) {
  const config = loadConfig(process.env);
  const prefix = `bench-cold-${randomUUID().slice(0, 8)}`;
  const redis = createRedis(config.redis, { name: 'pushpace:bench-cold-start' });
  /** @type {Array<() => unknown>} run in reverse order */
  const cleanups = [() => redis.quit().catch(() => {}), () => deletePrefix(redis, prefix)];
  /** @type {GovernorTick[]} */
  const ticks = [];
  /** @type {number[]} delivery times, ms since the epoch */
  const deliveries = [];
  try {
    const env = { ...process.env, REDIS_URL: config.redis.url, KEY_PREFIX: prefix, QUEUE_BACKEND: 'bullmq', LOG_LEVEL: 'warn',
      // Until the governor's first decision, the bucket runs at the controller's safe rate, as in the demo.
      SEND_RATE: String(CONTROLLER_DEFAULTS.safeRate) };
    const gateway = await startGateway(COLD_WORLD.gateway, env, config.databaseUrl);
    cleanups.push(() => gateway.stop());
    const phones = createDevices({ gatewayUrl: gateway.url, baselineRps: COLD_WORLD.baselineRps, ...COLD_WORLD.wakeUp });
    phones.start();
    cleanups.push(() => phones.stop());
    const emulator = createSnsEmulator({ onDelivery: (arn, at) => { deliveries.push(at); phones.delivered(arn, at); } });
    const snsUrl = await emulator.listen(0, '127.0.0.1');
    cleanups.push(() => emulator.close());
    const files = await writeCampaignFiles(devices, 'cold-start-bench');
    cleanups.push(() => files.remove());
    const stackEnv = { ...env, SNS_ENDPOINT: snsUrl, GATEWAY_METRICS: 'metrics-scrape', GATEWAY_METRICS_URL: `${gateway.url}/metrics`,
      PACING_CAPACITY_RPS: String(COLD_WORLD.capacityRps) };
    const workers = await Promise.all(Array.from({ length: COLD_WORLD.workers }, () => startWorker(stackEnv)));
    cleanups.push(() => Promise.all(workers.map((w) => w.stop())));
    const governor = async () => {
      const proc = await startGovernor(stackEnv, (tick) => ticks.push(tick));
      cleanups.push(() => proc.stop());
    };
    // The users' traffic has filled a few metrics windows before anything starts.
    await sleep(2000);
    if (order === 'live') {
      await governor();
      while (ticks.length === 0) await sleep(20);
    }

    const launchedAt = Date.now();
    const sent = JSON.parse(await pushctl(['send', '--audience', files.audience, '--message', files.message, '--name', 'cold start', '--yes', '--json'], stackEnv));
    if (order === 'queued') await governor();
    const hash = redisKeys(prefix).campaign(sent.id).hash;
    const after = () => ticks.filter((t) => t.at >= launchedAt);
    if (devices === COLD_WORLD.small) {
      while ((await redis.hget(hash, 'state')) !== 'completed') {
        if (Date.now() - launchedAt > 120_000) throw new Error(`${devices} devices not sent in 120 s: ${deliveries.length} delivered`);
        await sleep(50);
      }
    } else {
      // The contrast: 30 s (the small campaign's target) and four decisions are enough to see
      // the pacing, then stop it.
      while ((after().length < 4 || Date.now() - launchedAt < 31_000) && Date.now() - launchedAt < 50_000) await sleep(50);
      await pushctl(['cancel', sent.id], stackEnv);
    }
    const stats = emulator.stats();
    const all = deliveries.length >= devices;
    const decisions = after().map((t) => ({ t: (t.at - launchedAt) / 1000, reason: t.reason, rate: t.rate, remaining: t.remaining,
      p95Ms: t.gateway?.p95Ms ?? null, rps: t.gateway?.rps ?? null }));
    const firstWindow = decisions.find((x) => x.p95Ms !== null);
    return {
      order, devices, seconds: all ? (Math.max(...deliveries) - launchedAt) / 1000 : null, delivered: deliveries.length,
      deliveredBy: [10, 20, 30].map((s) => deliveries.filter((at) => at - launchedAt <= s * 1000).length),
      exactlyOnce: stats.published === stats.distinctTargets && (!all || stats.distinctTargets === devices),
      decisions, firstWindowAt: firstWindow ? firstWindow.t : null,
      peakP95Ms: Math.max(0, ...ticks.map((t) => t.gateway?.p95Ms ?? 0))
    };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        note(`cleanup failed: ${/** @type {Error} */ (error).message}`);
      }
    }
  }
}

/** "reason rate/s at t s", for the decisions after the launch. @param {ColdRun} run @param {number} [limit] */
function decisionsText(run, limit = 4) {
  const shown = run.decisions.slice(0, limit).map((x) => `${x.reason} ${x.rate >= 100 ? Math.round(x.rate) : x.rate.toFixed(1)}/s at ${x.t.toFixed(1)} s`);
  return shown.join(' → ') + (run.decisions.length > limit ? ' …' : '');
}

/**
 * The RESULTS.md section.
 * @param {Awaited<ReturnType<typeof benchColdStart>>} r
 */
export function formatColdStartSection(r) {
  const w = r.world;
  const int = (/** @type {number} */ v) => Math.round(v).toLocaleString('en-US');
  const s = (/** @type {number | null} */ v) => (v === null ? '–' : `${v.toFixed(1)} s`);
  const lines = [`### Cold start on the real stack (\`npm run bench -- cold-start\`)`,
    `Each run: a fresh key prefix (no metrics history, no governor journal, no model memory); the demo's modelled gateway (${w.gateway.processes} processes × ${w.gateway.serviceMs} ms, ` +
    `about 620 requests/s at the 320-ms setpoint) with ${w.baselineRps} requests/s from users nobody pushed; ${w.workers} workers (BullMQ), \`SEND_RATE\` ${CONTROLLER_DEFAULTS.safeRate} until the governor decides; ` +
    `the governor reading the gateway's /metrics (\`metrics-scrape\`, a decision every ${CONTROLLER_DEFAULTS.metricsWindowMs / 1000} s) with the default priors and \`PACING_CAPACITY_RPS=${w.capacityRps}\`; ` +
    `the SNS emulator; phones that open the app on the default priors' timing (${100 * w.wakeUp.openProbability}%, median ${w.wakeUp.openDelayMedianMs / 1000} s). ` +
    `**queued**: \`pushctl send\`, then the governor starts (its first decision knows the devices and has no gateway window: the cold-start rule's case); ` +
    `**live**: the governor starts and takes its first decision (which only primes the scrape), then \`pushctl send\`. Time from \`pushctl send\` to the last device delivered. ` +
    `${r.rounds} rounds; whole run ${(r.runtimeSeconds / 60).toFixed(1)} min.`, '',
    `| round | order | launch → all ${int(w.small)} delivered | exactly once | first gateway window | governor decisions after the launch (reason, rate, when) |`, '|---|---|---|---|---|---|'];
  r.results.forEach((x, i) => {
    for (const order of /** @type {Order[]} */ (['queued', 'live'])) {
      const run = x.small[order];
      lines.push(`| ${i + 1} | ${order} | ${s(run.seconds)} | ${run.exactlyOnce ? 'yes' : 'NO'} | ${s(run.firstWindowAt)} | ${decisionsText(run)} |`);
    }
  });
  for (const order of /** @type {Order[]} */ (['queued', 'live'])) {
    const m = r.small[order];
    lines.push(`| **median** | **${order}** | **${m.median.toFixed(1)} s** (${m.min.toFixed(1)}–${m.max.toFixed(1)}) | | | target < ${w.targetSeconds} s in every round: ${m.met ? 'met' : 'NOT met'} |`);
  }
  lines.push('', `Contrast: ${int(w.large)} devices, queued, watched for 31 s and at least four decisions, then cancelled. Its whole wake-up load at the prior's upper bound is ` +
    `20 × the 1,000's, over the rule's ${100 * CONTROLLER_DEFAULTS.coldStartShare}% of \`PACING_CAPACITY_RPS\`. Paced: no \`cold-start\` decision, the first one at the ` +
    `safe rate (${CONTROLLER_DEFAULTS.safeRate}/s), not all sent within ${w.targetSeconds} s.`, '',
    '| round | delivered by 10 s | by 20 s | by 30 s | governor decisions after the launch | peak p95 read | paced |', '|---|---|---|---|---|---|---|');
  r.results.forEach((x, i) => {
    const run = x.large;
    lines.push(`| ${i + 1} | ${int(run.deliveredBy[0])} | ${int(run.deliveredBy[1])} | ${int(run.deliveredBy[2])} | ${decisionsText(run, 5)} | ${int(run.peakP95Ms)} ms | ${r.paced[i] ? 'yes' : 'NO'} |`);
  });
  lines.push('');
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 3);
  const r = await benchColdStart({ rounds, note: (m) => console.error(`· ${m}`) });
  console.log(formatColdStartSection(r));
  process.exitCode = r.met ? 0 : 1;
}
