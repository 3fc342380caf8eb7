// The forecast pushctl send --dry-run and schedule add print: from the governor's live model
// (shared/governor/live-model.js) when a governor runs, else from the fixed rate, saying so.
// The numbers come from shared/forecast/campaign-forecast.js; this file only asks and words.
import { forecastLaunch as forecastFromModel } from '../../shared/forecast/launch-forecast.js';
import { formatDuration } from '../../shared/campaign/format-duration.js';
import { formatCount, formatRate } from './format.js';

/** @typedef {import('../../shared/forecast/campaign-forecast.js').Forecast} Forecast */

/**
 * The forecast for a launch plan, saying so when no governor made it.
 * @param {import('./context.js').Context} ctx
 * @param {Parameters<typeof forecastFromModel>[2]} campaign
 *   rate: the shared rate now (capped by maxRate); startAt: the first send (a local-time campaign's first release)
 * @returns {Promise<Forecast>}
 */
export async function forecastLaunch(ctx, campaign) {
  const forecast = await forecastFromModel(ctx.redis, ctx.config.keyPrefix, campaign);
  return forecast.source === 'fixed-rate'
    ? { ...forecast, note: `no governor is running: estimate from the fixed rate (${formatRate(campaign.rate)}) alone` }
    : forecast;
}

/**
 * The forecast for --json: everything but the per-bin load (the dashboard's chart draws that).
 * @param {Forecast} forecast
 */
export function forecastJson(forecast) {
  const { load: _load, ...rest } = forecast;
  return rest;
}

/**
 * The forecast in words, one or two sentences.
 * @param {Forecast} f
 */
export function describeForecast(f) {
  if (f.source === 'fixed-rate') {
    return f.averageRate > 0 ? `Forecast: ${f.note}: about ${formatDuration(f.durationSeconds)} at ${formatRate(f.averageRate)}.`
      : 'Forecast: no governor is running and the shared rate is 0 (stopped): nothing is sent until pushctl rate N.';
  }
  const range = f.durationLowSeconds === f.durationHighSeconds ? '' :
    ` (likely ${formatDuration(f.durationLowSeconds)} to ${formatDuration(f.durationHighSeconds)})`;
  const hour = f.baselineAtHour ? `, at the ${String(f.baselineAtHour.hour).padStart(2, '0')}:00 UTC baseline of ${formatCount(Math.round(f.baselineAtHour.rps))} req/s learned from ${formatCount(f.baselineAtHour.windows)} windows` : '';
  return `Forecast from the live governor: about ${formatDuration(f.durationSeconds)}${range}, ` +
    `${formatRate(f.averageRate)} on average; peak gateway load about ${formatCount(Math.round(f.peakLoadRps ?? 0))} req/s ` +
    `(up to ${formatCount(Math.round(f.peakLoadHighRps ?? 0))}) against a capacity of ${formatCount(Math.round(f.capacityRps ?? 0))} req/s` +
    `${hour}; ${f.requestsPerSend} requests per send ± ${f.requestsPerSendSd}. ${describeCalibration(f)}${f.note ? ` ${f.note}.` : ''}`;
}

/**
 * How the duration was calibrated against recent campaigns, in words.
 * @param {Forecast} f
 */
function describeCalibration(f) {
  const c = f.calibration;
  if (!c) return 'Not calibrated: the memory holds no finished campaign to check the model against yet.';
  const campaigns = c.campaigns === 1 ? 'the last campaign' : `the last ${c.campaigns} campaigns`;
  return `Calibrated on ${campaigns}: they took ${c.ratio.toFixed(2)}× what the model replays for them, so the model's ` +
    `${formatDuration(f.modelDurationSeconds)} becomes ${formatDuration(f.durationSeconds)}.`;
}
