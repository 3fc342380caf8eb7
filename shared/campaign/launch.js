// A campaign launch, the one way there is: `pushctl send`, `pushctl schedule add` (its
// dry run) and the scheduler (each fire) all call these two functions.
//
//   prepareLaunch(request)  opens the audience, scans it once (storing nothing) and
//                           returns the plan: counts, release groups, deadline, estimate,
//                           and warnings as data. Bad input is refused here, so a dry
//                           run refuses what a launch would.
//   launch(plan)            creates the campaign and enqueues it (enqueue-campaign.js),
//                           and returns what was launched.
//
// Callers present the plan and its warnings as they like (pushctl prints them; the
// scheduler logs them); nothing is written to a terminal here.
import { EnqueueError, InputError } from '../errors.js';
import { createRedis } from '../redis.js';
import { openAudienceSource } from '../audience/open-source.js';
import { createCampaignStore } from './campaign-store.js';
import { estimateSeconds } from './campaign-progress.js';
import { deadlineFor } from './campaign-timing.js';
import { scanAudience, planReleases, enqueueCampaign } from './enqueue-campaign.js';

/** @typedef {import('./launch-request.js').LaunchRequest} LaunchRequest */
/** @typedef {import('./campaign-timing.js').CampaignTiming} CampaignTiming */
/** @typedef {import('./local-time.js').ReleaseGroup} ReleaseGroup */
/** @typedef {import('./campaign-store.js').CampaignStore} CampaignStore */
/** @typedef {import('../token-bucket.js').TokenBucket} TokenBucket */
/** @typedef {import('../types.js').Segment} Segment */

/**
 * Something the launch goes ahead with but a person should know.
 * @typedef {{ kind: 'invalid-lines', source: string, count: number, lines: { line: number, reason: string }[] }
 *   | { kind: 'after-deadline', devices: number, zones: string[], localTime: string }} LaunchWarning
 *   invalid-lines: skipped audience lines (the first 5 of `count`); after-deadline: devices
 *   whose zone reaches the local time only after the deadline, so they expire unsent
 */

/**
 * @typedef {object} LaunchPlan
 * @property {LaunchRequest} request
 * @property {string} sourceLabel          the audience file, or '--query'
 * @property {number} devices              devices that will be sent to
 * @property {number} skipped              invalid lines
 * @property {number} duplicates
 * @property {number} disabled             endpoints SNS disabled earlier, left out
 * @property {Record<string, number>} byPlatform
 * @property {ReleaseGroup[]} releases     one group at the start, or one per release instant with local time
 * @property {number} rate                 sends/s: the shared rate, capped by the request's maxRate
 * @property {number | null} estimatedSeconds
 * @property {LaunchWarning[]} warnings
 * @property {import('../audience/audience-reader.js').AudienceSource} source  the audience, still open
 * @property {() => Promise<void>} close   releases the audience (its PostgreSQL transaction); call it after launch or instead
 */

/**
 * @typedef {object} LaunchResult
 * @property {import('../types.js').Campaign} campaign  as stored once enqueued
 * @property {string} id
 * @property {number} devices
 * @property {number} skipped
 * @property {number} duplicates
 * @property {number} disabled
 * @property {number} rate
 * @property {number | null} estimatedSeconds
 */

/**
 * Checks a launch against its audience and the shared rate, storing nothing. Throws
 * InputError for what would make the campaign pointless or wrong: --strict with invalid
 * lines, no device to send to, a deadline before every device's release.
 * @param {LaunchRequest} request
 * @param {object} deps
 * @param {{ databaseUrl: string }} deps.config
 * @param {CampaignStore} deps.store
 * @param {TokenBucket} deps.bucket
 * @param {NodeJS.ReadableStream & { isTTY?: boolean }} [deps.stdin]  where `--audience -` is read (pushctl send)
 * @returns {Promise<LaunchPlan>}
 */
export async function prepareLaunch(request, { config, store, bucket, stdin }) {
  const opened = await openAudienceSource(request.audience, config, { stdin });
  try {
    const summary = await scanAudience(opened.source, store);
    if (request.strict && summary.skipped > 0) {
      const lines = summary.skippedLines.slice(0, 10).map((s) => `  ${opened.label} line ${s.line}: ${s.reason}`).join('\n');
      throw new InputError(`--strict: ${summary.skipped} invalid line(s) in ${opened.label}; nothing was enqueued\n${lines}`);
    }
    if (summary.devices === 0) throw new InputError(`${opened.label} has no device to send to (${summary.skipped} invalid, ${summary.disabled} disabled)`);
    /** @type {LaunchWarning[]} */
    const warnings = [];
    if (summary.skipped > 0) warnings.push({ kind: 'invalid-lines', source: opened.label, count: summary.skipped, lines: summary.skippedLines.slice(0, 5) });
    const releases = planReleases(summary.byTimezone, { ...request.timing, startAt: request.startAt ?? Date.now() });
    const late = lateGroups(releases, request.timing, summary.devices);
    if (late) warnings.push(late);

    const { rate: sharedRate } = await bucket.settings();
    const rate = request.maxRate ? Math.min(sharedRate, request.maxRate) : sharedRate;
    return {
      request,
      sourceLabel: opened.label,
      devices: summary.devices,
      skipped: summary.skipped,
      duplicates: summary.duplicates,
      disabled: summary.disabled,
      byPlatform: summary.byPlatform,
      releases,
      rate,
      estimatedSeconds: estimateSeconds(summary.devices, rate),
      warnings,
      source: opened.source,
      close: opened.close
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/**
 * Creates the campaign and enqueues it: the audience is read a second time, from the
 * plan's open source. Enqueueing that breaks off part-way marks the campaign failed
 * (over a fresh connection if the store's is gone) and throws EnqueueError saying so,
 * or saying what to run once Redis is back. Leaves the plan open: close it after.
 * @param {LaunchPlan} plan
 * @param {object} deps
 * @param {{ redis: import('../redis.js').RedisTarget, keyPrefix: string, campaignRetentionDays?: number, segmentSize: number }} deps.config
 * @param {CampaignStore} deps.store
 * @param {import('../types.js').QueueAdapter<Segment>} deps.queue
 * @param {import('pino').Logger} deps.logger
 * @param {AbortSignal} [deps.signal] stops enqueueing (Ctrl-C, or a scheduler that lost its claim)
 * @param {(campaign: { id: string }) => void} [deps.onCreated] told the id before the first segment is stored
 * @returns {Promise<LaunchResult>}
 */
export async function launch(plan, { config, store, queue, logger, signal, onCreated }) {
  const { request } = plan;
  signal?.throwIfAborted();
  // The plan may be minutes old (a confirmation prompt): a deadline that has passed
  // since would expire every device.
  const { deadlineAt } = request.timing;
  if (deadlineAt !== null && deadlineAt <= Date.now()) {
    throw new InputError(`the deadline ${new Date(deadlineAt).toISOString()} has passed; nothing was enqueued`);
  }
  try {
    const { campaign } = await enqueueCampaign({
      id: request.id, source: plan.source, message: request.message, name: request.name, kind: request.kind, sourceLabel: plan.sourceLabel,
      maxRate: request.maxRate, startAt: request.startAt, timing: request.timing, signal, onCreated
    }, { store, queue, segmentSize: config.segmentSize, logger });
    return {
      campaign,
      id: campaign.id,
      devices: campaign.total,
      skipped: campaign.skipped,
      duplicates: campaign.duplicates,
      disabled: campaign.excluded,
      rate: plan.rate,
      estimatedSeconds: estimateSeconds(campaign.total, plan.rate)
    };
  } catch (error) {
    if (error instanceof EnqueueError) await markEnqueueFailure(error, config);
    throw error;
  }
}

/**
 * The group of devices a deadline cuts off before their zone's release, as a warning;
 * refuses the launch when that is every device.
 * @param {ReleaseGroup[]} releases
 * @param {CampaignTiming} timing
 * @param {number} devices
 * @returns {LaunchWarning | null}
 */
function lateGroups(releases, timing, devices) {
  const late = releases.filter((group) => { const deadline = deadlineFor(timing, group.at); return deadline !== null && group.at >= deadline; });
  const lateDevices = late.reduce((n, group) => n + group.devices, 0);
  if (lateDevices === 0) return null;
  const zones = late.flatMap((group) => group.zones);
  const localTime = timing.localTime?.text ?? '';
  if (lateDevices === devices) {
    const shown = `${zones.slice(0, 5).join(', ')}${zones.length > 5 ? ', ...' : ''}`;
    throw new InputError(`--deadline ${new Date(/** @type {number} */ (timing.deadlineAt)).toISOString()} passes before ${localTime} comes in any ` +
      `device's time zone (${shown}); nothing would be sent, and nothing was enqueued`);
  }
  return { kind: 'after-deadline', devices: lateDevices, zones, localTime };
}

/**
 * Makes sure a half-enqueued campaign is failed (workers then drop it), trying a
 * fresh connection when the launch's own is gone, and says what to do if that fails too.
 * @param {EnqueueError} error
 * @param {{ redis: import('../redis.js').RedisTarget, keyPrefix: string, campaignRetentionDays?: number }} config
 */
async function markEnqueueFailure(error, config) {
  if (!error.marked) {
    const redis = createRedis(config.redis, { name: 'pushpace:pushctl-recovery' });
    const timeout = setTimeout(() => redis.disconnect(), 5000);
    error.marked = await createCampaignStore(redis, config).fail(error.campaignId, error.message).then(() => true, () => false);
    clearTimeout(timeout);
    redis.disconnect();
  }
  error.message = error.marked
    ? `${error.message}; campaign ${error.campaignId} was marked failed and nothing more of it will be sent`
    : `${error.message}; campaign ${error.campaignId} may be partly queued: once Redis is back, run: pushctl cancel ${error.campaignId}`;
}
