// @ts-nocheck -- browser code, loaded as an ES module (no build); the server's type check does not apply.
// A campaign's chart: stacked panels that share the time axis and the cursor (send rate and
// its limit on top, the gateway's latency and its SLO below), and a legend that always shows
// values: the latest sample's, or the hovered one's, with its time to the second and the
// governor's reason in words.
//
// Why panels and not two y axes on one plot: with two axes each auto-scaled, the send rate
// and the SLO line landed on the same pixels whenever their numbers were in proportion, and a
// reader could not tell which was which. Panels never overlap, whatever the numbers.
//
// What is drawn is declared in PANELS and SERIES. A new series names its panel; a band (the
// predicted wake-up load with its uncertainty against capacity, say) is two series, the lower
// one with `band: '<upper key>'`, which fills between them. A new panel is one PANELS entry.
import { reasonInWords } from './rate-reasons.js';

const clock = (seconds) => new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const perSecond = (r) => `${r >= 100 ? Math.round(r) : Number(r.toFixed(1))}/s`;
const ms = (v) => `${Math.round(v)} ms`;

/**
 * Panels, top to bottom. `needs: 'gateway'`: only once the governor has latency to show;
 * `needs: 'forecast'`: only while a live governor predicts the campaign's wake-up load.
 */
export const PANELS = [
  { id: 'rate', axis: 'sends/s', height: 170 },
  { id: 'latency', axis: 'ms', height: 120, needs: 'gateway' },
  { id: 'load', axis: 'req/s', height: 130, needs: 'forecast' }
];
const reqPerSecond = (r) => `${Math.round(r).toLocaleString()} req/s`;

/**
 * Series in drawing order within their panel: a later one is drawn over an earlier one, which
 * is why the rate limit comes after the send rate (it must stay visible where they meet).
 * `ended`: what the legend says when the latest value is missing.
 */
export const SERIES = [
  { key: 'sendRate', label: 'send rate', panel: 'rate', color: '#2563eb', width: 2, fill: 'rgba(37, 99, 235, 0.08)', format: perSecond,
    title: 'Sends per second since the previous sample (samples are one second apart).' },
  { key: 'startRate', label: 'start burst', panel: 'rate', color: '#2563eb', marker: true, format: perSecond,
    title: 'The first second of sending, or the first after a pause. The token bucket lets its burst through then, so this point can be above the limit: it is not the limiter failing.' },
  { key: 'rateLimit', label: 'rate limit', panel: 'rate', color: '#7c3aed', width: 2, dash: [8, 4], stepped: true, format: perSecond, ended: 'stopped',
    title: 'The shared limit all workers send under (the governor\'s rate, or pushctl rate). The line stops while the campaign is paused and when it ends.' },
  { key: 'p95Ms', label: 'gateway p95', panel: 'latency', color: '#ea580c', width: 2, format: ms, needs: 'gateway',
    title: 'The 95th-percentile latency of your API gateway, as the governor read it.' },
  { key: 'sloMs', label: 'SLO', panel: 'latency', color: '#be123c', width: 1.5, dash: [3, 3], format: ms, labelled: true, needs: 'gateway',
    title: 'The p95 latency the governor keeps the gateway under (PACING_SLO_P95_MS).' },
  // The future: drawn from now on, for the next minutes. The band first, so the line is over it.
  { key: 'loadHigh', label: 'load, high', panel: 'load', color: 'rgba(13, 148, 136, 0.35)', width: 1, format: reqPerSecond, needs: 'forecast', future: true,
    title: 'The predicted load if each send causes one standard deviation more requests than the governor expects.' },
  { key: 'loadLow', label: 'load, low', panel: 'load', color: 'rgba(13, 148, 136, 0.35)', width: 1, band: 'loadHigh', fill: 'rgba(13, 148, 136, 0.18)', format: reqPerSecond, needs: 'forecast', future: true,
    title: 'The predicted load if each send causes one standard deviation fewer requests. The shaded band between low and high is the range the governor expects.' },
  { key: 'predictedLoad', label: 'predicted load', panel: 'load', color: '#0d9488', width: 2, format: reqPerSecond, needs: 'forecast', future: true,
    title: 'The load on your API gateway the governor predicts for the next minutes: its baseline traffic plus the app opens this campaign\'s pushes cause, from what it has sent and what it still has to send.' },
  { key: 'capacity', label: 'capacity', panel: 'load', color: '#be123c', width: 1.5, dash: [3, 3], format: reqPerSecond, labelled: true, needs: 'forecast', future: true,
    title: 'The load the governor estimates the gateway takes with its p95 at the setpoint. The governor paces the campaign so that the predicted load stays under it.' }
];

/**
 * @param {HTMLElement} container  the card's .chart element; the panels and the legend go in it
 * @param {string} syncKey  panels with the same key share the cursor
 */
export function createChartView(container, syncKey) {
  const legend = document.createElement('div');
  legend.className = 'chart-legend';
  legend.innerHTML = '<p class="chart-time"></p><ul class="chart-values"></ul><p class="chart-reason"></p>';
  const rows = new Map();
  for (const s of SERIES) {
    const li = document.createElement('li');
    li.dataset.series = s.key;
    li.title = s.title;
    const swatch = document.createElement('span');
    swatch.className = `swatch${s.marker ? ' marker' : ''}`;
    swatch.style.borderColor = s.color;
    if (s.dash) swatch.style.borderTopStyle = 'dashed';
    li.append(swatch, Object.assign(document.createElement('span'), { className: 'label', textContent: s.label }),
      Object.assign(document.createElement('span'), { className: 'value' }));
    legend.querySelector('.chart-values').append(li);
    rows.set(s.key, li);
  }
  container.replaceChildren(legend);

  /** panel id → { el, plot, series } */
  const panels = new Map();
  let data = null;
  let hasGateway = false;
  let hasForecast = false;
  let hovered = null;
  const shown = (s) => (s.needs === 'gateway' ? hasGateway : s.needs === 'forecast' ? hasForecast : true);

  const width = () => Math.max(160, container.clientWidth);

  function makePanel(panel) {
    const series = SERIES.filter((s) => s.panel === panel.id);
    const el = document.createElement('div');
    el.className = 'chart-panel';
    el.dataset.panel = panel.id;
    // Before the legend, in PANELS order.
    const next = [...panels.values()].map((p) => p.el).find((other) => PANELS.findIndex((p) => p.id === other.dataset.panel) > PANELS.indexOf(panel));
    container.insertBefore(el, next ?? legend);
    // What was drawn, in order: the Chromium test reads the z-order from it.
    let drawn = [];
    const bands = series.flatMap((s, i) => (s.band ? [{ series: [series.findIndex((o) => o.key === s.band) + 1, i + 1], fill: s.fill }] : []));
    const plot = new uPlot({
      width: width(),
      height: panel.height,
      // Room on the right for the last time label, which is otherwise cut at the edge.
      padding: [12, 36, null, null],
      legend: { show: false },
      cursor: { sync: { key: syncKey }, drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (u, min, max) => range(panel.id, u, max) } },
      bands,
      series: [{}, ...series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: s.width ?? 2,
        fill: s.band ? undefined : s.fill,
        dash: s.dash,
        spanGaps: false,
        paths: s.marker ? () => null : s.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined,
        points: s.marker ? { show: true, size: 9, width: 2, stroke: s.color, fill: '#ffffff' } : { show: false }
      }))],
      axes: [
        { values: (_u, ticks) => ticks.map(clock), space: 90, incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400] },
        { label: panel.axis, size: 56 }
      ],
      hooks: {
        drawClear: [() => { drawn = []; }],
        drawSeries: [(u, i) => drawn.push(series[i - 1].key)],
        draw: [(u) => {
          el.dataset.drawOrder = drawn.join(',');
          labelLines(u, series);
        }],
        setCursor: [(u) => {
          hovered = u.cursor.idx == null ? null : u.cursor.idx + windowOf(series).from;
          showLegend();
        }]
      }
    }, plotData(series), el);
    panels.set(panel.id, { el, plot, series });
  }

  // The index of the latest sample: the forecast's points come after it.
  function lastPastIndex() {
    let i = data.t.length - 1;
    if (!hasForecast) return i;
    while (i > 0 && SERIES.every((s) => s.future || data[s.key][i] === null)) i--;
    return i;
  }

  // Where a panel's points start in `data`: the past's panels end at the latest sample, so 15
  // minutes of forecast do not squeeze a young campaign's rate into a sliver at the left; the
  // forecast's panel starts at it.
  function windowOf(series) {
    const last = lastPastIndex();
    return series.some((s) => s.future) ? { from: last, to: data.t.length } : { from: 0, to: last + 1 };
  }

  function plotData(series) {
    const { from, to } = windowOf(series);
    return [data.t.slice(from, to).map((t) => t / 1000), ...series.map((s) => data[s.key].slice(from, to))];
  }

  // Each panel's own range, from zero to a margin above the highest line, so that the top
  // line (the limit at steady state, the SLO) is never drawn on the frame.
  function range(panelId, u, max) {
    let top = max ?? 0;
    for (const s of SERIES) if (s.panel === panelId) for (const v of data?.[s.key] ?? []) if (v !== null && v > top) top = v;
    return [0, Math.max(1, top * 1.25)];
  }

  // A label at the right end of each `labelled` line (the SLO), in its colour, so the dashed
  // line says what it is without the legend (at the left it would meet the axis' top label).
  function labelLines(u, series) {
    series.forEach((s, i) => {
      if (!s.labelled) return;
      const values = u.data[i + 1];
      const last = values.findLast((v) => v !== null);
      if (last === undefined) return;
      const { ctx } = u;
      const dpr = devicePixelRatio || 1;
      ctx.save();
      ctx.fillStyle = s.color;
      ctx.font = `${11 * dpr}px system-ui, sans-serif`;
      ctx.textBaseline = 'bottom';
      ctx.textAlign = 'right';
      ctx.fillText(`${s.label} ${s.format(last)}`, u.bbox.left + u.bbox.width - 4 * dpr, u.valToPos(last, 'y', true) - 3 * dpr);
      ctx.restore();
    });
  }

  // Values at the hovered sample, or at the latest one when the cursor is elsewhere.
  function showLegend() {
    if (!data || data.t.length === 0) return;
    const latest = hovered === null;
    const lastPast = lastPastIndex();
    const i = latest ? lastPast : hovered;
    const future = i > lastPast;
    legend.querySelector('.chart-time').textContent = `${clock(data.t[i] / 1000)}${latest ? ' (latest sample)' : future ? ' (predicted)' : ''}`;
    // The forecast's rows show its peak ahead unless a predicted second is hovered.
    const peakAt = (key) => (data[key] ?? []).reduce((best, v, k) => (v !== null && (best < 0 || v > data[key][best]) ? k : best), -1);
    for (const s of SERIES) {
      const row = rows.get(s.key);
      row.hidden = !shown(s);
      const at = s.future && !future ? peakAt(s.key === 'capacity' ? 'capacity' : 'predictedLoad') : i;
      const v = at < 0 ? null : data[s.key][at];
      row.querySelector('.value').textContent = v === null || v === undefined ? (s.ended ?? '–') : s.format(v);
    }
    const reason = legend.querySelector('.chart-reason');
    reason.hidden = !hasGateway;
    reason.dataset.reason = data.reason[i] ?? '';
    reason.textContent = hasGateway ? `Governor: ${reasonInWords(data.reason[i])}` : '';
  }

  function resize() {
    for (const { plot } of panels.values()) {
      const w = width();
      if (plot.width !== w) plot.setSize({ width: w, height: plot.height });
    }
  }
  // The container, not just the window: a card can change width without a window resize.
  const observer = new ResizeObserver(resize);
  observer.observe(container);
  addEventListener('resize', resize);

  return {
    /** @param {Record<string, any[]>} next  arrays keyed as SERIES, plus t (ms) and reason */
    setData(next, gateway, forecast = false) {
      data = next;
      hasGateway = gateway;
      hasForecast = forecast;
      for (const panel of PANELS) {
        if (!shown(panel)) {
          // A forecast that stopped (the campaign ended, the governor went away) takes its panel with it.
          const gone = panels.get(panel.id);
          if (gone) {
            gone.plot.destroy();
            gone.el.remove();
            panels.delete(panel.id);
          }
          continue;
        }
        const existing = panels.get(panel.id);
        if (existing) existing.plot.setData(plotData(existing.series));
        else makePanel(panel);
      }
      container.dataset.points = String(data.t.length);
      showLegend();
    },
    destroy() {
      observer.disconnect();
      removeEventListener('resize', resize);
      for (const { plot } of panels.values()) plot.destroy();
      panels.clear();
    }
  };
}
