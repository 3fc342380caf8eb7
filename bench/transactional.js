// Transactional events while a campaign sends at the full rate: 1,000 events
// published at random times must reach SNS with p99 ≤ 2 s from publish, and
// campaign + transactional sends together must stay within 5% of the bucket
// rate in every 1-second window. The emulator runs in this process so every
// delivery is timed as it happens.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import amqplib from 'amqplib';
import { createSnsEmulator } from '../emulator/sns-emulator.js';
import { benchPushctl, startNode, writeCampaignFiles, benchArn } from './support.js';
import { dropPrefix } from './publish-throughput.js';

const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const TX_APP = 'tx-bench';

/**
 * @param {{ rate?: number, campaignDevices?: number, events?: number, spreadSeconds?: number }} [options]
 */
export async function benchTransactional({ rate = 1000, campaignDevices = 70_000, events = 1000, spreadSeconds = 45 } = {}) {
  /** @type {number[]} */
  const deliveries = []; // every delivery time, campaign and transactional alike
  /** @type {number[]} */
  const campaignDeliveries = [];
  /** @type {Map<string, number>} */
  const txDelivered = new Map();
  const emulator = createSnsEmulator({
    onDelivery(targetArn, at) {
      deliveries.push(at);
      if (!targetArn.includes(`/${TX_APP}/`)) campaignDeliveries.push(at);
      else if (!txDelivered.has(targetArn)) txDelivered.set(targetArn, at);
    }
  });
  const url = await emulator.listen(0);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const env = {
    KEY_PREFIX: prefix, SNS_ENDPOINT: url, SEND_RATE: String(rate), SEND_BURST: String(Math.ceil(rate / 50)),
    TRANSACTIONAL_SHARE: '0.1', EVENTS_EXCHANGE: `${prefix}.events`, EVENTS_QUEUE: `${prefix}.ingest`, LOG_LEVEL: 'warn'
  };
  const campaign = await writeCampaignFiles(campaignDevices, 'campaign-bench');
  const { audience, message } = campaign;

  const worker = await startNode(['workers/worker.js'], { ...env, LOG_LEVEL: 'info' }, /worker consuming segments/);
  const ingest = await startNode(['producers/ingest.js'], { ...env, LOG_LEVEL: 'info' }, /consuming|listening|ready/i);
  const connection = await amqplib.connect(AMQP_URL);
  const channel = await connection.createConfirmChannel();
  /** @type {Map<string, number>} */
  const publishedAt = new Map();
  let eventsFrom = 0;
  let eventsUntil = 0;
  try {
    await channel.assertExchange(env.EVENTS_EXCHANGE, 'topic', { durable: true });
    const sent = await benchPushctl(['send', '--audience', audience, '--message', message, '--yes', '--json'], env);
    if (sent.code !== 0) throw new Error(`pushctl send failed: ${sent.stderr}`);
    while (deliveries.length < rate * 3) await sleep(100); // the campaign is at full speed

    const start = performance.timeOrigin + performance.now();
    eventsFrom = start;
    const offsets = Array.from({ length: events }, () => Math.random() * spreadSeconds * 1000).sort((a, b) => a - b);
    for (let i = 0; i < events; i++) {
      const due = start + offsets[i];
      const wait = due - (performance.timeOrigin + performance.now());
      if (wait > 0) await sleep(wait);
      const arn = benchArn(TX_APP, i);
      const event = { id: `evt-${i}`, type: 'list.shared', endpointArns: [arn], idempotencyKey: `${prefix}-${i}`,
        message: { title: 'Anna shared a list', body: 'Weekend groceries' } };
      publishedAt.set(arn, performance.timeOrigin + performance.now());
      channel.publish(env.EVENTS_EXCHANGE, 'notification.list-shared', Buffer.from(JSON.stringify(event)),
        { persistent: true, contentType: 'application/json', timestamp: Math.floor(Date.now() / 1000) });
    }
    await channel.waitForConfirms();
    eventsUntil = performance.timeOrigin + performance.now();
    for (let i = 0; i < 100 && txDelivered.size < events; i++) await sleep(100);
  } finally {
    await pushctlCancelAll(env);
    await channel.deleteExchange(env.EVENTS_EXCHANGE).catch(() => {});
    await connection.close().catch(() => {});
    await Promise.all([worker.stop(), ingest.stop()]);
    await emulator.close();
    await campaign.remove();
    await dropPrefix(prefix);
    await deleteQueues(env.EVENTS_QUEUE);
  }

  const latencies = [...publishedAt].map(([arn, at]) => (txDelivered.get(arn) ?? Infinity) - at).sort((a, b) => a - b);
  const quantile = (/** @type {number} */ q) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)];
  return {
    rate, events, delivered: txDelivered.size,
    p50Ms: quantile(0.5), p95Ms: quantile(0.95), p99Ms: quantile(0.99), maxMs: latencies[latencies.length - 1],
    maxWindow: maxPerSecond(deliveries),
    // the campaign's own pace while events were arriving: it keeps the rest of the rate
    campaignRate: (campaignDeliveries.filter((at) => at >= eventsFrom && at < eventsUntil).length * 1000) / (eventsUntil - eventsFrom)
  };
}

/** The most deliveries in any sliding 1-second window. @param {number[]} times */
function maxPerSecond(times) {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi] - sorted[lo] >= 1000) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** Cancels whatever the bench's campaign has left, so the worker can stop at once. @param {Record<string, string>} env */
async function pushctlCancelAll(env) {
  const listed = await benchPushctl(['list', '--json'], env);
  for (const campaign of JSON.parse(listed.stdout || '[]')) {
    if (campaign.state === 'running') await benchPushctl(['cancel', campaign.id], env);
  }
}

/** @param {string} queue */
async function deleteQueues(queue) {
  const connection = await amqplib.connect(AMQP_URL);
  const channel = await connection.createChannel();
  for (const name of [queue, `${queue}.retry`, `${queue}.dead`]) await channel.deleteQueue(name).catch(() => {});
  await connection.close().catch(() => {});
}
