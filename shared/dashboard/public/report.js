// @ts-nocheck -- browser code, loaded as an ES module (no build); the server's type check does not apply.
// The campaign report page: reads /api/campaigns/ID/report (the JSON pushctl report --json
// prints) and lays it out. Every value goes in as text, never as HTML. The token, when
// reads need one, is the one the dashboard page stored for this tab.
const TOKEN_KEY = 'pushpace.dashboardToken';
const SVG = 'http://www.w3.org/2000/svg';
const $ = (/** @type {string} */ s) => /** @type {HTMLElement} */ (document.querySelector(s));
const fmt = (/** @type {number | null} */ n) => (n === null || n === undefined ? '–' : String(Math.round(n * 10) / 10));

const id = new URLSearchParams(location.search).get('id') ?? '';
load().catch((error) => notice(`The report could not be loaded: ${error.message}`));

async function load() {
  if (!id) return notice('No campaign id: open a report from the campaign list.');
  const token = sessionStorage.getItem(TOKEN_KEY);
  const answer = await fetch(`/api/campaigns/${encodeURIComponent(id)}/report`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const body = await answer.json();
  if (!answer.ok) return notice(body.error ?? `HTTP ${answer.status}`);
  render(body);
}

/** @param {string} text */
function notice(text) {
  const el = $('#notice');
  el.textContent = text;
  el.hidden = false;
  $('#title').textContent = 'Campaign report';
}

/** @param {any} r */
function render(r) {
  document.title = `pushpace · report · ${r.name}`;
  $('#title').textContent = `${r.name} (${r.id})`;
  facts('#facts', [['State', r.state + (r.error ? ` (${r.error})` : '')], ['Started', r.startAt.replace('T', ' ').slice(0, 19) + ' UTC'],
    ['Finished', r.finishedAt ? r.finishedAt.replace('T', ' ').slice(0, 19) + ' UTC' : 'not yet'], ['Duration', duration(r.durationSeconds)],
    ['Average rate', `${fmt(r.rate.averagePerSecond)}/s`], ['Peak rate', `${fmt(r.rate.peakPerSecond)}/s`],
    ['Campaign cap', r.rate.maxRate === null ? 'none' : `${r.rate.maxRate}/s`],
    ['Gateway p95', r.gateway ? `max ${fmt(r.gateway.p95MaxMs)} ms, SLO ${fmt(r.gateway.sloMs)} ms` : 'not recorded']]);
  const o = r.outcomes;
  facts('#outcomes', [['Total', o.total], ['Delivered', o.delivered], ['Failed', o.failed], ['Disabled', o.disabled], ['Expired', o.expired],
    ['Cancelled', o.cancelled], ['Pending', o.pending], ['Invalid lines skipped', o.skipped], ['Duplicates', o.duplicates], ['Known disabled left out', o.excluded]]);
  $('#failures-hint').textContent = o.total - o.delivered - o.pending > 0 ? `Export the devices not delivered: pushctl failures ${r.id} --format csv` : '';
  const points = r.timeline.filter((/** @type {any} */ p) => p.ratePerSecond !== null);
  chart('#rate-chart', points, [['ratePerSecond', '#2563eb', 'sent/s'], ['rateLimit', '#9ca3af', 'limit/s']], 'No samples were recorded for this campaign.');
  chart('#p95-chart', r.timeline.filter((/** @type {any} */ p) => p.p95Ms !== null), [['p95Ms', '#b45309', 'p95'], ['sloMs', '#b91c1c', 'SLO']],
    'Not recorded: no governor decisions while it ran.');
  table('#reasons', ['Reason', 'Count'], r.failureReasons.map((/** @type {any} */ x) => [x.reason, x.count]), 'No failures kept.');
  $('#learned').textContent = r.learned ? JSON.stringify(r.learned, null, 2) : 'not recorded';
  if (!r.forecast) $('#forecast').textContent = 'not recorded';
  else if (r.forecastComparison.length === 0) $('#forecast').textContent = JSON.stringify(r.forecast);
  else table('#forecast', ['', `Forecast (${r.forecast.source === 'governor' ? 'live governor' : 'fixed rate, no governor'})`, 'Range', 'Actual', 'Forecast ÷ actual'],
    r.forecastComparison.map((/** @type {any} */ c) => [c.field, fmt(c.forecast), c.low !== null && c.high !== null ? `${fmt(c.low)}–${fmt(c.high)}` : '',
      fmt(c.actual), c.ratio === null ? '' : `${c.ratio}×${c.withinRange === null ? '' : c.withinRange ? ' (in range)' : ' (out of range)'}`]), '');
}

/** @param {string} sel @param {[string, string | number][]} rows */
function facts(sel, rows) {
  const dl = $(sel);
  dl.replaceChildren(...rows.map(([name, value]) => {
    const div = document.createElement('div');
    const dt = document.createElement('dt');
    const dd = document.createElement('dd');
    dt.textContent = name;
    dd.textContent = String(value);
    div.append(dt, dd);
    return div;
  }));
}

/** @param {string} sel @param {string[]} head @param {(string | number)[][]} rows @param {string} empty */
function table(sel, head, rows, empty) {
  const root = $(sel);
  if (rows.length === 0) return void (root.textContent = empty);
  const t = document.createElement('table');
  const tr = t.createTHead().insertRow();
  for (const h of head) tr.appendChild(document.createElement('th')).textContent = h;
  const tbody = t.createTBody();
  for (const row of rows) {
    const r = tbody.insertRow();
    row.forEach((cell, i) => {
      const td = r.insertCell();
      td.textContent = String(cell);
      if (i > 0) td.className = 'n';
    });
  }
  root.replaceChildren(t);
}

/**
 * A small line chart in SVG: time across, the series' values up, from 0 to their maximum.
 * @param {string} sel @param {any[]} points @param {[string, string, string][]} lines field, colour, label @param {string} empty
 */
function chart(sel, points, lines, empty) {
  const root = $(sel);
  if (points.length < 2) return void (root.textContent = empty);
  const W = 600, H = 160, t0 = Date.parse(points[0].t), t1 = Date.parse(points.at(-1).t);
  const max = Math.max(1, ...points.flatMap((p) => lines.map(([f]) => p[f] ?? 0)));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  for (const [field, colour] of lines) {
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('points', points.filter((p) => p[field] !== null)
      .map((p) => `${((Date.parse(p.t) - t0) / Math.max(1, t1 - t0)) * W},${H - (p[field] / max) * (H - 4)}`).join(' '));
    line.setAttribute('fill', 'none');
    line.setAttribute('stroke', colour);
    line.setAttribute('stroke-width', '2');
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.appendChild(line);
  }
  const legend = document.createElement('p');
  legend.className = 'legend';
  legend.textContent = `${lines.map(([, , label]) => label).join(' / ')}; 0 to ${fmt(max)}; ${points[0].t.slice(11, 19)}–${points.at(-1).t.slice(11, 19)} UTC`;
  svg.setAttribute('aria-label', legend.textContent);
  root.replaceChildren(svg, legend);
}

/** @param {number | null} s */
function duration(s) {
  if (s === null) return '?';
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.round(s % 60);
  return h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}
