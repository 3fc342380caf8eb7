// pushctl status and list: reading campaigns.
import { setTimeout as sleep } from 'node:timers/promises';
import { campaignProgress, FINISHED_STATES } from '../../shared/campaign/campaign-progress.js';
import { formatDuration } from '../../shared/campaign/format-duration.js';
import { InputError } from '../../shared/errors.js';
import { formatCount, formatTable, progressLine, statusBlock } from './format.js';

/** @typedef {import('./context.js').Context} Context */
/** @typedef {import('../../shared/campaign/campaign-progress.js').CampaignProgress} CampaignProgress */
/** @typedef {{ stdout: NodeJS.WritableStream & { isTTY?: boolean, columns?: number }, stderr: NodeJS.WritableStream }} IO */

const WATCH_INTERVAL_MS = 1000;
// The achieved rate is averaged over this many seconds of samples.
const RATE_WINDOW_S = 5;
// Where the width of the terminal is unknown (a pipe, a CI log), lines fit the classic 80.
const DEFAULT_COLUMNS = 80;
// status --watch --exit-status: the campaign finished without completing.
const NOT_COMPLETED_EXIT_CODE = 3;

/**
 * @param {Context} ctx
 * @param {string} id
 * @param {{ json?: boolean, watch?: boolean, exitStatus?: boolean, intervalMs?: number }} options
 * @param {IO} io
 * @returns {Promise<number>} the exit code: with --watch --exit-status, 3 unless the campaign completed
 */
export async function status(ctx, id, options, io) {
  if (options.exitStatus && !options.watch) throw new InputError('--exit-status needs --watch: it reports how the campaign ended');
  if (!options.watch) {
    const campaign = await ctx.store.require(id);
    const releases = campaign.localTime ? await ctx.store.releases(id) : [];
    const progress = campaignProgress(campaign, { ...await ctx.bucket.settings(), releases });
    io.stdout.write(options.json ? JSON.stringify(progress) + '\n' : [statusBlock(progress), ...timingLines(progress)].join('\n') + '\n');
    return 0;
  }
  /** @type {import('../../shared/campaign/local-time.js').ReleaseGroup[] | null} the plan is fixed at launch: read once */
  let releases = null;
  /** @type {{ at: number, processed: number }[]} */
  const samples = [];
  const tty = Boolean(io.stdout.isTTY) && !options.json;
  while (true) {
    const campaign = await ctx.store.require(id);
    releases ??= campaign.localTime ? await ctx.store.releases(id) : [];
    const { rate } = await ctx.bucket.settings();
    const now = Date.now();
    const processed = campaign.delivered + campaign.disabled + campaign.failed;
    samples.push({ at: now, processed });
    while (samples.length > 1 && now - samples[0].at > RATE_WINDOW_S * 1000) samples.shift();
    const first = samples[0];
    const achievedRate = now - first.at >= 900 ? ((processed - first.processed) * 1000) / (now - first.at) : null;
    const progress = campaignProgress(campaign, { rate, now, achievedRate, releases });
    const done = FINISHED_STATES.has(campaign.state);
    // Laid out to the width read each time, so a resized terminal is followed: a line
    // longer than the terminal wraps, and \r then redraws only its last part.
    const columns = tty ? io.stdout.columns || DEFAULT_COLUMNS : DEFAULT_COLUMNS;
    const line = progressLine(progress, { columns, extra: timingSuffix(progress) });
    if (options.json) io.stdout.write(JSON.stringify(progress) + '\n');
    else if (tty) io.stdout.write(`\r\x1b[2K${line}${done ? '\n' : ''}`);
    else io.stdout.write(line + '\n');
    if (done) return options.exitStatus && campaign.state !== 'completed' ? NOT_COMPLETED_EXIT_CODE : 0;
    await sleep(options.intervalMs ?? WATCH_INTERVAL_MS);
  }
}

/**
 * The status block's lines about local-time release and the deadline, if the campaign has them.
 * @param {CampaignProgress} p
 */
function timingLines(p) {
  const lines = [];
  if (p.localTime) {
    const plan = `${p.localTime} in each device's time zone (default ${p.defaultTimezone}), ${formatCount(p.releases.length)} release group(s)`;
    lines.push(`local     ${plan}`);
    if (p.waiting) {
      lines.push(`waiting   ${formatCount(p.waiting.zones)} zone(s), ${formatCount(p.waiting.devices)} devices, next at ${p.waiting.nextAt} ` +
        `(${p.waiting.nextZones.slice(0, 3).join(', ')}${p.waiting.nextZones.length > 3 ? ', ...' : ''})`);
    }
  }
  if (p.deadlineAt || p.ttlSeconds !== null) {
    const ttl = p.ttlSeconds === null ? '' : `${p.deadlineAt ? '; ' : ''}time to live ${formatDuration(p.ttlSeconds)}${p.localTime ? ' from each group\'s release' : ''}`;
    const passed = p.deadlinePassed ? ' (passed)' : '';
    lines.push(`deadline  ${p.deadlineAt ?? ''}${passed}${ttl}`);
  }
  if (p.expired > 0) lines.push(`expired   ${formatCount(p.expired)} devices not reached before the deadline (never sent late)`);
  return lines;
}

/**
 * What the one-line progress view adds for deadlines and waiting groups.
 * @param {CampaignProgress} p
 * @returns {import('./format.js').LineField[]}
 */
function timingSuffix(p) {
  return [
    ...(p.expired > 0 ? [{ text: `expired ${formatCount(p.expired)}`, rank: 2 }] : []),
    ...(p.waiting ? [{ text: `waiting ${formatCount(p.waiting.devices)} in ${formatCount(p.waiting.zones)} zone(s), next ${p.waiting.nextAt}`, rank: 5 }] : [])
  ];
}

/**
 * @param {Context} ctx
 * @param {{ json?: boolean, limit?: number }} options
 * @param {IO} io
 */
export async function list(ctx, options, io) {
  const { rate } = await ctx.bucket.settings();
  // The newest, and every campaign still running however many came after it.
  const rows = (await ctx.store.list({ limit: options.limit ?? 50, withActive: true })).map((c) => campaignProgress(c, { rate }));
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
  io.stdout.write(formatTable([header, ...table]));
  return 0;
}
