// A duration as people read it in a campaign's ETA and timing: 45s, 12m05s, 3h07m. One
// function for pushctl (producers/cli/format.js) and the dashboard page, which loads this
// very file as an ES module (/assets/format-duration.js), so both show the same. It must
// therefore import nothing.

/**
 * Seconds as 45s, 12m05s or 3h07m (whole seconds, rounded).
 * @param {number | null | undefined} seconds  null, undefined or not finite: '?'
 */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
