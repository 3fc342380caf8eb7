// Human-readable output for pushctl: durations, counts, tables and the progress bar.

/** @typedef {import('../../shared/campaign-progress.js').CampaignProgress} CampaignProgress */

/** @param {number | null} seconds */
export function formatDuration(seconds) {
  if (seconds === null || !Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

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
