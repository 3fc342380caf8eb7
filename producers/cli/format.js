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

/**
 * One line: a bar, the counts, the rate and the ETA.
 * @param {CampaignProgress} p
 * @param {number} [width]
 */
export function progressLine(p, width = 24) {
  const filled = Math.round((p.percent / 100) * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const total = p.enqueued ? formatCount(p.total) : `${formatCount(p.total)}+`;
  const rate = p.state === 'completed' ? `${formatRate(p.averageRate)} average`
    : p.achievedRate === null ? formatRate(p.rate) : `${formatRate(p.achievedRate)} (limit ${formatRate(p.rate)})`;
  const tail = p.state === 'running' ? `ETA ${formatDuration(p.etaSeconds)}` : p.state;
  return `${bar} ${p.percent.toFixed(1).padStart(5)}%  sent ${formatCount(p.delivered)}  failed ${formatCount(p.failed)}` +
    `  disabled ${formatCount(p.disabled)}  total ${total}  rate ${rate}  ${tail}`;
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
