// pushctl send: validate the audience and message, confirm, then launch the campaign
// (shared/campaign/launch.js). This file only parses, asks and prints.
import { createInterface } from 'node:readline/promises';
import { InputError } from '../../shared/errors.js';
import { parseLaunchRequest } from '../../shared/campaign/launch-request.js';
import { prepareLaunch, launch } from '../../shared/campaign/launch.js';
import { createSegmentQueue } from '../../shared/queue/create-queue.js';
import { formatDuration } from '../../shared/campaign/format-duration.js';
import { formatCount, formatRate, formatWarning } from './format.js';
import { forecastLaunch, forecastJson, describeForecast } from './forecast.js';
import { firstSendAt, keepForecast } from '../../shared/forecast/launch-forecast.js';

/**
 * pushctl send's options: the launch's (LaunchOptions) and how to answer.
 * @typedef {import('../../shared/campaign/launch-request.js').LaunchOptions & { dryRun?: boolean, yes?: boolean, json?: boolean }} SendOptions
 */

/**
 * @param {import('./context.js').Context} ctx
 * @param {SendOptions} options
 * @param {{ stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream, stdin: NodeJS.ReadStream }} io
 */
export async function send(ctx, options, io) {
  const request = await parseLaunchRequest(options, { command: 'send', now: Date.now(), defaultTimezone: ctx.config.defaultTimezone });
  const plan = await prepareLaunch(request, { config: ctx.config, store: ctx.store, bucket: ctx.bucket, stdin: io.stdin });
  try {
    for (const warning of plan.warnings) io.stderr.write(formatWarning(warning));
    const { timing } = request;
    const madeAt = Date.now();
    const forecast = await forecastLaunch(ctx, {
      devices: plan.devices, rate: plan.rate, maxRate: request.maxRate, kind: request.kind, startAt: firstSendAt(request, plan, madeAt)
    });
    if (options.dryRun) {
      const answer = { dryRun: true, devices: plan.devices, skipped: plan.skipped, duplicates: plan.duplicates,
        disabled: plan.disabled, byPlatform: plan.byPlatform, rate: plan.rate, estimatedSeconds: plan.estimatedSeconds, ...timingSummary(plan.releases, timing),
        forecast: forecastJson(forecast) };
      io.stdout.write(options.json ? JSON.stringify(answer) + '\n'
        : `dry run: would send to ${formatCount(plan.devices)} devices (${formatCount(plan.skipped)} invalid lines skipped, ` +
          `${formatCount(plan.duplicates)} duplicates, ${formatCount(plan.disabled)} disabled endpoints left out).` +
          `${describeTiming(plan.releases, timing)} ${describeForecast(forecast)} Nothing was enqueued.\n`);
      return 0;
    }
    if (plan.devices > ctx.config.confirmThreshold && !options.yes) {
      await confirm(`Send "${request.name}" to ${formatCount(plan.devices)} devices ` +
        `(about ${formatDuration(plan.estimatedSeconds)} at ${formatRate(plan.rate)})? [y/N] `, io);
    }

    const queue = createSegmentQueue(ctx.config, ctx.logger);
    // Ctrl-C while enqueueing stops it and marks the campaign failed, so nothing half-queued is sent.
    const abort = new AbortController();
    const interrupt = () => abort.abort(new Error('interrupted'));
    process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
    try {
      const result = await launch(plan, {
        config: ctx.config, store: ctx.store, queue, logger: ctx.logger, signal: abort.signal,
        onCreated: ({ id }) => { if (!options.json) io.stderr.write(`campaign ${id}: enqueueing ${formatCount(plan.devices)} devices...\n`); }
      });
      // Kept with the campaign: pushctl report compares it with what happened.
      await keepForecast(ctx.redis, ctx.config.keyPrefix, result.id, forecast, madeAt)
        .catch((error) => ctx.logger.warn({ err: error }, 'storing the forecast with the campaign failed'));
      io.stdout.write(options.json
        ? JSON.stringify({ id: result.id, devices: result.devices, skipped: result.skipped, duplicates: result.duplicates,
          disabled: result.disabled, rate: result.rate, estimatedSeconds: result.estimatedSeconds, ...timingSummary(plan.releases, timing),
          forecast: forecastJson(forecast) }) + '\n'
        : `${result.id}\n`);
      if (!options.json) io.stderr.write(`campaign ${result.id}: ${formatCount(result.devices)} devices enqueued; follow it with: pushctl status ${result.id} --watch\n`);
    } finally {
      process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
      await queue.close().catch(() => {});
    }
    return 0;
  } finally {
    await plan.close();
  }
}

/**
 * The timing fields of send's --json and --dry-run --json answers.
 * @param {import('../../shared/campaign/local-time.js').ReleaseGroup[]} releases
 * @param {import('../../shared/campaign/campaign-timing.js').CampaignTiming} timing
 */
function timingSummary(releases, timing) {
  return {
    deadlineAt: timing.deadlineAt === null ? null : new Date(timing.deadlineAt).toISOString(),
    ttlSeconds: timing.ttlMs === null ? null : timing.ttlMs / 1000,
    localTime: timing.localTime?.text ?? null,
    releases: timing.localTime === null ? [] : releases.map((group) => ({ at: new Date(group.at).toISOString(), zones: group.zones, devices: group.devices }))
  };
}

/**
 * The dry run's sentence about release groups and the deadline, or ''.
 * @param {import('../../shared/campaign/local-time.js').ReleaseGroup[]} releases
 * @param {import('../../shared/campaign/campaign-timing.js').CampaignTiming} timing
 */
function describeTiming(releases, timing) {
  const parts = [];
  if (timing.localTime !== null) {
    const first = releases[0];
    const last = releases[releases.length - 1];
    parts.push(` At ${timing.localTime.text} local time in ${formatCount(releases.length)} release group(s), ` +
      `from ${new Date(first.at).toISOString()} to ${new Date(last.at).toISOString()}.`);
  }
  if (timing.deadlineAt !== null) parts.push(` Nothing is sent after ${new Date(timing.deadlineAt).toISOString()}.`);
  if (timing.ttlMs !== null) parts.push(` Nothing is sent later than ${formatDuration(timing.ttlMs / 1000)} after ${timing.localTime === null ? 'the start' : 'each group\'s release'}.`);
  return parts.join('');
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
