// pushctl send: validate the audience and message, confirm, then launch the campaign.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { InputError } from '../../shared/errors.js';
import { parseMessage } from '../../shared/message.js';
import { scanAudience, launchCampaign, EnqueueError } from '../../shared/campaign-launcher.js';
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
  const message = parseMessage(await readMessageFile(options.message), basename(options.message));

  const source = await openAudienceSource(options, ctx.config);
  try {
    const summary = await scanAudience(source.source, ctx.store);
    if (options.strict && summary.skipped > 0) {
      const lines = summary.skippedLines.slice(0, 10).map((s) => `  ${source.label} line ${s.line}: ${s.reason}`).join('\n');
      throw new InputError(`--strict: ${summary.skipped} invalid line(s) in ${source.label}; nothing was enqueued\n${lines}`);
    }
    if (summary.devices === 0) throw new InputError(`${source.label} has no device to send to (${summary.skipped} invalid, ${summary.disabled} disabled)`);
    reportSkipped(summary, source.label, io.stderr);

    const { rate } = await ctx.bucket.settings();
    const effectiveRate = maxRate ? Math.min(rate, maxRate) : rate;
    const estimate = estimateSeconds(summary.devices, effectiveRate);
    if (options.dryRun) {
      const plan = { dryRun: true, devices: summary.devices, skipped: summary.skipped, duplicates: summary.duplicates,
        disabled: summary.disabled, byPlatform: summary.byPlatform, rate: effectiveRate, estimatedSeconds: estimate };
      io.stdout.write(options.json ? JSON.stringify(plan) + '\n'
        : `dry run: would send to ${formatCount(summary.devices)} devices (${formatCount(summary.skipped)} invalid lines skipped, ` +
          `${formatCount(summary.duplicates)} duplicates, ${formatCount(summary.disabled)} disabled endpoints left out); ` +
          `about ${formatDuration(estimate)} at ${formatRate(effectiveRate)}. Nothing was enqueued.\n`);
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
    process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
    try {
      const { campaign } = await launchCampaign({
        source: source.source, message, name: options.name ?? basename(options.message), sourceLabel: source.label, maxRate,
        signal: abort.signal,
        onCreated: ({ id }) => { if (!options.json) io.stderr.write(`campaign ${id}: enqueueing ${formatCount(summary.devices)} devices...\n`); }
      }, { store: ctx.store, queue, segmentSize: ctx.config.segmentSize, logger: ctx.logger });
      io.stdout.write(options.json
        ? JSON.stringify({ id: campaign.id, devices: campaign.total, skipped: campaign.skipped, duplicates: campaign.duplicates,
          disabled: campaign.excluded, rate: effectiveRate, estimatedSeconds: estimateSeconds(campaign.total, effectiveRate) }) + '\n'
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

/** @param {string} path */
async function readMessageFile(path) {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const reason = /** @type {any} */ (error).code === 'ENOENT' ? 'no such file' : /** @type {Error} */ (error).message;
    throw new InputError(`--message ${path}: cannot read the file (${reason})`, { cause: error });
  }
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
