// Gauges of state every process shares through Redis (and the queue): the token bucket,
// the segment queue and campaign progress. Read at scrape time, once per scrape for the
// whole group, so they are never older than the scrape. Every process that exports them
// reports the same values: aggregate with max (the Grafana dashboard does), not sum.
import { campaignProgress, FINISHED_STATES } from '../campaign/campaign-progress.js';
import { bucketMetrics, campaignMetrics, queueMetrics, CAMPAIGN_STATES, MAX_CAMPAIGN_SERIES } from './registry.js';

// A campaign keeps its series this long after finishing, so its final numbers are scraped.
const RECENTLY_FINISHED_MS = 5 * 60_000;
// Reads slower than this give up: a scrape must answer even while Redis or the broker is down.
const READ_TIMEOUT_MS = 2000;
// One scrape reads every gauge of the group; concurrent reads within this window share one.
const SHARE_MS = 500;

/**
 * Registers the shared-state gauges on `registry`.
 * @param {import('./registry.js').MetricsRegistry} registry
 * @param {object} sources  what this process has at hand; groups without a source are left out
 * @param {Pick<import('../token-bucket.js').TokenBucket, 'settings'>} sources.bucket
 * @param {import('../campaign/campaign-store.js').CampaignStore} [sources.store]
 * @param {Pick<import('../types.js').QueueAdapter, 'counts'>} [sources.queue]
 * @param {import('pino').Logger} [sources.logger]
 */
export function registerClusterState(registry, { bucket, store, queue, logger }) {
  /** @type {Promise<void> | null} */
  let reading = null;
  let readAt = 0;
  let warned = false;
  const refresh = () => {
    if (!reading || Date.now() - readAt > SHARE_MS) {
      readAt = Date.now();
      reading = read();
    }
    return reading;
  };
  const b = bucketMetrics(registry, refresh);
  const q = queue ? queueMetrics(registry, refresh) : null;
  const c = store ? campaignMetrics(registry, refresh) : null;

  async function read() {
    const [settings, counts, campaigns] = await Promise.all([
      bounded(bucket.settings()), q && queue ? bounded(queue.counts()) : null,
      // Every campaign not finished, however old (the store's index), and those just finished.
      c && store ? bounded(store.current({ finishedWithinMs: RECENTLY_FINISHED_MS })) : null
    ]);
    const failed = [settings, counts, campaigns].some((r) => r instanceof Error);
    if (failed && !warned) logger?.warn({ err: [settings, counts, campaigns].find((r) => r instanceof Error) }, 'reading shared state for /metrics failed');
    warned = failed;
    const progress = c && store && campaigns && !(campaigns instanceof Error) && !(settings instanceof Error)
      ? await campaignProgresses(store, campaigns, settings.rate) : null;
    // From here on nothing is awaited: a concurrent scrape never sees the gauges reset and
    // not yet set again. A value that could not be read is left out (or NaN) rather than
    // repeated: stale numbers would look current.
    b.granted.reset();
    b.rate.set(NaN);
    b.burst.set(NaN);
    if (!(settings instanceof Error)) {
      b.rate.set(settings.rate);
      b.burst.set(settings.burst);
      b.granted.inc({ lane: 'campaign' }, settings.granted);
      b.granted.inc({ lane: 'transactional' }, settings.grantedTransactional);
    }
    if (q) {
      q.depth.reset();
      q.dead.reset();
      if (counts && !(counts instanceof Error)) {
        for (const state of /** @type {const} */ (['waiting', 'active', 'delayed'])) q.depth.set({ state }, counts[state]);
        q.dead.set(counts.dead);
      } else {
        q.dead.set(NaN);
      }
    }
    if (c) {
      for (const gauge of Object.values(c)) gauge.reset();
      if (progress && campaigns && !(campaigns instanceof Error)) setCampaigns(c, campaigns, progress);
    }
  }
}

/**
 * The progress of the campaigns that get series of their own: active ones and those
 * finished in the last minutes, at most MAX_CAMPAIGN_SERIES (the bound on the label).
 * @param {import('../campaign/campaign-store.js').CampaignStore} store
 * @param {import('../types.js').Campaign[]} campaigns active and recently finished, newest first
 * @param {number} rate
 */
async function campaignProgresses(store, campaigns, rate) {
  const now = Date.now();
  // A cancelled campaign has no finishedAt until its last segment is dropped: it is still winding down.
  const ongoing = (/** @type {import('../types.js').Campaign} */ x) => !FINISHED_STATES.has(x.state) || (x.state === 'cancelled' && x.finishedAt === null);
  // Ongoing campaigns first, however old: a burst of short campaigns that just finished must
  // not take every series away from the one still sending.
  const shown = [...campaigns.filter(ongoing), ...campaigns.filter((x) => !ongoing(x) && (x.finishedAt === null || now - x.finishedAt < RECENTLY_FINISHED_MS))]
    .slice(0, MAX_CAMPAIGN_SERIES);
  // A local-time campaign's ETA depends on its release plan, as in pushctl status.
  const plans = await Promise.all(shown.map((x) => (x.localTime ? bounded(store.releases(x.id)) : [])));
  return shown.map((campaign, i) => {
    const plan = plans[i];
    return campaignProgress(campaign, { rate, now, releases: plan instanceof Error ? [] : plan });
  });
}

/**
 * @param {ReturnType<typeof campaignMetrics>} c
 * @param {import('../types.js').Campaign[]} campaigns active and recently finished, newest first
 * @param {ReturnType<typeof campaignProgress>[]} progress
 */
function setCampaigns(c, campaigns, progress) {
  c.active.set({ state: 'running' }, campaigns.filter((x) => x.state === 'running').length);
  c.active.set({ state: 'paused' }, campaigns.filter((x) => x.state === 'paused').length);
  for (const p of progress) {
    const labels = { campaign: p.id };
    const statuses = { delivered: p.delivered, disabled: p.disabled, failed: p.failed, expired: p.expired, cancelled: p.cancelled, remaining: p.remaining };
    for (const [status, value] of Object.entries(statuses)) c.devices.set({ ...labels, status }, value);
    c.audience.set(labels, p.total);
    c.progress.set(labels, p.percent / 100);
    if (p.etaSeconds !== null && Number.isFinite(p.etaSeconds)) c.eta.set(labels, p.etaSeconds);
    for (const state of CAMPAIGN_STATES) c.state.set({ ...labels, state }, state === p.state ? 1 : 0);
  }
}

/**
 * The promise's value, or the error it failed with (or a timeout).
 * @template T
 * @param {Promise<T>} promise
 * @returns {Promise<T | Error>}
 */
async function bounded(promise) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  try {
    return await Promise.race([promise, new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
    })]);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    clearTimeout(timer);
  }
}
