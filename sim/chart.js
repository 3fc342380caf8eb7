// Hand-written SVG charts of simulator runs: send rate, gateway load against capacity, and
// p95 against the SLO over time, one line per run. Self-contained (inline styles, no fonts
// or scripts to load), so they render on GitHub and in any browser.
import { niceStep, niceCeil } from './svg.js';
import { escapeXml } from '../shared/escape-xml.js';

/** @typedef {import('./simulate.js').Series} Series */

/** Line colours per strategy; anything else falls back to grey. */
export const STRATEGY_COLOURS = Object.freeze({
  blast: '#d62728',
  batches: '#ff7f0e',
  static: '#9467bd',
  adaptive: '#1f77b4',
  oracle: '#2ca02c'
});

const WIDTH = 960;
const PANEL = 190;
const GAP = 46;
const LEFT = 70;
const RIGHT = 20;
const TOP = 76;

/**
 * @param {object} input
 * @param {string} input.title
 * @param {{ label: string, series: Series, colour?: string }[]} input.runs
 * @param {number} input.sloP95Ms
 * @param {number} [input.xMaxSeconds]  cut the time axis here (longer runs are marked as continuing)
 * @returns {string}
 */
export function renderChart({ title, runs, sloP95Ms, xMaxSeconds }) {
  const plotWidth = WIDTH - LEFT - RIGHT;
  const height = TOP + 3 * PANEL + 2 * GAP + 40;
  const xMax = xMaxSeconds ?? Math.max(...runs.map((r) => r.series.t.at(-1) ?? 0)) + 10;
  const x = (/** @type {number} */ t) => LEFT + (Math.max(0, Math.min(t, xMax)) / xMax) * plotWidth;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  out.push(`<rect width="${WIDTH}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${LEFT}" y="20" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  // Legend.
  let lx = LEFT;
  for (const run of runs) {
    const colour = colourOf(run);
    const continues = (run.series.t.at(-1) ?? 0) > xMax;
    const label = continues ? `${run.label} (continues past the chart)` : run.label;
    out.push(`<line x1="${lx}" y1="40" x2="${lx + 18}" y2="40" stroke="${colour}" stroke-width="2.5"/>`);
    out.push(`<text x="${lx + 23}" y="44">${escapeXml(label)}</text>`);
    lx += 34 + label.length * 6.2;
  }

  // Capacity lines from the longest run (they are the same world for every run).
  const first = runs.reduce((/** @type {Series | undefined} */ longest, r) => (!longest || r.series.t.length > longest.t.length ? r.series : longest), undefined);
  // Panel 1: send rate, log scale.
  const p1 = TOP;
  const rateMax = 10 ** Math.ceil(Math.log10(Math.max(10, ...runs.flatMap((r) => r.series.sendRate))));
  const yRate = (/** @type {number} */ v) => p1 + PANEL - (Math.log10(Math.max(1, v)) / Math.log10(rateMax)) * PANEL;
  panelFrame(out, p1, 'send rate (sends/s, log scale)');
  for (let v = 1; v <= rateMax; v *= 10) tick(out, yRate(v), format(v));
  for (const run of runs) out.push(polyline(run.series.t, run.series.sendRate, x, yRate, colourOf(run), xMax));

  // Panel 2: gateway load against capacity.
  const p2 = TOP + PANEL + GAP;
  const capMax = first ? Math.max(...first.capacity) : 1;
  const loadMax = niceCeil(1.6 * capMax, 1);
  const yLoad = (/** @type {number} */ v) => p2 + PANEL - (Math.min(v, loadMax) / loadMax) * PANEL;
  panelFrame(out, p2, 'requests/s arriving at the gateway; dashed: its capacity at full CPU, dotted: the load at which p95 meets the SLO');
  for (let v = 0; v <= loadMax; v += niceStep(loadMax, 1)) tick(out, yLoad(v), format(v));
  if (first) {
    out.push(polyline(first.t, first.capacity, x, yLoad, '#555', xMax, '6 4'));
    out.push(polyline(first.t, first.sloCapacity, x, yLoad, '#555', xMax, '2 3'));
  }
  for (const run of runs) out.push(polyline(run.series.t, run.series.offeredRps, x, yLoad, colourOf(run), xMax));

  // Panel 3: p95 against the SLO, log scale.
  const p3 = TOP + 2 * (PANEL + GAP);
  const lo = 10;
  const hi = 100_000;
  const yP95 = (/** @type {number} */ v) => p3 + PANEL - ((Math.log10(Math.max(lo, Math.min(hi, v))) - 1) / (Math.log10(hi) - 1)) * PANEL;
  panelFrame(out, p3, `gateway p95 per 10-s window (ms, log scale); dotted: the SLO, ${sloP95Ms} ms`);
  for (let v = lo; v <= hi; v *= 10) tick(out, yP95(v), format(v));
  out.push(`<line x1="${LEFT}" y1="${yP95(sloP95Ms).toFixed(1)}" x2="${LEFT + plotWidth}" y2="${yP95(sloP95Ms).toFixed(1)}" stroke="#555" stroke-dasharray="2 3"/>`);
  for (const run of runs) out.push(polyline(run.series.t, run.series.p95Ms, x, yP95, colourOf(run), xMax));

  // Time axis (minutes) under the last panel.
  const axisY = p3 + PANEL;
  const stepMinutes = niceStep(xMax / 60, 1);
  for (let m = 0; m * 60 <= xMax; m += stepMinutes) {
    const px = x(m * 60);
    for (const p of [p1, p2, p3]) out.push(`<line x1="${px.toFixed(1)}" y1="${p}" x2="${px.toFixed(1)}" y2="${p + PANEL}" stroke="#eee"/>`);
    out.push(`<text x="${px.toFixed(1)}" y="${axisY + 15}" text-anchor="middle">${m}</text>`);
  }
  out.push(`<text x="${LEFT + plotWidth / 2}" y="${axisY + 32}" text-anchor="middle">minutes since the campaign started</text>`);
  out.push('</svg>');
  return out.join('\n');

  /** @param {string[]} o @param {number} top @param {string} label */
  function panelFrame(o, top, label) {
    o.push(`<rect x="${LEFT}" y="${top}" width="${plotWidth}" height="${PANEL}" fill="none" stroke="#999"/>`);
    o.push(`<text x="${LEFT}" y="${top - 6}" fill="#333">${escapeXml(label)}</text>`);
  }
  /** @param {string[]} o @param {number} y @param {string} label */
  function tick(o, y, label) {
    o.push(`<line x1="${LEFT - 4}" y1="${y.toFixed(1)}" x2="${LEFT + plotWidth}" y2="${y.toFixed(1)}" stroke="#eee"/>`);
    o.push(`<text x="${LEFT - 7}" y="${(y + 4).toFixed(1)}" text-anchor="end">${label}</text>`);
  }
}

/** @param {{ label: string, colour?: string }} run */
function colourOf(run) {
  return run.colour ?? /** @type {Record<string, string>} */ (STRATEGY_COLOURS)[run.label] ?? '#7f7f7f';
}

/**
 * @param {number[]} ts
 * @param {number[]} values
 * @param {(t: number) => number} x
 * @param {(v: number) => number} y
 * @param {string} colour
 * @param {number} xMax
 * @param {string} [dash]
 */
function polyline(ts, values, x, y, colour, xMax, dash) {
  const points = [];
  for (let i = 0; i < ts.length && ts[i] <= xMax; i++) points.push(`${x(ts[i]).toFixed(1)},${y(values[i]).toFixed(1)}`);
  return `<polyline fill="none" stroke="${colour}" stroke-width="1.4" stroke-linejoin="round"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${points.join(' ')}"/>`;
}



/** @param {number} v */
function format(v) {
  return v >= 1000 ? `${v / 1000}k` : String(v);
}

