// @ts-nocheck -- browser code, loaded as an ES module (no build); the server's type check does not apply.
// The dashboard page: polls /api/overview and each running campaign's chart series every
// second, and sends control actions with the token from the form. All
// numbers come from the server (shared/campaign/campaign-progress.js, as pushctl's do); this file
// only formats them, durations with pushctl's own function.
import { formatDuration as duration } from './format-duration.js';
import { createChartView } from './chart-view.js';
import { reasonInWords } from './rate-reasons.js';

(() => {
  const TOKEN_KEY = 'pushpace.dashboardToken';
  const OVERVIEW_MS = 1000;
  // Samples arrive every second (shared/metrics/campaign-sampler.js).
  const SERIES_MS = 1000;
  // A finished campaign's chart is loaded until it shows the end (the sampler's final point, a
  // second or two after the finish), at most this many times.
  const LOADS_AFTER_FINISH = 10;
  // A request that never answers (a connection dropped on the way) fails after this long:
  // a card loads its chart one request at a time, and would otherwise wait for ever.
  const REQUEST_TIMEOUT_MS = 10_000;

  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let controlEnabled = false;
  /** id → { el, chart, data, lastT, loading, finished, loadsAfterFinish } */
  const cards = new Map();

  const $ = (selector, root = document) => root.querySelector(selector);

  // ---- formatting (as producers/cli/format.js formats for pushctl) ----
  const count = (n) => Number(n).toLocaleString('en-US');
  const rate = (r) => `${r >= 100 ? Math.round(r) : Number(r.toFixed(1))}/s`;
  const finished = (state) => !['running', 'paused'].includes(state);

  // ---- API ----
  async function api(path, options = {}) {
    const headers = {};
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(path, { ...options, headers, cache: 'no-store', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = new Error(body.error || response.statusText);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  function notice(text) {
    const el = $('#notice');
    el.hidden = !text;
    el.textContent = text || '';
  }

  // ---- overview ----
  async function refresh() {
    try {
      render(await api('/api/overview'));
      notice(null);
    } catch (error) {
      notice(error.status === 401
        ? 'This dashboard needs the token to show anything (DASHBOARD_PUBLIC=false): enter it above.'
        : `Cannot load the dashboard: ${error.message}`);
    } finally {
      setTimeout(refresh, OVERVIEW_MS);
    }
  }

  function render(overview) {
    controlEnabled = overview.controlEnabled;
    const g = overview.governor;
    $('#pace').textContent = `rate limit ${rate(overview.bucket.rate)} · burst ${count(overview.bucket.burst)} · ` + (g
      ? `governor: gateway p95 ${g.p95Ms === null ? 'unknown' : `${Math.round(g.p95Ms)} ms`} (SLO ${Math.round(g.sloMs)} ms). ${reasonInWords(g.reason)}`
      : 'no governor running: the rate is set by hand (pushctl rate)');
    $('#token-state').textContent = !controlEnabled ? 'control disabled on the server' : token ? 'token set' : 'needed for actions';

    const list = $('#campaigns');
    if (overview.campaigns.length === 0) list.innerHTML = '<p class="empty">No campaigns yet.</p>';
    else list.querySelector('.empty')?.remove();
    const ids = new Set();
    for (const p of overview.campaigns) {
      ids.add(p.id);
      let card = cards.get(p.id);
      if (!card) {
        card = createCard(p);
        cards.set(p.id, card);
      }
      // Newest first, as the API lists them.
      list.appendChild(card.el);
      updateCard(card, p);
    }
    for (const [id, card] of cards) {
      if (ids.has(id)) continue;
      card.chart?.destroy();
      card.el.remove();
      cards.delete(id);
    }
    renderSchedules(overview.schedules);
  }

  function createCard(p) {
    const el = $('#campaign-template').content.firstElementChild.cloneNode(true);
    el.dataset.campaign = p.id;
    $('.id', el).textContent = p.id;
    for (const button of el.querySelectorAll('[data-action]')) {
      button.addEventListener('click', () => act(card, button.dataset.action));
    }
    const card = { id: p.id, el, chart: null, hasGateway: false, data: { t: [], sendRate: [], startRate: [], rateLimit: [], p95Ms: [], sloMs: [], reason: [] }, lastT: 0, loading: false, finished: false, loadsAfterFinish: 0, nextSeriesAt: 0 };
    return card;
  }

  function updateCard(card, p) {
    const { el } = card;
    $('.name', el).textContent = p.name;
    const state = $('.state', el);
    state.textContent = p.state;
    state.className = `state state-${p.state}`;
    el.dataset.state = p.state;
    el.classList.toggle('finished', finished(p.state));
    $('.fill', el).style.width = `${p.percent.toFixed(1)}%`;
    $('.bar', el).setAttribute('aria-valuenow', p.percent.toFixed(1));
    const fields = {
      percent: `${p.percent.toFixed(1)}%`,
      delivered: count(p.delivered),
      failed: count(p.failed),
      disabled: count(p.disabled),
      expired: p.expired === undefined ? '' : count(p.expired),
      total: p.enqueued ? count(p.total) : `${count(p.total)}+`,
      rate: p.state === 'completed' ? [rate(p.averageRate), 'average']
        : p.achievedRate === null ? [rate(p.rate), 'limit'] : [rate(p.achievedRate), `limit ${rate(p.rate)}`],
      eta: p.state === 'running' ? duration(p.etaSeconds) : p.state === 'paused' ? 'paused' : '—'
    };
    for (const [name, value] of Object.entries(fields)) {
      // A value, or [value, note]: the note goes on a second, smaller line.
      const [text, note] = Array.isArray(value) ? value : [value, ''];
      const dd = $(`[data-field="${name}"]`, el);
      if (dd.dataset.text === `${text}|${note}`) continue;
      dd.dataset.text = `${text}|${note}`;
      dd.textContent = text;
      if (note) {
        const small = document.createElement('span');
        small.className = 'note';
        small.textContent = note;
        dd.append(small);
      }
    }
    $('[data-optional="expired"]', el).hidden = p.expired === undefined;
    $('.timing', el).textContent = timing(p);
    const buttons = {
      pause: p.state === 'running',
      resume: p.state === 'paused',
      cancel: p.state === 'running' || p.state === 'paused'
    };
    for (const [action, allowed] of Object.entries(buttons)) {
      const button = $(`[data-action="${action}"]`, el);
      button.disabled = !allowed || !controlEnabled;
      button.title = !controlEnabled ? 'DASHBOARD_TOKEN is not set on the server' : '';
    }
    card.finished = finished(p.state);
    maybeLoadSeries(card);
  }

  // Local-time delivery and deadlines, when the campaign has them (as pushctl status shows them).
  function timing(p) {
    const parts = [];
    const at = (iso) => new Date(iso).toLocaleString();
    if (p.localTime) {
      parts.push(`Delivered at ${p.localTime} in each device's time zone` + (p.waiting
        ? `: ${count(p.waiting.devices)} devices in ${count(p.waiting.zones)} zones still wait, next release ${at(p.waiting.nextAt)}`
        : ''));
    }
    if (p.deadlineAt) parts.push(`Deadline ${at(p.deadlineAt)}${p.deadlinePassed ? ' (passed)' : ''}`);
    return parts.join(' · ');
  }

  // ---- control actions ----
  async function act(card, action) {
    if (action === 'cancel' && !confirm(`Cancel campaign ${card.id}? Devices not yet sent will not be sent.`)) return;
    const message = $('.message', card.el);
    message.textContent = '';
    try {
      const answer = await api(`/api/campaigns/${encodeURIComponent(card.id)}/${action}`, { method: 'POST' });
      card.el.dataset.state = answer.state;
    } catch (error) {
      message.textContent = error.status === 401 ? `Not allowed: ${error.message}. Enter the DASHBOARD_TOKEN above.` : error.message;
    }
  }

  // ---- charts ----
  function maybeLoadSeries(card) {
    const now = Date.now();
    if (card.loading || now < card.nextSeriesAt) return;
    // A finished campaign's chart is loaded until its limit line has stopped, then left alone.
    // Once was not enough: that load could come before the sampler's final point, and the
    // legend then kept the running rate for good (test/integration/observability.test.js).
    if (card.finished && (card.data.rateLimit.at(-1) === null || card.loadsAfterFinish >= LOADS_AFTER_FINISH)) return;
    card.loading = true;
    if (card.finished) card.loadsAfterFinish++;
    api(`/api/campaigns/${encodeURIComponent(card.id)}/series?since=${card.lastT}`).then((series) => {
      appendSeries(card, series);
    }).catch((error) => {
      $('.chart-note:not(.chart-ahead)', card.el).textContent = `Chart unavailable: ${error.message}`;
    }).finally(() => {
      card.loading = false;
      // Checked on each overview poll (every OVERVIEW_MS): a little slack keeps it to one load per poll.
      card.nextSeriesAt = Date.now() + SERIES_MS - 250;
    });
  }

  function appendSeries(card, series) {
    const { data } = card;
    for (const key of Object.keys(data)) data[key].push(...(series[key] ?? series.t.map(() => null)));
    if (series.t.length > 0) card.lastT = series.t[series.t.length - 1];
    // The predicted load replaces the last one each time: it is about the future, not kept.
    card.ahead = series.ahead ?? null;
    const hasGateway = data.p95Ms.some((v) => v !== null);
    $('.chart-note:not(.chart-ahead)', card.el).textContent = hasGateway
      ? 'Send rate and its limit, and below them the gateway\'s p95 latency against its SLO, as the governor saw them. Hover or touch the chart for a past second.'
      : 'No governor decisions for this campaign: gateway p95 and SLO are not charted (they come from the governor; without one only the send rate is known).';
    card.chart ??= createChartView($('.chart', card.el), `campaign-${card.id}`);
    card.chart.setData(withAhead(data, card.ahead), hasGateway, Boolean(card.ahead && card.ahead.t.length > 0));
    $('.chart-ahead', card.el).textContent = card.ahead && card.ahead.t.length > 0
      ? `Below: the gateway load the governor predicts for the next ${Math.round((card.ahead.t.at(-1) - card.ahead.t[0]) / 60000)} minutes (the shaded band is its range), against its capacity estimate. ` +
        `The devices still to send are expected out in about ${formatSeconds(card.ahead.durationSeconds)}.`
      : '';
  }

  /** The samples, then the forecast's points after them: the past series are null in the future and the forecast's in the past. */
  function withAhead(data, ahead) {
    const keys = ['predictedLoad', 'loadLow', 'loadHigh', 'capacity'];
    const past = Object.fromEntries([...Object.entries(data), ...keys.map((k) => [k, data.t.map(() => null)])]);
    if (!ahead || ahead.t.length === 0) return past;
    const last = data.t.at(-1) ?? 0;
    const from = ahead.t.findIndex((t) => t > last);
    if (from < 0) return past;
    const n = ahead.t.length - from;
    const merged = {};
    for (const [key, values] of Object.entries(past)) merged[key] = [...values, ...new Array(n).fill(null)];
    merged.t = [...data.t, ...ahead.t.slice(from)];
    merged.predictedLoad.splice(data.t.length, n, ...ahead.loadRps.slice(from));
    merged.loadLow.splice(data.t.length, n, ...ahead.lowRps.slice(from));
    merged.loadHigh.splice(data.t.length, n, ...ahead.highRps.slice(from));
    merged.capacity.splice(data.t.length, n, ...ahead.t.slice(from).map(() => ahead.capacityRps));
    return merged;
  }

  function formatSeconds(s) {
    if (!(s >= 0)) return 'an unknown time';
    if (s < 90) return `${Math.round(s)} s`;
    if (s < 5400) return `${Math.round(s / 60)} min`;
    return `${(s / 3600).toFixed(1)} h`;
  }

  // ---- schedules ----
  function renderSchedules(schedules) {
    const root = $('#schedules');
    if (!schedules.available) {
      root.innerHTML = '<p class="empty">Schedules are not available here.</p>';
      return;
    }
    if (schedules.error) {
      root.innerHTML = '';
      const p = document.createElement('p');
      p.className = 'empty';
      p.textContent = `Schedules: ${schedules.error}.`;
      root.append(p);
      return;
    }
    if (schedules.items.length === 0) {
      root.innerHTML = '<p class="empty">No schedules (pushctl schedule add creates one).</p>';
      return;
    }
    const table = document.createElement('table');
    table.innerHTML = '<thead><tr><th>Schedule</th><th>Campaign name</th><th>When</th><th>Time zone</th><th>Next run</th><th>Last run</th><th>Last outcome</th><th>State</th></tr></thead><tbody></tbody>';
    const body = table.querySelector('tbody');
    const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
    for (const s of schedules.items) {
      const row = body.insertRow();
      const next = when(s.nextRunAt) + (s.overdue ? ' (overdue: is a scheduler running?)' : '');
      for (const text of [s.id, s.name, s.when, s.timeZone ?? '—', next, when(s.lastRunAt), s.lastOutcome ?? '—', s.state]) row.insertCell().textContent = text;
      row.dataset.schedule = s.id;
    }
    root.replaceChildren(table);
  }

  // ---- token ----
  $('#token').value = token;
  $('#token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    token = $('#token').value.trim();
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
    $('#token-state').textContent = token ? 'token set' : 'needed for actions';
  });

  refresh();
})();
