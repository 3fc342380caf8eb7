// What a forecast costs: `pushctl send` and the scheduler's fires make one before a launch,
// and the dashboard's web process one per running campaign every few seconds (in a thread:
// shared/forecast/load-ahead-thread.js). A replay costs one controller update per tick over the
// wake-up kernel's bins, so a governor that ticks every second was the dear case (a 1M-device
// forecast took 29 s on the 2-core machine; docs/pacing.md "The replay's tick"). Target: every
// forecast here under 2 s, a user's wait at `pushctl send`, and far inside a scheduler's 30-s lease.
import { performance } from 'node:perf_hooks';
import { forecastCampaign } from '../shared/forecast/campaign-forecast.js';
import { loadAhead } from '../shared/forecast/load-ahead.js';
import { liveModelOf } from '../shared/governor/live-model.js';
import { resolveControllerOptions } from '../shared/pacing/controller-options.js';
import { median } from './support.js';

export const FORECAST_COST_TARGET_MS = 2000;
const AT = Date.UTC(2026, 10, 24, 12);

/** The forecast tests' model (1.5 requests per send, baseline 300, capacity 1,000) at a tick. @param {number} tickMs */
const modelAt = (tickMs) => liveModelOf({ requestsPerSend: 1.5, requestsPerSendSd: 0.15, baseline: 300, baselineSd: 5, capacity: 1000, medianFactor: 1, sigmaFactor: 1, excessNoiseRps: 0 },
  resolveControllerOptions({ metricsWindowMs: tickMs, binMs: tickMs }), { at: AT, rate: 100, reason: 'plan' });

/** @template T @param {() => T} f @param {number} rounds @returns {{ ms: number, value: T }} the median time, the last value */
function timed(f, rounds) {
  const times = [];
  let value;
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    value = f();
    times.push(performance.now() - start);
  }
  return { ms: median(times), value: /** @type {T} */ (value) };
}

/** @param {{ ticks?: number[], audiences?: number[], rounds?: number }} [options] */
export function benchForecastCost({ ticks = [1000, 2000, 5000, 10_000], audiences = [3000, 100_000, 1_000_000], rounds = 3 } = {}) {
  const rows = [];
  for (const devices of audiences) {
    const reference = forecastCampaign(modelAt(10_000), { devices }).durationSeconds;
    for (const tickMs of ticks) {
      const launch = timed(() => forecastCampaign(modelAt(tickMs), { devices }), rounds);
      // The chart: the same campaign with its devices all still to send, 15 minutes ahead.
      const chart = timed(() => loadAhead(modelAt(tickMs), { remaining: devices, points: [], now: AT }), rounds);
      const load = launch.value.load;
      rows.push({
        tickSeconds: tickMs / 1000, devices, launchMs: launch.ms, chartMs: chart.ms, durationSeconds: launch.value.durationSeconds,
        replayTickSeconds: load.length > 1 ? load[1].t - load[0].t : null, durationOverTenSecond: launch.value.durationSeconds / reference
      });
    }
  }
  const pass = rows.every((r) => r.launchMs <= FORECAST_COST_TARGET_MS && r.chartMs <= FORECAST_COST_TARGET_MS);
  return { rows, rounds, pass };
}

/** @param {ReturnType<typeof benchForecastCost>} r */
export function formatForecastCostSection(r) {
  const text = ['### A forecast\'s cost, by the governor\'s tick (`npm run bench -- forecast-cost`)',
    `The forecast tests' model (1.5 requests per send, baseline 300 requests/s, capacity 1,000, the default open delays); median of ${r.rounds} rounds. ` +
    'Launch: `forecastCampaign` as `pushctl send` makes it. Chart: `loadAhead`, the dashboard\'s next 15 minutes. Duration ÷ 10-s: ' +
    'the forecast against the same campaign\'s for a governor ticking every 10 s.', '',
    '| governor tick | devices | launch forecast | chart | replayed at | duration | ÷ 10-s |', '|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.tickSeconds} s | ${x.devices.toLocaleString('en-US')} | ${x.launchMs.toFixed(0)} ms | ${x.chartMs.toFixed(0)} ms | ` +
      `${x.replayTickSeconds ?? '–'} s | ${x.durationSeconds} s | ${x.durationOverTenSecond.toFixed(3)} |`), '',
    `Target: every forecast under ${FORECAST_COST_TARGET_MS / 1000} s: ${r.pass ? 'met' : 'NOT met'}.`, ''].join('\n');
  return { text, pass: r.pass };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(formatForecastCostSection(benchForecastCost()).text);
