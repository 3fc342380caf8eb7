// Recovery after a worker dies (SIGKILL) mid-campaign: how much longer the campaign takes
// than the same campaign without the fault, and how many devices were sent twice. Two
// workers share a 12,000-device campaign at 1,000/s; one is killed once a quarter is sent.
// Its segments come back when RabbitMQ sees its connection close, or, on BullMQ, when its
// job locks (SEGMENT_LOCK_MS) lapse and a stall check finds them. The lock lengths are
// measured side by side, interleaved, in one run.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSnsEmulator } from '../emulator/sns-emulator.js';
import { loadConfig, DEFAULTS } from '../config/index.js';
import { SEGMENT_QUEUE, SEGMENT_BACKOFF_MS } from '../shared/queue/create-queue.js';
import { rabbitmqTopology, deleteTopology } from '../shared/queue/rabbitmq-topology.js';
import { benchPushctl, startNode, median, writeCampaignFiles } from './support.js';
import { dropPrefix } from './publish-throughput.js';

const DEVICES = 12_000;
const RATE = 1000;
const PUBLISH_CONCURRENCY = 16;

/**
 * @typedef {{ backend: 'bullmq' | 'rabbitmq', lockMs: number | null, kill: boolean }} Variant
 * @typedef {Variant & { seconds: number, duplicates: number, missed: number }} Run
 */

/** @param {{ rounds?: number, note?: (message: string) => void }} [options] */
export async function benchWorkerCrash({ rounds = 3, note = (/** @type {string} */ _m) => {} } = {}) {
  const emulator = createSnsEmulator();
  const url = await emulator.listen(0);
  const campaign = await writeCampaignFiles(DEVICES, 'crash-bench');
  const { audience, message } = campaign;

  /** @type {Variant[]} */
  const variants = [
    { backend: 'bullmq', lockMs: DEFAULTS.SEGMENT_LOCK_MS, kill: false },
    { backend: 'bullmq', lockMs: 30_000, kill: true },
    { backend: 'bullmq', lockMs: DEFAULTS.SEGMENT_LOCK_MS, kill: true },
    { backend: 'rabbitmq', lockMs: null, kill: false },
    { backend: 'rabbitmq', lockMs: null, kill: true }
  ];
  /** @type {Run[]} */
  const runs = [];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const variant of variants) {
        const run = await runOnce(variant, url, emulator, audience, message);
        note(`${variant.backend} lock ${variant.lockMs} ${variant.kill ? 'SIGKILL' : 'no fault'}: ${run.seconds.toFixed(1)} s, ${run.duplicates} duplicates`);
        runs.push(run);
      }
    }
  } finally {
    await emulator.close();
    await campaign.remove();
  }
  const same = (/** @type {Variant} */ v) => runs.filter((r) => r.backend === v.backend && r.lockMs === v.lockMs && r.kill === v.kill);
  const baseline = (/** @type {Variant['backend']} */ backend) => median(runs.filter((r) => r.backend === backend && !r.kill).map((r) => r.seconds));
  const rows = variants.map((v) => {
    const mine = same(v);
    const seconds = median(mine.map((r) => r.seconds));
    return {
      ...v, runs: mine, seconds, extraSeconds: seconds - baseline(v.backend),
      worstExtraSeconds: Math.max(...mine.map((r) => r.seconds)) - baseline(v.backend),
      maxDuplicates: Math.max(...mine.map((r) => r.duplicates)), missed: mine.reduce((sum, r) => sum + r.missed, 0)
    };
  });
  return { devices: DEVICES, rate: RATE, publishConcurrency: PUBLISH_CONCURRENCY, rounds, rows };
}

/**
 * One campaign with two workers, one of them killed a quarter of the way if `kill`.
 * @param {Variant} variant @param {string} url @param {ReturnType<typeof createSnsEmulator>} emulator
 * @param {string} audience @param {string} message
 * @returns {Promise<Run>}
 */
async function runOnce(variant, url, emulator, audience, message) {
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  /** @type {Record<string, string>} */
  const env = {
    KEY_PREFIX: prefix, SNS_ENDPOINT: url, SEND_RATE: String(RATE), SEGMENT_SIZE: '250', WORKER_CONCURRENCY: '2',
    PUBLISH_CONCURRENCY: String(PUBLISH_CONCURRENCY), QUEUE_BACKEND: variant.backend, LOG_LEVEL: 'info',
    ...(variant.lockMs === null ? {} : { SEGMENT_LOCK_MS: String(variant.lockMs) })
  };
  emulator.reset();
  const workers = [
    await startNode(['workers/worker.js'], env, /worker consuming segments/),
    await startNode(['workers/worker.js'], env, /worker consuming segments/)
  ];
  try {
    const started = performance.now();
    const sent = await benchPushctl(['send', '--audience', audience, '--message', message, '--yes', '--json'], { ...env, LOG_LEVEL: 'warn' });
    if (sent.code !== 0) throw new Error(`pushctl send failed: ${sent.stderr}`);
    if (variant.kill) {
      while (emulator.stats().published < DEVICES / 4) {
        if (performance.now() - started > 60_000) throw new Error(`a quarter not sent in 60 s: ${emulator.stats().published}; ${workers.map((w) => w.output().slice(-2000)).join('\n')}`);
        await sleep(20);
      }
      workers[0].child.kill('SIGKILL');
      await once(workers[0].child, 'exit');
    }
    // Done when every device has reached SNS; two minutes is far past any lock.
    while (emulator.stats().distinctTargets < DEVICES && performance.now() - started < 120_000) await sleep(20);
    if (emulator.stats().distinctTargets < DEVICES) console.error(`· ${variant.backend} ${variant.lockMs} kill=${variant.kill}: ${emulator.stats().distinctTargets} of ${DEVICES} after 120 s`);
    const seconds = (performance.now() - started) / 1000;
    const stats = emulator.stats();
    return { ...variant, seconds, duplicates: stats.published - stats.distinctTargets, missed: DEVICES - stats.distinctTargets };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await dropPrefix(prefix);
    if (variant.backend === 'rabbitmq') {
      const config = loadConfig(env);
      await deleteTopology(config.amqpUrl, rabbitmqTopology({ namespace: config.keyPrefix, name: SEGMENT_QUEUE,
        attempts: config.segmentAttempts, backoffMs: SEGMENT_BACKOFF_MS }));
    }
  }
}

/** @param {Awaited<ReturnType<typeof benchWorkerCrash>>} r */
export function formatWorkerCrashSection(r) {
  const label = (/** @type {Variant} */ v) => v.backend === 'rabbitmq' ? 'RabbitMQ' : `BullMQ, SEGMENT_LOCK_MS ${v.lockMs}${v.lockMs === DEFAULTS.SEGMENT_LOCK_MS ? ' (default)' : v.lockMs === 30_000 ? ' (the default before)' : ''}`;
  return [`### Recovery after a worker is killed (SIGKILL) mid-campaign`,
    `${r.devices.toLocaleString('en-US')} devices at ${r.rate}/s, two workers (2 segments of 250 each, ${r.publishConcurrency} publishes in flight per worker); ` +
    `one killed once a quarter was sent. Time from \`pushctl send\` until every device reached the emulator; "extra" against the same backend without the fault. ` +
    `${r.rounds} rounds, variants interleaved; medians.`, '',
    '| queue | fault | seconds per run | median | extra (median / worst) | most duplicates in a run | devices missed | target |', '|---|---|---|---|---|---|---|---|',
    ...r.rows.map((row) => {
      const target = row.kill && row.backend === 'bullmq'
        ? `extra < 20 s, duplicates ≤ ${r.publishConcurrency}: ${row.worstExtraSeconds < 20 && row.maxDuplicates <= r.publishConcurrency && row.missed === 0 ? 'met' : 'NOT met'}` : '';
      return `| ${label(row)} | ${row.kill ? 'SIGKILL' : 'none'} | ${row.runs.map((x) => x.seconds.toFixed(1)).join(', ')} | ${row.seconds.toFixed(1)} s | ` +
        `${row.kill ? `${row.extraSeconds.toFixed(1)} s / ${row.worstExtraSeconds.toFixed(1)} s` : '—'} | ${row.maxDuplicates} | ${row.missed} | ${target} |`;
    }), ''].join('\n');
}
