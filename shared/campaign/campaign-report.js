// A campaign's report, after the fact or while it runs: outcomes, duration, the send rate
// and the gateway's p95 over time against the SLO, the most common failure reasons, what
// the governor learned and how the forecast compared. `pushctl report` prints it (text or
// JSON) and the dashboard's report page shows it; both build it here, from what Redis keeps.
//
// Slots filled by other parts, read from the campaign hash as JSON when present:
//   learned   what the governor's model learned during this campaign (any JSON object)
//   forecast  the forecast made at launch; its numeric fields named as in `actual` below
//             (durationSeconds, averageRate, peakRate, peakP95Ms, delivered, failed,
//             disabled, expired) are compared with what happened, field by field.
// Absent or unreadable: null, shown as "not recorded".
import { FINISHED_STATES } from './campaign-progress.js';

/** Most rows a text timeline shows (the JSON has every point). */
const TEXT_TIMELINE_ROWS = 20;
/** The failures list keeps this many of the newest reasons (record-outcomes.lua). */
const FAILURE_REASONS_KEPT = 1000;

/**
 * @typedef {import('../metrics/campaign-history.js').HistoryPoint} HistoryPoint
 * @typedef {{ t: string, processed: number, ratePerSecond: number | null, rateLimit: number, p95Ms: number | null, sloMs: number | null }} TimelinePoint
 * @typedef {Awaited<ReturnType<typeof buildCampaignReport>>} CampaignReport
 */

/**
 * @param {object} deps
 * @param {import('./campaign-store.js').CampaignStore} deps.store
 * @param {import('../metrics/campaign-history.js').CampaignHistory} deps.history
 * @param {string} id
 * @param {number} [now]
 */
export async function buildCampaignReport({ store, history }, id, now = Date.now()) {
  const campaign = await store.require(id);
  const [points, failures, slots] = await Promise.all([
    history.read(id),
    store.failures(id, FAILURE_REASONS_KEPT),
    store.reportSlots(id)
  ]);
  const finished = FINISHED_STATES.has(campaign.state);
  const processed = campaign.delivered + campaign.disabled + campaign.failed;
  const endedAt = campaign.finishedAt ?? (finished ? null : now);
  const durationSeconds = endedAt === null ? null : Math.max(0, (endedAt - campaign.startAt) / 1000);

  // Nothing was sent before the start, and the history's last point may be up to a step
  // before the end: the timeline begins and ends where the campaign did.
  const series = [...points];
  if (series.length > 0 && series[0].t > campaign.startAt) {
    series.unshift({ t: campaign.startAt, processed: 0, rateLimit: series[0].rateLimit, p95Ms: null, sloMs: null });
  }
  const last = series.at(-1);
  if (campaign.finishedAt && (!last || last.t < campaign.finishedAt)) {
    series.push({ t: campaign.finishedAt, processed, rateLimit: 0, p95Ms: null, sloMs: null });
  }
  const timeline = series.map((p, i) => {
    const before = series[i - 1];
    const ratePerSecond = before && p.t > before.t ? round((p.processed - before.processed) * 1000 / (p.t - before.t)) : null;
    return { t: new Date(p.t).toISOString(), processed: p.processed, ratePerSecond, rateLimit: p.rateLimit, p95Ms: p.p95Ms, sloMs: p.sloMs };
  });

  const rates = timeline.map((p) => p.ratePerSecond).filter((r) => r !== null);
  const withP95 = series.filter((p) => p.p95Ms !== null);
  const p95s = withP95.map((p) => /** @type {number} */ (p.p95Ms));
  const sloMs = withP95.at(-1)?.sloMs ?? null;
  const gateway = withP95.length === 0 ? null : {
    sloMs,
    p95MaxMs: Math.max(...p95s),
    p95MedianMs: median(p95s),
    pointsWithP95: withP95.length,
    pointsOverSlo: withP95.filter((p) => p.sloMs !== null && /** @type {number} */ (p.p95Ms) > p.sloMs).length
  };
  const averageRate = durationSeconds ? round(processed / durationSeconds) : null;
  const actual = {
    durationSeconds: durationSeconds === null ? null : round(durationSeconds), averageRate,
    peakRate: rates.length > 0 ? Math.max(...rates) : null, peakP95Ms: gateway?.p95MaxMs ?? null,
    delivered: campaign.delivered, failed: campaign.failed, disabled: campaign.disabled, expired: campaign.expired
  };
  const learned = parseSlot(slots.learned);
  const forecast = parseSlot(slots.forecast);

  return {
    id: campaign.id,
    name: campaign.name,
    state: campaign.state,
    error: campaign.error,
    createdAt: iso(campaign.createdAt),
    startAt: iso(campaign.startAt),
    finishedAt: campaign.finishedAt === null ? null : iso(campaign.finishedAt),
    durationSeconds: actual.durationSeconds,
    outcomes: {
      total: campaign.total, delivered: campaign.delivered, disabled: campaign.disabled, failed: campaign.failed,
      expired: campaign.expired, cancelled: campaign.cancelled,
      pending: finished ? 0 : Math.max(0, campaign.total - processed - campaign.cancelled - campaign.expired),
      skipped: campaign.skipped, duplicates: campaign.duplicates, excluded: campaign.excluded
    },
    failureReasons: countReasons(failures),
    failureReasonsFrom: Math.min(failures.length, FAILURE_REASONS_KEPT),
    rate: { maxRate: campaign.maxRate, averagePerSecond: averageRate, peakPerSecond: actual.peakRate },
    gateway,
    timeline,
    learned,
    forecast,
    forecastComparison: forecast ? compareForecast(forecast, actual) : [],
    actual
  };
}

/**
 * The report as text, for pushctl report.
 * @param {CampaignReport} r
 * @param {(seconds: number | null) => string} formatDuration
 */
export function formatCampaignReport(r, formatDuration) {
  const o = r.outcomes;
  const pct = (/** @type {number} */ n) => (o.total > 0 ? ` (${(n * 100 / o.total).toFixed(1)}%)` : '');
  const lines = [
    `campaign  ${r.id}  "${r.name}"`,
    `state     ${r.state}${r.error ? ` (${r.error})` : ''}`,
    `started   ${r.startAt}${r.finishedAt ? `   finished ${r.finishedAt}` : ''}`,
    `duration  ${r.durationSeconds === null ? '?' : formatDuration(r.durationSeconds)}${r.finishedAt ? '' : ' so far'}`,
    `outcomes  ${o.total} devices: delivered ${o.delivered}${pct(o.delivered)}, failed ${o.failed}${pct(o.failed)}, ` +
      `disabled ${o.disabled}${pct(o.disabled)}, expired ${o.expired}, cancelled ${o.cancelled}, pending ${o.pending}`,
    `audience  ${o.skipped} invalid lines skipped, ${o.duplicates} duplicates, ${o.excluded} known disabled left out`,
    `rate      average ${fmt(r.rate.averagePerSecond)}/s, peak ${fmt(r.rate.peakPerSecond)}/s, campaign cap ${r.rate.maxRate === null ? 'none' : `${r.rate.maxRate}/s`}`,
    r.gateway
      ? `gateway   p95 max ${fmt(r.gateway.p95MaxMs)} ms, median ${fmt(r.gateway.p95MedianMs)} ms, SLO ${fmt(r.gateway.sloMs)} ms; ` +
        `over the SLO in ${r.gateway.pointsOverSlo} of ${r.gateway.pointsWithP95} points`
      : 'gateway   not recorded (no governor decisions while it ran)'
  ];
  if (r.failureReasons.length > 0) {
    lines.push(`failure reasons (of the last ${r.failureReasonsFrom} failures kept):`);
    for (const { reason, count } of r.failureReasons.slice(0, 10)) lines.push(`  ${String(count).padStart(6)}  ${reason}`);
  }
  lines.push(...timelineLines(r.timeline));
  lines.push(`learned   ${r.learned ? JSON.stringify(r.learned) : 'not recorded'}`);
  if (!r.forecast) lines.push('forecast  not recorded');
  else if (r.forecastComparison.length === 0) lines.push(`forecast  ${JSON.stringify(r.forecast)}`);
  else {
    const source = r.forecast.source === 'fixed-rate' ? ' (made without a governor: the fixed rate alone)' : r.forecast.source === 'governor' ? ' (from the live governor)' : '';
    lines.push(`forecast vs actual${source}:`);
    for (const c of r.forecastComparison) {
      const range = c.low !== null && c.high !== null && c.low !== c.high ? ` (${fmt(c.low)}-${fmt(c.high)})` : '';
      const verdict = c.ratio === null ? '' : `  forecast ${c.ratio.toFixed(2)}× actual${c.withinRange === null ? '' : c.withinRange ? ', within its range' : ', outside its range'}`;
      lines.push(`  ${c.field.padEnd(16)} ${(fmt(c.forecast) + range).padStart(22)}  ${fmt(c.actual).padStart(10)}${verdict}`);
    }
  }
  lines.push(`failures  pushctl failures ${r.id} --format csv exports the devices not delivered`);
  return lines.join('\n') + '\n';
}

/** @param {TimelinePoint[]} timeline */
function timelineLines(timeline) {
  if (timeline.length < 2) return ['timeline  not recorded (no samples: was a worker or web process running?)'];
  // Evenly spaced rows, always the first and the last.
  const step = Math.max(1, Math.ceil((timeline.length - 1) / (TEXT_TIMELINE_ROWS - 1)));
  const rows = timeline.filter((_, i) => i % step === 0 || i === timeline.length - 1);
  const out = ['timeline  (UTC)      sent/s   limit/s   p95 ms   SLO ms'];
  for (const p of rows) {
    const over = p.p95Ms !== null && p.sloMs !== null && p.p95Ms > p.sloMs ? '  over SLO' : '';
    out.push(`  ${p.t.slice(11, 19)}  ${fmt(p.ratePerSecond).padStart(9)} ${fmt(p.rateLimit).padStart(9)} ${fmt(p.p95Ms).padStart(8)} ${fmt(p.sloMs).padStart(8)}${over}`);
  }
  return out;
}

/**
 * Forecast fields that name an actual figure, side by side, with forecast ÷ actual and, where
 * the forecast gave a range (`durationLowSeconds`/`durationHighSeconds` for `durationSeconds`),
 * whether the actual fell in it.
 * @param {Record<string, unknown>} forecast
 * @param {Record<string, number | null>} actual
 */
export function compareForecast(forecast, actual) {
  const number = (/** @type {string} */ key) => (typeof forecast[key] === 'number' ? /** @type {number} */ (forecast[key]) : null);
  return Object.keys(actual).filter((field) => typeof forecast[field] === 'number').map((field) => {
    const value = /** @type {number} */ (forecast[field]);
    const real = actual[field];
    const stem = field.replace(/Seconds$/, '');
    const low = number(`${stem}LowSeconds`);
    const high = number(`${stem}HighSeconds`);
    return {
      field, forecast: value, actual: real, low, high,
      ratio: real ? Math.round((value / real) * 100) / 100 : null,
      withinRange: real === null || low === null || high === null ? null : real >= low && real <= high
    };
  });
}

/** @param {string | null} value @returns {Record<string, unknown> | null} */
function parseSlot(value) {
  if (!value) return null;
  try {
    const parsed = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' ? parsed : { value: parsed };
  } catch {
    return { unreadable: value.slice(0, 200) };
  }
}

/** @param {{ reason: string }[]} failures */
function countReasons(failures) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const { reason } of failures) counts.set(reason || '(no reason)', (counts.get(reason || '(no reason)') ?? 0) + 1);
  return [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count);
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2);
}

/** @param {number | null} n */
const fmt = (n) => (n === null ? '-' : String(Math.round(n * 10) / 10));
/** @param {number} n */
const round = (n) => Math.round(n * 1000) / 1000;
/** @param {number} ms */
const iso = (ms) => new Date(ms).toISOString();
