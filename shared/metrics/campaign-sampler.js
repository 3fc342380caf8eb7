// Samples every active campaign's progress into its Redis series (series-store.js) every
// SAMPLE_INTERVAL_MS, for the dashboard's send-rate chart. Workers and web processes all
// run one; a slot key taken with SET NX lets exactly one of them sample each interval, so
// the series has one point per interval however many processes run, and keeps being
// written while any of them is up.
import { randomUUID } from 'node:crypto';
import { campaignProgress, FINISHED_STATES } from '../campaign/campaign-progress.js';

// One point a second: a live chart, at the cost of one SET NX per process and one XADD per
// active campaign each second.
export const SAMPLE_INTERVAL_MS = 1000;
// A finished campaign gets its final point within this long of finishing.
const FINAL_POINT_WINDOW_MS = 60_000;
// A governor decision older than this no longer describes the gateway (3 of its default windows).
const GATEWAY_MAX_AGE_MS = 30_000;

/**
 * @param {object} deps
 * @param {import('../redis.js').RedisClient} deps.redis
 * @param {import('../campaign/campaign-store.js').CampaignStore} deps.store
 * @param {Pick<import('../token-bucket.js').TokenBucket, 'settings'>} deps.bucket
 * @param {import('./series-store.js').SeriesStore} deps.series
 * @param {import('./campaign-history.js').CampaignHistory} [deps.history]  also writes each campaign's report history when given
 * @param {import('pino').Logger} deps.logger
 * @param {number} [deps.intervalMs]
 */
export function createCampaignSampler({ redis, store, bucket, series, history, logger, intervalMs = SAMPLE_INTERVAL_MS }) {
  const holder = randomUUID();
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  let stopped = true;
  let failing = false;

  /** Takes this interval's slot and, if it got it, writes one point per active campaign. */
  async function sampleOnce() {
    // The slot expires a little before the next interval, so a stalled sampler never blocks the others.
    const won = await redis.set(series.keys.samplerSlot, holder, 'PX', Math.max(1, Math.floor(intervalMs * 0.8)), 'NX');
    if (won !== 'OK') return false;
    const now = Date.now();
    // Every campaign not finished, however old (the store's index), and those just finished, for their final point.
    const [campaigns, { rate }] = await Promise.all([store.current({ finishedWithinMs: FINAL_POINT_WINDOW_MS, now }), bucket.settings()]);
    const samples = [];
    /** @type {Parameters<import('./campaign-history.js').CampaignHistory['append']>[0]} */
    const historySamples = [];
    for (const campaign of campaigns) {
      const finished = FINISHED_STATES.has(campaign.state);
      if (finished && !(campaign.finishedAt && now - campaign.finishedAt < FINAL_POINT_WINDOW_MS)) continue;
      const p = campaignProgress(campaign, { rate, now });
      if (finished) {
        // One final point, so the chart ends where the campaign did, its limit stopped (0): not
        // skipped when only the count is the last point's, or a campaign whose last sends were
        // sampled while it ran would keep its running limit on the chart.
        const last = await series.lastCampaignPoint(campaign.id);
        if (last && last.processed === p.processed && last.rateLimit === 0) continue;
      }
      const rateLimit = finished ? 0 : (campaign.state === 'running' ? p.rate : 0);
      samples.push({ id: campaign.id, processed: p.processed, rateLimit });
      historySamples.push({ id: campaign.id, startAt: campaign.startAt, processed: p.processed, rateLimit, p95Ms: null, sloMs: null, final: finished });
    }
    await series.appendCampaigns(samples);
    if (history && historySamples.length > 0) {
      // The gateway as the governor last saw it, if it still describes it.
      const governor = await series.lastGovernorPoint();
      const gateway = governor && now - governor.t <= GATEWAY_MAX_AGE_MS ? governor : null;
      await history.append(historySamples.map((h) => ({ ...h, p95Ms: gateway?.p95Ms ?? null, sloMs: gateway?.sloMs ?? null })), now);
    }
    return true;
  }

  function loop() {
    if (stopped) return;
    sampleOnce().then(() => {
      if (failing) logger.info('campaign sampling works again');
      failing = false;
    }, (error) => {
      if (!failing) logger.warn({ err: error }, 'sampling campaign progress for the dashboard failed; will retry');
      failing = true;
    }).finally(() => {
      // Aligned to the interval's grid, so the slot key sees every process at about the same moment.
      if (!stopped) timer = setTimeout(loop, intervalMs - (Date.now() % intervalMs));
    });
  }

  return {
    sampleOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      loop();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    }
  };
}
