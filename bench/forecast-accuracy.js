// Forecast accuracy (issue #14, point 2): on simulated worlds, the forecast a dry run would
// print at launch (shared/forecast/campaign-forecast.js, from the controller's snapshot
// after the warm-up, as the governor publishes it) against the campaign's actual duration
// under the same controller. Each world sends two campaigns and the second is forecast: in
// service the governor has met the audience before, and memory gives the prior. The shipped scenarios (sim/scenarios) and worlds of every
// family (sim/families.js) from the held-out seeds and, apart, from a tuning seed.
//
// `node bench/forecast-accuracy.js [count]` prints the markdown of its bench/RESULTS.md
// section; `npm run bench -- forecast` appends it.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drawScenario, worldSeed, FAMILY_NAMES, heldOutSeeds } from '../sim/families.js';
import { resolveScenario, loadScenario } from '../sim/scenario.js';
import { simulate } from '../sim/simulate.js';
import { createAdaptiveStrategy, adaptiveControllerOptions } from '../sim/strategies/adaptive.js';
import { resolveControllerOptions } from '../shared/pacing/controller-options.js';
import { liveModelOf } from '../shared/governor/live-model.js';
import { forecastCampaign } from '../shared/forecast/campaign-forecast.js';
import { afterFirstCampaign, quietDay, calmTwin } from '../sim/second-campaign.js';

/** The target: the forecast duration within ±20% of the actual in this share of runs. */
export const FORECAST_TARGET = Object.freeze({ within: 0.2, share: 0.8 });

/** Worlds per family. */
export const FORECAST_COUNT = 10;

/**
 * A campaign as the governor meets it in service: the same audience got one campaign on an
 * earlier, quiet day (sim/second-campaign.js quietDay: its own noise, no unannounced events).
 * What its controller learned is the memory (shared/pacing/wake-up-memory.js) the second
 * starts from and the forecast calibrates itself against; the second meets the world as drawn,
 * events and all, which nobody announced to the forecast.
 *
 * Where the day has an unannounced event, the same campaign also runs on its calm twin (the
 * same seed and noise, no unannounced event: sim/second-campaign.js calmTwin). Until the
 * event the two are the same run, so the forecast at launch is the same number for both; when
 * their actual durations differ by more than 1.5×, no forecast made at launch can be within
 * ±20% of both.
 * @param {import('../sim/scenario.js').Scenario} scenario
 */
export function secondCampaignForecast(scenario) {
  const { prior, informed, entry } = afterFirstCampaign(scenario, { firstIn: quietDay(scenario), keepsCapacity: true });
  const shape = prior.fromMemory > 0 ? prior.shape : null;
  const earlier = entry ? [entry] : [];
  const run = forecastRun(informed, shape, earlier);
  if (!run.eventful) return { ...run, calm: null };
  const calm = forecastRun(calmTwin(informed), shape, earlier);
  return { ...run, calm: { actualSeconds: calm.actualSeconds, forecastSeconds: calm.forecastSeconds, ratio: calm.ratio } };
}

/**
 * One campaign: the forecast at its first send and what happened.
 * @param {import('../sim/scenario.js').Scenario} scenario
 * @param {{ medianFactor: number, sigmaFactor: number } | null} [rememberedShape]
 * @param {import('../shared/pacing/wake-up-memory.js').MemoryEntry[]} [earlier]  the memory, which calibrates the forecast
 */
export function forecastRun(scenario, rememberedShape = null, earlier = []) {
  /** @type {import('../shared/forecast/campaign-forecast.js').Forecast | null} */
  let forecast = null;
  const options = resolveControllerOptions(adaptiveControllerOptions(scenario));
  const factory = (/** @type {any} */ s, /** @type {any} */ world) => {
    const strategy = createAdaptiveStrategy(s, world);
    return {
      name: strategy.name,
      trace: strategy.trace,
      /** @param {Parameters<typeof strategy.sendsAt>[0]} input */
      sendsAt(input) {
        const n = strategy.sendsAt(input);
        if (forecast === null && input.t >= 0) {
          const last = strategy.trace?.at(-1);
          const model = liveModelOf(strategy.snapshot?.() ?? {}, options, { at: 0, rate: Number(last?.rate ?? 0), reason: String(last?.reason ?? ''), rememberedShape });
          forecast = forecastCampaign(model, { devices: scenario.audience, earlier });
        }
        return n;
      }
    };
  };
  const result = simulate(scenario, factory);
  const f = /** @type {import('../shared/forecast/campaign-forecast.js').Forecast} */ (/** @type {unknown} */ (forecast));
  return {
    audience: scenario.audience,
    actualSeconds: result.completionSeconds,
    forecastSeconds: f.durationSeconds,
    modelSeconds: f.modelDurationSeconds,
    calibration: f.calibration,
    lowSeconds: f.durationLowSeconds,
    highSeconds: f.durationHighSeconds,
    ratio: result.completionSeconds ? f.durationSeconds / result.completionSeconds : null,
    inRange: result.completionSeconds !== null && result.completionSeconds >= f.durationLowSeconds && result.completionSeconds <= f.durationHighSeconds,
    eventful: [...scenario.gateway.capacityChanges, ...scenario.baseline.spikes].some((e) => !e.announced)
  };
}

/** @param {number} x */
const pct = (x) => `${(100 * x).toFixed(0)}%`;

/** @param {number | null} ratio  forecast/actual (null: the campaign did not finish) */
const isWithin = (ratio) => ratio !== null && Math.abs(ratio - 1) <= FORECAST_TARGET.within;

/**
 * @param {Array<ReturnType<typeof forecastRun> & { calm?: { actualSeconds: number | null, forecastSeconds: number, ratio: number | null } | null }>} runs
 */
export function summariseForecasts(runs) {
  const ratios = runs.map((r) => r.ratio ?? 0).sort((a, b) => a - b);
  const q = (/** @type {number} */ p) => ratios[Math.min(ratios.length - 1, Math.floor(p * ratios.length))];
  const within = runs.filter((r) => isWithin(r.ratio)).length;
  // The runs with an unannounced event, against their calm twins (see secondCampaignForecast).
  const paired = runs.flatMap((r) => (r.calm ? [{ actual: r.actualSeconds, calm: r.calm }] : []));
  /** The event's effect on the actual duration: event / calm (null: exactly one of them did not finish; both: 1). */
  const effect = (/** @type {typeof paired[number]} */ p) => (p.actual === null || p.calm.actualSeconds === null ? (p.actual === p.calm.actualSeconds ? 1 : null) : p.actual / p.calm.actualSeconds);
  const limit = (1 + FORECAST_TARGET.within) / (1 - FORECAST_TARGET.within);
  return {
    runs: runs.length,
    within,
    share: runs.length ? within / runs.length : 0,
    inRange: runs.filter((r) => r.inRange).length,
    unfinished: runs.filter((r) => r.actualSeconds === null).length,
    quantiles: { p10: q(0.1), p25: q(0.25), p50: q(0.5), p75: q(0.75), p90: q(0.9) },
    twins: {
      pairs: paired.length,
      /** The forecast within ±20% of the calm twin's actual. */
      calmWithin: paired.filter((p) => isWithin(p.calm.ratio)).length,
      /** The event moves the actual by more than (1 + w)/(1 − w) = 1.5×: no one number is within ±w of both. */
      apart: paired.filter((p) => { const e = effect(p); return e === null || e > limit || e < 1 / limit; }).length,
      /** A forecast exactly right on the calm twin would be within ±20% of the event day's actual. */
      calmExactWithin: paired.filter((p) => { const e = effect(p); return e !== null && isWithin(1 / e); }).length
    }
  };
}

/**
 * @param {{ count?: number, seeds?: 'held-out' | 'tuning' | 'both', families?: readonly string[], fresh?: boolean }} [options]
 *   fresh: forecast a world's first campaign (from the configured prior) instead of its second
 */
export function benchForecastAccuracy({ count = FORECAST_COUNT, seeds = 'both', families = FAMILY_NAMES, fresh = false } = {}) {
  const started = performance.now();
  const fixed = heldOutSeeds();
  const dir = fileURLToPath(new URL('../sim/scenarios/', import.meta.url));
  const shipped = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((file) => ({ name: file.replace(/\.json$/, ''), ...secondCampaignForecast(loadScenario(dir + file)) }));
  const familyRuns = (/** @type {(family: string) => number} */ seedOf) => families.flatMap((family) => {
    const runs = [];
    for (let k = 0; k < count; k++) {
      const raw = drawScenario(family, worldSeed(family, seedOf(family), k));
      runs.push({ family, k, ...(fresh ? forecastRun(resolveScenario(raw, raw.name)) : secondCampaignForecast(resolveScenario(raw, raw.name))) });
    }
    return runs;
  });
  const heldOut = seeds === 'tuning' ? [] : familyRuns((family) => fixed.heldOut[family]);
  const tuning = seeds === 'held-out' ? [] : familyRuns(() => fixed.tuning[0]);
  return {
    count, shipped, heldOut, tuning,
    summary: { shipped: summariseForecasts(shipped), heldOut: summariseForecasts(heldOut), tuning: summariseForecasts(tuning) },
    runtimeMs: Math.round(performance.now() - started)
  };
}

/** @param {ReturnType<typeof benchForecastAccuracy>} r */
export function formatForecastSection(r) {
  const row = (/** @type {string} */ name, /** @type {ReturnType<typeof summariseForecasts>} */ s) =>
    `| ${name} | ${s.runs} | ${s.within} (${pct(s.share)}) | ${s.inRange} | ${s.unfinished} | ` +
    `${[s.quantiles.p10, s.quantiles.p25, s.quantiles.p50, s.quantiles.p75, s.quantiles.p90].map((x) => x.toFixed(2)).join(' / ')} |`;
  const byFamily = [...new Set(r.heldOut.map((x) => x.family))].map((family) => row(`held-out: ${family}`, summariseForecasts(r.heldOut.filter((x) => x.family === family))));
  const s = r.summary;
  return [
    `### Forecast accuracy (issue #14, point 2): the duration forecast at launch against the actual`,
    `The forecast a dry run prints (shared/forecast/campaign-forecast.js). Each world sends two campaigns (sim/second-campaign.js): ` +
      `the first on an earlier, quiet day (its own noise, no unannounced events), the second in the world as drawn. The forecast is made for ` +
      `the second at its first send, from the controller's snapshot after the warm-up (the capacity the first learned kept, as the ` +
      `always-running governor keeps it), the memory of the first, and calibrated against the first (its duration against the model's ` +
      `replay of it), and set against the second's completion. Target: within ±${pct(FORECAST_TARGET.within)} in ≥ ${pct(FORECAST_TARGET.share)} of runs. ` +
      `${r.count} worlds per family and seed; ${(r.runtimeMs / 1000).toFixed(0)} s.`, '',
    '| worlds | runs | within ±20% | actual in [low, high] | not finished | forecast/actual p10 / p25 / p50 / p75 / p90 |', '|---|---|---|---|---|---|',
    row('shipped scenarios', s.shipped),
    ...(r.heldOut.length ? [row('**held-out seeds, all families**', s.heldOut), ...byFamily] : []),
    ...(r.heldOut.length ? [row('held-out, quiet families (no unannounced event)', summariseForecasts(r.heldOut.filter((x) => x.eventful === false))),
      row('held-out, with an unannounced event', summariseForecasts(r.heldOut.filter((x) => x.eventful === true)))] : []),
    ...(r.tuning.length ? [row('tuning seed (not the target)', s.tuning)] : []),
    '',
    `Target on the held-out worlds: ${s.heldOut.runs ? (s.heldOut.share >= FORECAST_TARGET.share ? 'met' : `**not met** (${pct(s.heldOut.share)} of ${pct(FORECAST_TARGET.share)})`) : 'not measured'}.`,
    ...twinLines(r),
    '', '| shipped scenario | actual s | forecast s (low-high) |', '|---|---|---|',
    ...r.shipped.map((x) => `| ${x.name} | ${x.actualSeconds ?? 'not finished'} | ${x.forecastSeconds} (${x.lowSeconds}-${x.highSeconds}) |`)
  ].join('\n');
}

/**
 * What the forecast could not know: the runs with an unannounced event against their calm twins.
 * @param {ReturnType<typeof benchForecastAccuracy>} r
 */
function twinLines(r) {
  const lines = [];
  for (const [name, s] of /** @type {const} */ ([['held-out', r.summary.heldOut], ['tuning', r.summary.tuning]])) {
    const t = s.twins;
    if (!t.pairs) continue;
    const quiet = s.runs - t.pairs;
    lines.push('', `Unannounced events, ${name} worlds: ${t.pairs} of ${s.runs} runs have one. On each one's calm twin (the same world, seed and noise, ` +
      `no unannounced event; the forecast at launch is the same number) the forecast is within ±20% in ${t.calmWithin} of ${t.pairs}. ` +
      `The event moves the actual duration by more than 1.5× (or only one of the two finished) in ${t.apart} of ${t.pairs}: no forecast made ` +
      `at launch is within ±20% of both. A forecast exactly right on every calm day would be within ±20% of the event day in ${t.calmExactWithin} ` +
      `of ${t.pairs}; with every one of the ${quiet} other runs right as well, at most ${quiet + t.calmExactWithin} of ${s.runs} ` +
      `(${pct((quiet + t.calmExactWithin) / s.runs)}).`);
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const count = Number(process.argv[2] ?? FORECAST_COUNT);
  const seeds = /** @type {'held-out' | 'tuning' | 'both'} */ (process.argv[3] ?? 'both');
  const r = benchForecastAccuracy({ count, seeds, fresh: process.env.FORECAST_FRESH === '1' });
  if (process.env.FORECAST_ROWS) for (const x of [...r.shipped, ...r.tuning, ...r.heldOut]) console.error(JSON.stringify(x));
  console.log(formatForecastSection(r));
}
