// A self-contained SVG chart of one demo run: stacked panels over a shared time axis
// (seconds since the campaign started; the warm-up before it is shaded). Inline styles, no
// fonts or scripts to load, like the simulator's charts (sim/chart.js).
import { niceStep, niceCeil } from '../sim/svg.js';
import { escapeXml } from '../shared/escape-xml.js';

/**
 * @typedef {object} Line
 * @property {[number, number][]} points  [seconds, value]
 * @property {string} colour
 * @property {string} label
 * @property {string} [dash]
 * @property {boolean} [step]   hold each value until the next point (a setting, not a measurement)
 * @property {number} [width]
 */

/**
 * @typedef {object} Panel
 * @property {string} title
 * @property {number} yMax
 * @property {Line[]} lines
 * @property {{ y: number, label: string, colour?: string, dash?: string }[]} [levels]  horizontal reference lines
 */

const WIDTH = 960;
const PANEL = 170;
const GAP = 58;
const LEFT = 64;
const RIGHT = 20;
const TOP = 92;

/**
 * @param {{ title: string, subtitle: string, xFrom: number, xTo: number, panels: Panel[] }} chart
 * @returns {string}
 */
export function renderDemoChart({ title, subtitle, xFrom, xTo, panels }) {
  const plotWidth = WIDTH - LEFT - RIGHT;
  const height = TOP + panels.length * (PANEL + GAP) - 10;
  const x = (/** @type {number} */ t) => LEFT + ((Math.min(xTo, Math.max(xFrom, t)) - xFrom) / (xTo - xFrom)) * plotWidth;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="${LEFT}" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${LEFT}" y="40" fill="#444">${escapeXml(subtitle)}</text>`
  ];
  const xStep = niceStep(xTo - xFrom);
  panels.forEach((panel, i) => {
    const top = TOP + i * (PANEL + GAP);
    const y = (/** @type {number} */ v) => top + PANEL - (Math.max(0, Math.min(v, panel.yMax)) / panel.yMax) * PANEL;
    out.push(`<text x="${LEFT}" y="${top - 22}" fill="#222" font-weight="bold">${escapeXml(panel.title)}</text>`);
    // Legend under the title.
    let lx = LEFT;
    for (const line of [...panel.lines, ...(panel.levels ?? []).map((l) => ({ ...l, colour: l.colour ?? '#555', dash: l.dash ?? '2 3', points: [] }))]) {
      out.push(`<line x1="${lx}" y1="${top - 10}" x2="${lx + 16}" y2="${top - 10}" stroke="${line.colour}" stroke-width="2"${line.dash ? ` stroke-dasharray="${line.dash}"` : ''}/>`);
      out.push(`<text x="${lx + 20}" y="${top - 6}" fill="#333">${escapeXml(line.label)}</text>`);
      lx += 30 + line.label.length * 5.6;
    }
    if (xFrom < 0) out.push(`<rect x="${x(xFrom)}" y="${top}" width="${(x(0) - x(xFrom)).toFixed(1)}" height="${PANEL}" fill="#f3f3f3"/>`);
    for (let v = 0; v <= panel.yMax + 1e-9; v += niceStep(panel.yMax)) {
      out.push(`<line x1="${LEFT - 4}" y1="${y(v).toFixed(1)}" x2="${LEFT + plotWidth}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
      out.push(`<text x="${LEFT - 7}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${format(v)}</text>`);
    }
    for (let t = Math.ceil(xFrom / xStep) * xStep; t <= xTo; t += xStep) {
      out.push(`<line x1="${x(t).toFixed(1)}" y1="${top}" x2="${x(t).toFixed(1)}" y2="${top + PANEL}" stroke="#eee"/>`);
      out.push(`<text x="${x(t).toFixed(1)}" y="${top + PANEL + 14}" text-anchor="middle">${t}</text>`);
    }
    out.push(`<rect x="${LEFT}" y="${top}" width="${plotWidth}" height="${PANEL}" fill="none" stroke="#999"/>`);
    for (const level of panel.levels ?? []) {
      out.push(`<line x1="${LEFT}" y1="${y(level.y).toFixed(1)}" x2="${LEFT + plotWidth}" y2="${y(level.y).toFixed(1)}" stroke="${level.colour ?? '#555'}" stroke-dasharray="${level.dash ?? '2 3'}"/>`);
    }
    for (const line of panel.lines) out.push(polyline(line, x, y));
  });
  const last = TOP + (panels.length - 1) * (PANEL + GAP) + PANEL;
  out.push(`<text x="${LEFT + plotWidth / 2}" y="${last + 30}" text-anchor="middle">seconds since the campaign started (shaded: the governor's warm-up before it)</text>`);
  out.push('</svg>');
  return out.join('\n');
}

/** @param {Line} line @param {(t: number) => number} x @param {(v: number) => number} y */
function polyline(line, x, y) {
  const points = [];
  for (let i = 0; i < line.points.length; i++) {
    const [t, v] = line.points[i];
    if (!Number.isFinite(v)) continue;
    if (line.step && points.length) points.push(`${x(t).toFixed(1)},${y(line.points[i - 1][1]).toFixed(1)}`);
    points.push(`${x(t).toFixed(1)},${y(v).toFixed(1)}`);
  }
  return `<polyline fill="none" stroke="${line.colour}" stroke-width="${line.width ?? 1.5}" stroke-linejoin="round"${line.dash ? ` stroke-dasharray="${line.dash}"` : ''} points="${points.join(' ')}"/>`;
}



/** @param {number} v */
function format(v) {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

