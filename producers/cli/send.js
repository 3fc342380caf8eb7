// pushctl send: validate the audience and message, confirm, then launch the campaign.
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { InputError } from '../../shared/errors.js';
import { readMessageFile } from '../../shared/message.js';
import { scanAudience, launchCampaign, planReleases, EnqueueError } from '../../shared/campaign-launcher.js';
import { parseCampaignTiming, deadlineFor } from '../../shared/campaign-timing.js';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign-store.js';
import { estimateSeconds } from '../../shared/campaign-progress.js';
import { createSegmentQueue } from '../../shared/queue/create-queue.js';
import { openAudienceSource } from '../../shared/audience/open-source.js';
import { formatCount, formatDuration, formatRate } from './format.js';

/**
 * @typedef {object} SendOptions
 * @property {string} [audience]
 * @property {string} [query]
 * @property {string} [message]
 * @property {string} [name]
 * @property {string} [rate]
 * @property {boolean} [dryRun]
 * @property {boolean} [yes]
 * @property {boolean} [json]
 * @property {boolean} [strict]
 * @property {import('../../shared/types.js').Message} [messageContent] the message already parsed (a schedule's,
 *   stored when it was added) instead of reading the --message file, which then only names the campaign
 * @property {string} [id] the campaign id to create (the scheduler derives one per fire)
 * @property {AbortSignal} [signal] stops enqueueing, instead of Ctrl-C (the scheduler's: its claim on the fire was lost)
 * @property {string} [deadline] ISO 8601 time after which nothing is sent
 * @property {string} [ttl] a duration (90m, 2h) after the start (with --local-time: each zone's release) after which nothing is sent
 * @property {string} [localTime] HH:MM[:SS]: each device gets it at this time in its own time zone
 * @property {string} [defaultTimezone] the zone of devices without one (default DEFAULT_TIMEZONE)
 * @property {number} [startAt] ms: the instant --local-time and --ttl count from (the scheduler's fire time); default now
 */

/**
 * @param {import('./context.js').Context} ctx
 * @param {SendOptions} options
 * @param {{ stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream, stdin: NodeJS.ReadStream }} io
 */
export async function send(ctx, options, io) {
  if (!options.audience === !options.query) throw new InputError('send needs exactly one of --audience FILE or --query SQL');
  if (!options.message) throw new InputError('send needs --message FILE');
  const maxRate = options.rate === undefined ? null : Number(options.rate);
  if (maxRate !== null && !(Number.isFinite(maxRate) && maxRate > 0)) {
    throw new InputError(`--rate must be a positive number of sends per second, got "${options.rate}"`);
  }
  const timing = parseCampaignTiming(options, { now: Date.now(), defaultTimezone: ctx.config.defaultTimezone });
  // Where the plan counts from; the launch counts from the campaign's creation unless told a start.
  const startAt = options.startAt ?? Date.now();
  const message = options.messageContent ?? await readMessageFile(options.message);

  const source = await openAudienceSource(options, ctx.config);
  try {
    const summary = await scanAudience(source.source, ctx.store);
    if (options.strict && summary.skipped > 0) {
      const lines = summary.skippedLines.slice(0, 10).map((s) => `  ${source.label} line ${s.line}: ${s.reason}`).join('\n');
      throw new InputError(`--strict: ${summary.skipped} invalid line(s) in ${source.label}; nothing was enqueued\n${lines}`);
    }
    if (summary.devices === 0) throw new InputError(`${source.label} has no device to send to (${summary.skipped} invalid, ${summary.disabled} disabled)`);
    reportSkipped(summary, source.label, io.stderr);
    const releases = planReleases(summary.byTimezone, { ...timing, startAt });
    reportLateGroups(releases, timing, summary.devices, io.stderr);

    const { rate } = await ctx.bucket.settings();
    const effectiveRate = maxRate ? Math.min(rate, maxRate) : rate;
    const estimate = estimateSeconds(summary.devices, effectiveRate);
    if (options.dryRun) {
      const plan = { dryRun: true, devices: summary.devices, skipped: summary.skipped, duplicates: summary.duplicates,
        disabled: summary.disabled, byPlatform: summary.byPlatform, rate: effectiveRate, estimatedSeconds: estimate, ...timingSummary(releases, timing) };
      io.stdout.write(options.json ? JSON.stringify(plan) + '\n'
        : `dry run: would send to ${formatCount(summary.devices)} devices (${formatCount(summary.skipped)} invalid lines skipped, ` +
          `${formatCount(summary.duplicates)} duplicates, ${formatCount(summary.disabled)} disabled endpoints left out); ` +
          `about ${formatDuration(estimate)} at ${formatRate(effectiveRate)}.${describeTiming(releases, timing)} Nothing was enqueued.\n`);
      return 0;
    }
    if (summary.devices > ctx.config.confirmThreshold && !options.yes) {
      await confirm(`Send "${options.name ?? basename(options.message)}" to ${formatCount(summary.devices)} devices ` +
        `(about ${formatDuration(estimate)} at ${formatRate(effectiveRate)})? [y/N] `, io);
    }

    const queue = createSegmentQueue(ctx.config, ctx.logger);
    // Ctrl-C while enqueueing stops it and marks the campaign failed, so nothing half-queued is sent.
    const abort = new AbortController();
    const interrupt = () => abort.abort(new Error('interrupted'));
    if (!options.signal) process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
    const signal = options.signal ?? abort.signal;
    try {
      signal.throwIfAborted();
      const { campaign } = await launchCampaign({
        id: options.id,
        source: source.source, message, name: options.name ?? basename(options.message), sourceLabel: source.label, maxRate,
        signal, startAt: options.startAt, ...timing,
        onCreated: ({ id }) => { if (!options.json) io.stderr.write(`campaign ${id}: enqueueing ${formatCount(summary.devices)} devices...\n`); }
      }, { store: ctx.store, queue, segmentSize: ctx.config.segmentSize, logger: ctx.logger });
      io.stdout.write(options.json
        ? JSON.stringify({ id: campaign.id, devices: campaign.total, skipped: campaign.skipped, duplicates: campaign.duplicates,
          disabled: campaign.excluded, rate: effectiveRate, estimatedSeconds: estimateSeconds(campaign.total, effectiveRate),
          ...timingSummary(releases, timing) }) + '\n'
        : `${campaign.id}\n`);
      if (!options.json) io.stderr.write(`campaign ${campaign.id}: ${formatCount(campaign.total)} devices enqueued; follow it with: pushctl status ${campaign.id} --watch\n`);
    } catch (error) {
      if (error instanceof EnqueueError) await reportEnqueueFailure(error, ctx.config.redisUrl, ctx.config);
      throw error;
    } finally {
      process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
      await queue.close().catch(() => {});
    }
    return 0;
  } finally {
    await source.close();
  }
}

/**
 * Refuses a campaign none of whose devices could be sent before its deadline (every
 * zone's local time falls after it), and warns about the groups that will expire unsent.
 * @param {import('../../shared/local-time.js').ReleaseGroup[]} releases
 * @param {import('../../shared/campaign-timing.js').CampaignTiming} timing
 * @param {number} devices
 * @param {NodeJS.WritableStream} stderr
 */
function reportLateGroups(releases, timing, devices, stderr) {
  const late = releases.filter((group) => { const deadline = deadlineFor(timing, group.at); return deadline !== null && group.at >= deadline; });
  const lateDevices = late.reduce((n, group) => n + group.devices, 0);
  if (lateDevices === 0) return;
  const zones = late.flatMap((group) => group.zones);
  const shown = `${zones.slice(0, 5).join(', ')}${zones.length > 5 ? ', ...' : ''}`;
  if (lateDevices === devices) {
    throw new InputError(`--deadline ${new Date(/** @type {number} */ (timing.deadlineAt)).toISOString()} passes before ${timing.localTime} comes in any ` +
      `device's time zone (${shown}); nothing would be sent, and nothing was enqueued`);
  }
  stderr.write(`warning: ${formatCount(lateDevices)} devices in ${zones.length} time zone(s) (${shown}) reach ${timing.localTime} only after the ` +
    `deadline; they will be counted as expired and not sent\n`);
}

/**
 * The timing fields of send's --json and --dry-run --json answers.
 * @param {import('../../shared/local-time.js').ReleaseGroup[]} releases
 * @param {import('../../shared/campaign-timing.js').CampaignTiming} timing
 */
function timingSummary(releases, timing) {
  return {
    deadlineAt: timing.deadlineAt === null ? null : new Date(timing.deadlineAt).toISOString(),
    ttlSeconds: timing.ttlMs === null ? null : timing.ttlMs / 1000,
    localTime: timing.localTime,
    releases: timing.localTime === null ? [] : releases.map((group) => ({ at: new Date(group.at).toISOString(), zones: group.zones, devices: group.devices }))
  };
}

/**
 * The dry run's sentence about release groups and the deadline, or ''.
 * @param {import('../../shared/local-time.js').ReleaseGroup[]} releases
 * @param {import('../../shared/campaign-timing.js').CampaignTiming} timing
 */
function describeTiming(releases, timing) {
  const parts = [];
  if (timing.localTime !== null) {
    const first = releases[0];
    const last = releases[releases.length - 1];
    parts.push(` At ${timing.localTime} local time in ${formatCount(releases.length)} release group(s), ` +
      `from ${new Date(first.at).toISOString()} to ${new Date(last.at).toISOString()}.`);
  }
  if (timing.deadlineAt !== null) parts.push(` Nothing is sent after ${new Date(timing.deadlineAt).toISOString()}.`);
  if (timing.ttlMs !== null) parts.push(` Nothing is sent later than ${formatDuration(timing.ttlMs / 1000)} after ${timing.localTime === null ? 'the start' : 'each group\'s release'}.`);
  return parts.join('');
}

/**
 * Makes sure a half-enqueued campaign is failed (workers then drop it), trying a
 * fresh connection when pushctl's own is gone, and says what to do if that fails too.
 * @param {EnqueueError} error
 * @param {string} redisUrl
 * @param {{ keyPrefix: string }} config
 */
async function reportEnqueueFailure(error, redisUrl, config) {
  if (!error.marked) {
    const redis = createRedis(redisUrl, { name: 'pushpace:pushctl-recovery' });
    const timeout = setTimeout(() => redis.disconnect(), 5000);
    error.marked = await createCampaignStore(redis, config).fail(error.campaignId, error.message).then(() => true, () => false);
    clearTimeout(timeout);
    redis.disconnect();
  }
  error.message = error.marked
    ? `${error.message}; campaign ${error.campaignId} was marked failed and nothing more of it will be sent`
    : `${error.message}; campaign ${error.campaignId} may be partly queued: once Redis is back, run: pushctl cancel ${error.campaignId}`;
}

/**
 * @param {{ skipped: number, skippedLines: { line: number, reason: string }[] }} summary
 * @param {string} label
 * @param {NodeJS.WritableStream} stderr
 */
function reportSkipped(summary, label, stderr) {
  if (summary.skipped === 0) return;
  const shown = summary.skippedLines.slice(0, 5).map((s) => `  ${label} line ${s.line}: ${s.reason}`).join('\n');
  const more = summary.skipped > 5 ? `\n  ... and ${summary.skipped - 5} more` : '';
  stderr.write(`warning: skipping ${summary.skipped} invalid line(s) (use --strict to reject the campaign instead):\n${shown}${more}\n`);
}

/**
 * Asks on the terminal; refuses when there is no terminal to ask on.
 * @param {string} question
 * @param {{ stdin: NodeJS.ReadStream, stderr: NodeJS.WritableStream }} io
 */
async function confirm(question, io) {
  if (!io.stdin.isTTY) throw new InputError(`${question.replace(/ \[y\/N\] $/, '')}: confirmation needed and there is no terminal; add --yes`);
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = (await rl.question(question)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') throw new InputError('not confirmed; nothing was enqueued');
  } finally {
    rl.close();
  }
}
