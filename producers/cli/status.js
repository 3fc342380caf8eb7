// pushctl status, list and rate: reading campaigns and the bucket.
import { setTimeout as sleep } from 'node:timers/promises';
import { campaignProgress, FINISHED_STATES } from '../../shared/campaign-progress.js';
import { formatCount, formatDuration, formatRate, progressLine, statusBlock } from './format.js';

/** @typedef {import('./context.js').Context} Context */
/** @typedef {{ stdout: NodeJS.WritableStream & { isTTY?: boolean }, stderr: NodeJS.WritableStream }} IO */

const WATCH_INTERVAL_MS = 1000;
// The achieved rate is averaged over this many seconds of samples.
const RATE_WINDOW_S = 5;

/**
 * @param {Context} ctx
 * @param {string} id
 * @param {{ json?: boolean, watch?: boolean, intervalMs?: number }} options
 * @param {IO} io
 */
export async function status(ctx, id, options, io) {
  if (!options.watch) {
    const progress = campaignProgress(await ctx.store.require(id), await ctx.bucket.settings());
    io.stdout.write(options.json ? JSON.stringify(progress) + '\n' : statusBlock(progress) + '\n');
    return 0;
  }
  /** @type {{ at: number, processed: number }[]} */
  const samples = [];
  const tty = Boolean(io.stdout.isTTY) && !options.json;
  while (true) {
    const campaign = await ctx.store.require(id);
    const { rate } = await ctx.bucket.settings();
    const now = Date.now();
    const processed = campaign.delivered + campaign.disabled + campaign.failed;
    samples.push({ at: now, processed });
    while (samples.length > 1 && now - samples[0].at > RATE_WINDOW_S * 1000) samples.shift();
    const first = samples[0];
    const achievedRate = now - first.at >= 900 ? ((processed - first.processed) * 1000) / (now - first.at) : null;
    const progress = campaignProgress(campaign, { rate, now, achievedRate });
    const done = FINISHED_STATES.has(campaign.state);
    if (options.json) io.stdout.write(JSON.stringify(progress) + '\n');
    else if (tty) io.stdout.write(`\r\x1b[2K${progressLine(progress)}${done ? '\n' : ''}`);
    else io.stdout.write(progressLine(progress) + '\n');
    if (done) return 0;
    await sleep(options.intervalMs ?? WATCH_INTERVAL_MS);
  }
}

/**
 * @param {Context} ctx
 * @param {{ json?: boolean, limit?: number }} options
 * @param {IO} io
 */
export async function list(ctx, options, io) {
  const { rate } = await ctx.bucket.settings();
  const rows = (await ctx.store.list({ limit: options.limit ?? 50 })).map((c) => campaignProgress(c, { rate }));
  if (options.json) {
    io.stdout.write(JSON.stringify(rows) + '\n');
    return 0;
  }
  if (rows.length === 0) {
    io.stdout.write('no campaigns yet\n');
    return 0;
  }
  const header = ['ID', 'STATE', 'PROGRESS', 'SENT', 'FAILED', 'TOTAL', 'CREATED', 'NAME'];
  const table = rows.map((p) => [p.id, p.state, `${p.percent.toFixed(1)}%`, formatCount(p.delivered),
    formatCount(p.failed), formatCount(p.total), p.createdAt.slice(0, 19).replace('T', ' '), p.name]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  for (const row of [header, ...table]) io.stdout.write(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd() + '\n');
  return 0;
}

/**
 * Shows the bucket, or sets its rate (and burst) for every worker at once.
 * @param {Context} ctx
 * @param {string | undefined} newRate
 * @param {{ burst?: string, json?: boolean }} options
 * @param {IO} io
 */
export async function rate(ctx, newRate, options, io) {
  if (newRate !== undefined) {
    await ctx.bucket.set({ rate: Number(newRate), burst: options.burst === undefined ? undefined : Number(options.burst) });
  }
  const settings = await ctx.bucket.settings();
  io.stdout.write(options.json ? JSON.stringify(settings) + '\n'
    : `rate ${formatRate(settings.rate)}  burst ${settings.burst}  tokens granted so far ${formatCount(settings.granted)}` +
      `  (${formatDuration(1_000_000 / settings.rate)} per million devices)\n`);
  return 0;
}
