// What the demo prints and writes: one live line per governor decision, the verdict on what
// it promised, a JSON summary and the chart.
import { cpus } from 'node:os';
import { renderDemoChart } from './chart.js';
import { niceCeil } from '../sim/svg.js';
import { rateAtP95 } from './gateway.js';
import { windowsOf, sloShare, secondsSeries, responsesPerSecond } from './report.js';
import { compareForecast } from '../shared/campaign/campaign-report.js';

/** @typedef {import('./run-demo.js').DemoRecord} DemoRecord */
/** @typedef {import('./stack.js').GovernorTick} GovernorTick */

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** The header over the live lines. */
export const LIVE_HEADER = '      t   rate/s  reason     │ gateway p95 / SLO   req/s  capacity est. │ delivered';

/**
 * One line per governor decision: the rate it set and why, what it saw of the gateway, its
 * capacity estimate, and the campaign's progress.
 * @param {GovernorTick} tick
 * @param {{ delivered: number, campaignStart: number | null }} progress
 * @param {number} audience
 * @param {number} sloP95Ms
 */
export function liveLine(tick, { delivered, campaignStart }, audience, sloP95Ms) {
  const t = campaignStart === null ? ' warm-up' : `${((tick.at - campaignStart) / 1000).toFixed(1).padStart(6)} s`;
  const g = tick.gateway;
  const p95 = g ? `${int.format(g.p95Ms).padStart(5)} / ${sloP95Ms} ms` : '    – / ' + sloP95Ms + ' ms';
  // The probe's reading has no gateway load in it (rps null).
  const rps = g && g.rps !== null ? int.format(g.rps).padStart(6) : '     –';
  const capacity = tick.capacity === null ? '–' : int.format(tick.capacity);
  const share = ((100 * delivered) / audience).toFixed(0).padStart(3);
  return `${t}  ${int.format(tick.rate).padStart(6)}  ${tick.reason.padEnd(10)} │ ${p95}  ${rps}  ${capacity.padStart(13)} │ ` +
    `${int.format(delivered).padStart(6)} / ${int.format(audience)} ${share}%`;
}

/**
 * The verdict: wall time, the share of 5-s windows within the SLO, exactly-once delivery.
 * @param {DemoRecord} record
 * @param {number} finishedAt  ms since the epoch, after cleanup
 */
export function summarize(record, finishedAt) {
  const { audience, devices, emulator, campaign, world } = record;
  const windows = windowsOf(record.samples, { from: record.campaignStart, to: record.evaluationEnd, windowMs: world.evaluationWindowMs });
  const slo = sloShare(windows, world.sloP95Ms);
  const wallMs = finishedAt - record.startedAt;
  const campaignMs = record.campaignEnd === null ? null : record.campaignEnd - record.campaignStart;
  const perSecond = [...record.deliveriesPerSecond.values()];
  const delivered = Number(campaign.delivered ?? 0);
  const exactlyOnce = emulator.published === audience && emulator.distinctTargets === audience &&
    devices.deliveries === audience && devices.duplicates === 0 && delivered === audience;
  const checks = {
    wallTime: { ok: wallMs < world.maxWallMs, wallSeconds: round(wallMs / 1000, 1), limitSeconds: world.maxWallMs / 1000 },
    slo: { ok: slo.evaluated > 0 && slo.share >= world.minShareWithinSlo, windowSeconds: world.evaluationWindowMs / 1000, evaluated: slo.evaluated,
      within: slo.within, share: round(slo.share, 4), required: world.minShareWithinSlo, sloP95Ms: world.sloP95Ms },
    exactlyOnce: { ok: exactlyOnce, audience, publishes: emulator.published, distinctEndpoints: emulator.distinctTargets,
      deviceDeliveries: devices.deliveries ?? 0, duplicates: devices.duplicates ?? 0, campaignDelivered: delivered,
      campaignFailed: Number(campaign.failed ?? 0) }
  };
  return {
    ok: record.failure === null && checks.wallTime.ok && checks.slo.ok && checks.exactlyOnce.ok,
    failure: record.failure,
    date: new Date(record.startedAt).toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
    checks,
    campaign: {
      seconds: campaignMs === null ? null : round(campaignMs / 1000, 1),
      meanSendRate: campaignMs ? round((delivered * 1000) / campaignMs, 1) : null,
      peakSendRatePerSecond: Math.max(0, ...perSecond),
      peakGovernorRate: round(Math.max(0, ...record.ticks.filter((t) => t.at >= record.campaignStart && t.at <= (record.campaignEnd ?? Infinity)).map((t) => t.rate)), 1),
      // The forecast pushctl send made at launch and kept with the campaign, against what happened.
      forecast: forecastAgainstActual(campaign.forecast, campaignMs)
    },
    gateway: {
      peakP95Ms: round(slo.peakP95Ms, 1),
      requests: windows.reduce((n, w) => n + w.requests, 0),
      errors: windows.reduce((n, w) => n + w.errors, 0),
      opens: devices.opens ?? 0,
      // The phones' failed calls by cause (HTTP status or socket error), the whole run.
      failures: devices.failures ?? {},
      ...capacities(world),
      // The real gateway's CPU work per request, measured (the modelled one has none).
      workMsPerRequest: record.gatewayStats ? round(record.gatewayStats.workMsPerRequest, 2) : null
    },
    windows: windows.map((w) => ({ t: round((w.start - record.campaignStart) / 1000, 1), p95Ms: round(w.p95Ms, 1), rps: round(w.rps, 1), errors: w.errors })),
    // The governor's decisions as it logged them (t: seconds since the campaign started).
    decisions: record.ticks.map(({ at, ...tick }) => ({ t: round((at - record.campaignStart) / 1000, 1), ...tick })),
    gatewayKind: world.gateway.kind,
    source: record.source,
    fixedRate: record.fixedRate,
    settings: world,
    keyPrefix: record.prefix
  };
}

/**
 * @param {string | undefined} stored  the campaign's `forecast` field (shared/forecast/launch-forecast.js forecastRecord)
 * @param {number | null} campaignMs
 */
function forecastAgainstActual(stored, campaignMs) {
  if (!stored) return null;
  const f = JSON.parse(stored);
  const [d] = compareForecast(f, { durationSeconds: campaignMs === null ? null : round(campaignMs / 1000, 1) });
  return {
    source: f.source, seconds: d.forecast, lowSeconds: d.low, highSeconds: d.high, calibration: f.calibration ?? null,
    actualSeconds: d.actual, forecastOverActual: d.ratio, withinRange: d.withinRange
  };
}

/**
 * The gateway's capacity: at full CPU, and for the modelled one (from its formula) where the
 * stationary p95 meets the SLO and the setpoint; the real one's are for the bench to measure.
 * @param {import('./settings.js').DemoWorld} world
 * @returns {{ capacityRps: number, sloCapacityRps: number | null, setpointCapacityRps: number | null }}
 */
function capacities({ gateway, sloP95Ms, setpointRatio }) {
  if (gateway.kind === 'real') return { capacityRps: round(1000 / gateway.cpuMs, 1), sloCapacityRps: null, setpointCapacityRps: null };
  return {
    capacityRps: (gateway.processes * 1000) / gateway.serviceMs,
    sloCapacityRps: round(rateAtP95(gateway, sloP95Ms), 1),
    setpointCapacityRps: round(rateAtP95(gateway, setpointRatio * sloP95Ms), 1)
  };
}

/** @typedef {ReturnType<typeof summarize>} DemoSummary */

/**
 * The verdict as text.
 * @param {DemoSummary} s
 */
export function verdictLines(s) {
  const { wallTime, slo, exactlyOnce } = s.checks;
  const mark = (/** @type {boolean} */ ok) => (ok ? 'ok' : 'FAILED');
  const lines = [];
  if (s.failure) lines.push(`the demo stopped early: ${s.failure}`);
  lines.push(`wall time        ${wallTime.wallSeconds} s (limit ${wallTime.limitSeconds} s)  ${mark(wallTime.ok)}`);
  lines.push(`gateway p95      within the ${slo.sloP95Ms} ms SLO in ${slo.within} of ${slo.evaluated} ${slo.windowSeconds}-s windows ` +
    `(${(100 * slo.share).toFixed(1)}%, need ≥ ${100 * slo.required}%); peak ${int.format(s.gateway.peakP95Ms)} ms, ${s.gateway.errors} errors  ${mark(slo.ok)}`);
  lines.push(`exactly once     ${int.format(exactlyOnce.deviceDeliveries)} of ${int.format(exactlyOnce.audience)} devices got the push, ` +
    `${exactlyOnce.duplicates} duplicates (SNS emulator: ${int.format(exactlyOnce.publishes)} publishes to ${int.format(exactlyOnce.distinctEndpoints)} endpoints; ` +
    `campaign: ${int.format(exactlyOnce.campaignDelivered)} delivered, ${exactlyOnce.campaignFailed} failed)  ${mark(exactlyOnce.ok)}`);
  if (s.campaign.seconds !== null) {
    lines.push(`campaign         ${int.format(exactlyOnce.audience)} devices in ${s.campaign.seconds} s: ${s.campaign.meanSendRate} sends/s on average, ` +
      `${s.campaign.peakSendRatePerSecond} in the busiest second; ${int.format(s.gateway.opens)} opens, ${int.format(s.gateway.requests)} gateway requests`);
  }
  const f = s.campaign.forecast;
  if (f && f.source === 'governor') {
    lines.push(`forecast         ${f.seconds} s at launch (likely ${f.lowSeconds}-${f.highSeconds} s, ${f.calibration ? `calibrated ×${f.calibration.ratio}` : 'not calibrated: no earlier campaign'})` +
      (f.forecastOverActual === null ? '' : `: ${f.forecastOverActual}× the actual`));
  }
  return lines;
}

/**
 * The chart: send rate, gateway load against its capacity, p95 against the SLO, progress.
 * @param {DemoRecord} record
 * @param {DemoSummary} summary
 */
export function chartOf(record, summary) {
  const t0 = record.campaignStart;
  const rel = (/** @type {number} */ ms) => (ms - t0) / 1000;
  const from = record.ticks.length ? Math.min(record.ticks[0].at - 2000, t0) : t0;
  const xFrom = Math.floor(rel(from));
  const xTo = Math.ceil(rel(record.evaluationEnd));
  const sends = smooth(secondsSeries(record.deliveriesPerSecond, from, record.evaluationEnd, t0), 2);
  const load = smooth(secondsSeries(responsesPerSecond(record.samples), from, record.evaluationEnd, t0), 2);
  // Windows aligned on the campaign's start, the warm-up's too.
  const { world } = record;
  const windowMs = world.evaluationWindowMs;
  const first = t0 - Math.ceil((t0 - from) / windowMs) * windowMs;
  const windows = windowsOf(record.samples, { from: first, to: record.evaluationEnd, windowMs });
  /** @type {[number, number][]} */
  const p95 = [];
  for (const w of windows) p95.push([rel(w.start), w.p95Ms], [rel(w.start + windowMs), w.p95Ms]);
  // After the campaign the controller keeps planning with nothing to send: not worth a line.
  const rates = record.ticks.filter((t) => t.at <= (record.campaignEnd ?? Infinity)).map((t) => /** @type {[number, number]} */ ([rel(t.at), t.rate]));
  let cumulative = 0;
  const progress = secondsSeries(record.deliveriesPerSecond, from, record.evaluationEnd, t0)
    .map(([t, n]) => /** @type {[number, number]} */ ([t + 1, (100 * (cumulative += n)) / record.audience]));
  const capacity = summary.gateway.capacityRps;
  const { checks } = summary;
  return renderDemoChart({
    title: `pushpace demo: ${int.format(record.audience)} devices, ${world.gateway.kind} gateway, ` +
      (record.fixedRate === null ? `governor steering by the gateway's ${record.source === 'probe' ? 'probe' : '/metrics'}` : `fixed ${record.fixedRate} sends/s`),
    subtitle: `${summary.date.slice(0, 16).replace('T', ' ')} UTC · ${checks.wallTime.wallSeconds} s wall time · p95 within the SLO in ` +
      `${(100 * checks.slo.share).toFixed(1)}% of 5-s windows · ${int.format(checks.exactlyOnce.deviceDeliveries)} delivered, ${checks.exactlyOnce.duplicates} duplicates`,
    xFrom,
    xTo,
    panels: [
      {
        title: 'sends per second',
        yMax: niceCeil(Math.max(10, ...sends.map(([, v]) => v), ...rates.filter(([t]) => t >= 0).map(([, v]) => v)) * 1.1),
        lines: [
          { label: 'rate the governor set', points: rates, colour: '#ff7f0e', step: true },
          { label: 'delivered by SNS (2-s mean)', points: sends, colour: '#1f77b4' }
        ]
      },
      {
        title: 'gateway requests per second',
        yMax: niceCeil(capacity * 1.15),
        lines: [
          { label: 'answered (2-s mean)', points: load, colour: '#1f77b4' },
          { label: `governor's capacity estimate (p95 at ${100 * world.setpointRatio}% of the SLO)`, points: record.ticks.filter((t) => t.capacity !== null).map((t) => [rel(t.at), /** @type {number} */ (t.capacity)]), colour: '#ff7f0e', step: true }
        ],
        levels: [
          { y: capacity, label: `full CPU (${int.format(capacity)}/s)`, dash: '6 4' },
          // Known only for the modelled gateway, from its formula.
          ...(summary.gateway.sloCapacityRps === null || summary.gateway.setpointCapacityRps === null ? [] : [
            { y: summary.gateway.sloCapacityRps, label: `p95 = SLO, steady (${int.format(summary.gateway.sloCapacityRps)}/s)` },
            { y: summary.gateway.setpointCapacityRps, label: `p95 = ${world.setpointRatio * world.sloP95Ms} ms (${int.format(summary.gateway.setpointCapacityRps)}/s)`, colour: '#ff7f0e' }
          ])
        ]
      },
      {
        title: 'gateway p95 per 5-s window (ms)',
        yMax: niceCeil(Math.max(world.sloP95Ms * 1.5, ...windows.map((w) => (Number.isFinite(w.p95Ms) ? w.p95Ms : 0))) * 1.05),
        lines: [
          { label: `p95 (every user request, exact, as the ${world.judgedBy} saw it)`, points: p95, colour: '#1f77b4' },
          { label: `p95 the governor read (${world.priors.metricsWindowMs / 1000}-s ${record.source === 'probe' ? 'probe' : 'scrape'})`, points: record.ticks.filter((t) => t.gateway).map((t) => [rel(t.at), /** @type {any} */ (t.gateway).p95Ms]), colour: '#bbb', width: 1 }
        ],
        levels: [{ y: world.sloP95Ms, label: `SLO ${world.sloP95Ms} ms`, colour: '#d62728' }]
      },
      {
        title: 'campaign progress (% of devices delivered)',
        yMax: 100,
        lines: [{ label: 'delivered', points: progress, colour: '#2ca02c' }]
      }
    ]
  });
}

/**
 * Means over consecutive groups of `n` one-second points, placed at the group's middle.
 * @param {[number, number][]} points
 * @param {number} n
 * @returns {[number, number][]}
 */
function smooth(points, n) {
  /** @type {[number, number][]} */
  const out = [];
  for (let i = 0; i + n <= points.length; i += n) {
    let sum = 0;
    for (let j = i; j < i + n; j++) sum += points[j][1];
    out.push([points[i][0] + n / 2, sum / n]);
  }
  return out;
}

/** @param {number} v @param {number} digits */
function round(v, digits) {
  if (!Number.isFinite(v)) return v;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
