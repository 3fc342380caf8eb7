// pushctl send: validate the audience and message, confirm, then launch the campaign.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { InputError } from '../../shared/errors.js';
import { parseMessage } from '../../shared/message.js';
import { scanAudience, launchCampaign } from '../../shared/campaign-launcher.js';
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
    try {
      const { campaign } = await launchCampaign({
        source: source.source, message, name: options.name ?? basename(options.message), sourceLabel: source.label, maxRate
      }, { store: ctx.store, queue, segmentSize: ctx.config.segmentSize, logger: ctx.logger });
      io.stdout.write(options.json
        ? JSON.stringify({ id: campaign.id, devices: campaign.total, skipped: campaign.skipped, duplicates: campaign.duplicates,
          disabled: campaign.excluded, rate: effectiveRate, estimatedSeconds: estimateSeconds(campaign.total, effectiveRate) }) + '\n'
        : `${campaign.id}\n`);
      if (!options.json) io.stderr.write(`campaign ${campaign.id}: ${formatCount(campaign.total)} devices enqueued; follow it with: pushctl status ${campaign.id} --watch\n`);
    } finally {
      await queue.close();
    }
    return 0;
  } finally {
    await source.close();
  }
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
