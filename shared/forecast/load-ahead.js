// The dashboard chart's future: the wake-up load a running campaign is predicted to put on
// the gateway over the next minutes, with its band, against the capacity. From the governor's
// live model, the campaign's sends so far (their wake-ups are still arriving) and its
// devices still to send (campaign-forecast.js plans them). Pure.
import { forecastCampaign } from './campaign-forecast.js';

/** How far ahead the chart looks. */
export const AHEAD_MS = 15 * 60_000;

/**
 * @typedef {object} LoadAhead
 * @property {number[]} t          ms since the epoch, from now, one per forecast bin
 * @property {number[]} loadRps    expected gateway load (baseline + wake-ups)
 * @property {number[]} lowRps     the band: the load if requests per send are one sd lower / higher
 * @property {number[]} highRps
 * @property {number} capacityRps  the governor's capacity estimate (the load at its latency setpoint)
 * @property {number} durationSeconds  the devices still to send are expected out this long from now
 */

/**
 * @param {import('./campaign-forecast.js').LiveModel} model
 * @param {{ remaining: number, points: Array<{ t: number, processed: number }>, now: number, maxRate?: number | null }} campaign
 *   points: the campaign's samples (processed counts), oldest first, covering up to the last hour
 * @returns {LoadAhead}
 */
export function loadAhead(model, { remaining, points, now, maxRate = null }) {
  /** @type {import('./campaign-forecast.js').SendHistory} */
  const history = [];
  for (let i = 1; i < points.length; i++) history.push({ at: points[i].t, sent: Math.max(0, points[i].processed - points[i - 1].processed) });
  // Replayed as far as the chart looks; the devices left beyond it go at the rate reached by then.
  const forecast = forecastCampaign(model, { devices: Math.max(0, remaining), now, maxRate, history, horizonSeconds: AHEAD_MS / 1000 });
  const bins = forecast.load.filter((p) => p.t * 1000 <= AHEAD_MS);
  return {
    t: bins.map((p) => now + p.t * 1000),
    loadRps: bins.map((p) => p.loadRps),
    lowRps: bins.map((p) => p.lowRps),
    highRps: bins.map((p) => p.highRps),
    capacityRps: model.capacityRps,
    durationSeconds: forecast.durationSeconds
  };
}
