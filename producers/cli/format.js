// Human-readable output for pushctl: durations, counts, tables and the progress bar.

import { formatDuration } from '../../shared/campaign/format-duration.js';

/** @typedef {import('../../shared/campaign/campaign-progress.js').CampaignProgress} CampaignProgress */

/** @param {number} n */
export const formatCount = (n) => n.toLocaleString('en-US');

/** @param {number} rate */
export const formatRate = (rate) => `${rate >= 100 ? Math.round(rate) : Number(rate.toFixed(1))}/s`;

/**
 * Rows as a table: each column as wide as its widest cell, two spaces between columns,
 * no trailing blanks; one line per row, each ending in a line feed.
 * @param {string[][]} rows the header first
 */
export function formatTable(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  return rows.map((row) => row.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd() + '\n').join('');
}

// The bar's width: 24 cells where there is room, never under 8 (below that it says
// nothing the percentage does not).
const BAR_WIDTH = 24;
const MIN_BAR_WIDTH = 8;

/**
 * A part of the progress line, and how much it is needed when the line must be shortened:
 * parts of the highest rank go first.
 * @typedef {{ text: string, rank: number }} LineField
 */

/**
 * One line: a bar, the counts, the rate and the ETA (or the state), then `extra`. With
 * `columns`, laid out to fit a terminal that wide (one column is kept free: some
 * terminals wrap at the last): the bar narrows, then the least needed parts are left
 * out (disabled, total, waiting, rate, the bar, failed...), and only what still does not
 * fit is cut.
 * @param {CampaignProgress} p
 * @param {{ columns?: number, extra?: LineField[] }} [options]
 */
export function progressLine(p, { columns = Infinity, extra = [] } = {}) {
  const total = p.enqueued ? formatCount(p.total) : `${formatCount(p.total)}+`;
  const rate = p.state === 'completed' ? `${formatRate(p.averageRate)} average`
    : p.achievedRate === null ? formatRate(p.rate) : `${formatRate(p.achievedRate)} (limit ${formatRate(p.rate)})`;
  const tail = p.state === 'running' ? `ETA ${formatDuration(p.etaSeconds)}` : p.state;
  const percent = { text: `${p.percent.toFixed(1).padStart(5)}%`, rank: 0 };
  /** @type {LineField[]} in the order shown, the percentage after the bar */
  let fields = [
    { text: `sent ${formatCount(p.delivered)}`, rank: 1 },
    { text: `failed ${formatCount(p.failed)}`, rank: 2 },
    { text: `disabled ${formatCount(p.disabled)}`, rank: 7 },
    { text: `total ${total}`, rank: 6 },
    { text: `rate ${rate}`, rank: 4 },
    { text: tail, rank: 1 },
    ...extra
  ];
  let bar = true;
  const BAR_RANK = 3;
  const max = columns - 1;
  // Without the bar: the percentage, then each part after two spaces.
  const length = () => [percent, ...fields].reduce((sum, f) => sum + f.text.length, 0) + 2 * fields.length;
  while (length() + (bar ? MIN_BAR_WIDTH + 1 : 0) > max) {
    const worst = Math.max(...fields.map((f) => f.rank), bar ? BAR_RANK : -1);
    if (worst <= 1) break;
    if (bar && worst === BAR_RANK && !fields.some((f) => f.rank > BAR_RANK)) bar = false;
    else fields = fields.filter((f) => f !== fields.findLast((g) => g.rank === worst));
  }
  const width = bar ? Math.min(BAR_WIDTH, max - length() - 1) : 0;
  const filled = Math.round((p.percent / 100) * width);
  const line = (bar ? '█'.repeat(filled) + '░'.repeat(width - filled) + ' ' : '') + [percent, ...fields].map((f) => f.text).join('  ');
  return line.length <= max ? line : line.slice(0, Math.max(0, max - 1)) + '…';
}

/**
 * The multi-line status block.
 * @param {CampaignProgress} p
 */
export function statusBlock(p) {
  const lines = [
    `campaign  ${p.id}  "${p.name}"`,
    `state     ${p.state}${p.error ? ` (${p.error})` : ''}`,
    `progress  ${progressLine(p)}`,
    `audience  ${formatCount(p.total)} devices${p.enqueued ? '' : ' so far (still enqueueing)'}; ` +
      `left out: ${formatCount(p.skipped)} invalid, ${formatCount(p.duplicates)} duplicate, ${formatCount(p.excluded)} disabled`,
    `elapsed   ${formatDuration(p.elapsedSeconds)}${p.finishedAt ? `  finished ${p.finishedAt}` : ''}`
  ];
  if (p.cancelled > 0) lines.push(`cancelled ${formatCount(p.cancelled)} devices not sent`);
  return lines.join('\n');
}

/**
 * A launch warning (shared/campaign/launch.js) as pushctl prints it on stderr.
 * @param {import('../../shared/campaign/launch.js').LaunchWarning} warning
 */
export function formatWarning(warning) {
  if (warning.kind === 'invalid-lines') {
    const shown = warning.lines.map((s) => `  ${warning.source} line ${s.line}: ${s.reason}`).join('\n');
    const more = warning.count > warning.lines.length ? `\n  ... and ${warning.count - warning.lines.length} more` : '';
    return `warning: skipping ${warning.count} invalid line(s) (use --strict to reject the campaign instead):\n${shown}${more}\n`;
  }
  const zones = `${warning.zones.slice(0, 5).join(', ')}${warning.zones.length > 5 ? ', ...' : ''}`;
  return `warning: ${formatCount(warning.devices)} devices in ${warning.zones.length} time zone(s) (${zones}) reach ${warning.localTime} only after the ` +
    'deadline; they will be counted as expired and not sent\n';
}
