// How long a campaign of N devices will take, and what wake-up load it will put on the
// gateway, from what the governor believes now (its live model, shared/governor/live-model.js).
//
// The forecast runs the controller itself (createInspectableController: every member of its
// model bank, its guards) in virtual time against a world that is exactly the live model: a
// baseline B, a·g(τ) requests per send (the likeliest open-delay shape, or between campaigns
// the one the memory holds), and a gateway whose p95 reaches the setpoint at the capacity
// estimate. So the caution of a campaign's first minutes (a wide prior on requests per send,
// the slow-opener members), its learning, and the speed-up towards the end (the plan's
// continuation knows the remaining devices) are all in it. Pure: no Redis, no clock.
// (A replay of the plan alone, one member and no guards, forecast 19% of the tuning worlds
// within ±20% against this one's 25%; bench/RESULTS.md.)
//
// The range: the duration if the true requests per send lie at a/(1 + sd/a) (low) or
// a·(1 + sd/a) (high): one standard deviation on a log scale, so a prior with sd = a gives
// half and twice, never a negative gain. The campaign is paced by its wake-up load, so its
// duration scales with a while the plan is capacity-bound; the maximum send rate bounds it
// from below.
//
// Calibration: the model world is simpler than the real one (a log-normal delay, an M/M/1
// latency curve, no noise, no events), and a controller paced by the real one is slower or
// faster than its replay. The memory keeps how long each recent campaign's sends took and in
// what conditions (wake-up-memory.js); the forecast replays each of the last few in its own
// conditions (its baseline, capacity, learned requests per send and delay shape, its size)
// and the ratio of what happened to that replay, averaged on a log scale (weighted by age and
// message kind), scales the duration and its range. Where the forecast has no such campaign
// it says so (calibration null).
import { resolveControllerOptions } from '../pacing/controller-options.js';
import { createInspectableController } from '../pacing/controller.js';
import { binKernel } from '../pacing/wake-up-model.js';
import { shapeMassPerSecond } from '../pacing/bank-members.js';

/**
 * @typedef {object} LiveModel  what the governor believes, as it publishes it each tick
 * @property {number} at                   ms since the epoch: the tick
 * @property {number} requestsPerSend
 * @property {number} requestsPerSendSd
 * @property {number} baselineRps
 * @property {number} baselineSd
 * @property {number} capacityRps          the load the gateway takes at the latency setpoint
 * @property {number} sloP95Ms
 * @property {number} medianFactor         the likeliest open-delay shape: median × this, σ × sigmaFactor
 * @property {number} sigmaFactor
 * @property {number} excessNoiseRps       load noise the filters do not explain
 * @property {number} rate                 the send rate it set last
 * @property {string} reason
 * @property {number | null} remaining     devices the running campaigns still have to send
 * @property {Array<{ hour: number, rps: number, windows: number }>} baselineByHour  by UTC hour, learned from its ticks
 * @property {{ medianFactor: number, sigmaFactor: number } | null} [rememberedShape]  between campaigns: the
 *   open-delay shape earlier campaigns taught (the controller starts each campaign from the configured one
 *   and learns its way there, so the forecast takes the remembered one)
 * @property {Partial<import('../pacing/controller-options.js').ControllerOptions>} options  the controller's options
 */

/**
 * @typedef {object} Forecast
 * @property {'governor' | 'fixed-rate'} source
 * @property {number} devices
 * @property {number} durationSeconds       expected
 * @property {number} durationLowSeconds
 * @property {number} durationHighSeconds
 * @property {number | null} peakLoadRps    expected highest total gateway load (baseline + wake-ups); null without a model
 * @property {number | null} peakLoadHighRps
 * @property {number | null} capacityRps
 * @property {number | null} baselineRps    the baseline used (the learned one at the start's hour, when known)
 * @property {{ hour: number, rps: number, windows: number } | null} baselineAtHour  for a campaign that starts later
 * @property {number | null} requestsPerSend
 * @property {number | null} requestsPerSendSd
 * @property {number} averageRate           devices / expected duration
 * @property {number} modelDurationSeconds  the model's own, before calibration
 * @property {Calibration | null} calibration  how recent campaigns compared with their replays; null: none to compare
 * @property {Array<{ t: number, loadRps: number, lowRps: number, highRps: number }>} load  predicted load per replayed
 *   tick (the governor's metrics window, or a multiple of it: replayTickMs) from the start; t in seconds
 * @property {string} note
 */

/**
 * @typedef {object} Calibration
 * @property {number} campaigns  the recent campaigns compared
 * @property {number} ratio      what happened ÷ the replay, their weighted geometric mean: the duration's factor
 * @property {number} spread     the ratios' geometric standard deviation (1 with one campaign): the range widens by it
 */

/** @typedef {Array<{ at: number, sent: number }>} SendHistory  sends made up to `at` (ms since the epoch) since the previous entry */

/** Windows an hour's baseline needs before it stands in for the current one. */
export const MIN_HOUR_WINDOWS = 30;

/** A campaign starting later than this reads the baseline of its hour, not the current one. */
const LATER_MS = 15 * 60_000;

/** The forecast calibrates itself against this many of the latest campaigns the memory keeps. */
const CALIBRATION_CAMPAIGNS = 3;
/** A campaign's ratio is kept within these: one held by hand (paused, capped by --rate) says little about the model. */
const CALIBRATION_BOUNDS = /** @type {const} */ ([0.2, 5]);
/** Older campaigns count less, halved every week as in the memory; another message kind counts a quarter. */
const CALIBRATION_HALF_LIFE_MS = 7 * 86_400_000;
const OTHER_KIND_WEIGHT = 0.25;

/** The replay's coarsest tick (replayTickMs): a governor that ticks less often is replayed at its own. */
export const FORECAST_COARSE_TICK_MS = 10_000;
/**
 * A replay's budget, in kernel bins visited (3 runs × controller updates × kernel bins):
 * 2.3-28 µs each on the 2-core machine (more where the plan looks for the campaign's end, and
 * with the bank's members), so 0.1-1.4 s.
 */
const REPLAY_BUDGET_BINS = 50_000;

/** The forecast's horizon: beyond it (an endless campaign at a tiny capacity), it stops and says so. */
const MAX_SECONDS = 2 * 86_400;

/**
 * The forecast from a live model.
 * @param {LiveModel} model
 * @param {{ devices: number, startAt?: number, now?: number, maxRate?: number | null, history?: SendHistory,
 *   earlier?: readonly import('../pacing/wake-up-memory.js').MemoryEntry[], kind?: string | null, horizonSeconds?: number }} campaign
 *   startAt: when it starts (ms; now when absent); maxRate: the campaign's own cap (send --rate);
 *   history: sends already made (a running campaign's), whose wake-ups are still to come;
 *   earlier: the memory's entries (governor/model-memory.js), which calibrate it; kind: its message kind;
 *   horizonSeconds: replay this much of the campaign at most, and extrapolate its end (the chart's look ahead)
 * @returns {Forecast}
 */
export function forecastCampaign(model, campaign) {
  if (resolveControllerOptions(model.options).metricsWindowMs >= FORECAST_COARSE_TICK_MS) return forecastAt(model, campaign);
  const coarse = withTickAtLeast(model, FORECAST_COARSE_TICK_MS);
  const pass = forecastAt(coarse, { ...campaign, earlier: [] });
  const tickMs = replayTickMs(model, campaign, pass);
  if (tickMs < FORECAST_COARSE_TICK_MS) return forecastAt(withTickAtLeast(model, tickMs), campaign);
  return (campaign.earlier ?? []).length > 0 ? forecastAt(coarse, campaign) : pass;
}

/**
 * The replay's tick: the governor's own (its metrics window), or the finest multiple of it
 * whose replay stays within REPLAY_BUDGET_BINS, FORECAST_COARSE_TICK_MS at the coarsest. Each
 * tick is one controller update over the wake-up kernel's bins, so the cost goes with the
 * square of 1/tick: a 1M-device forecast took 0.74 s at 10-s ticks, 6.3 s at 2 s and 29 s at
 * 1 s on the 2-core machine, seconds that `pushctl send` made its user wait and that stalled a
 * scheduler's event loop, for durations 1.5% apart. How long the replay runs comes from a first
 * one at the coarsest tick (`pass`, without calibration).
 * @param {LiveModel} model
 * @param {Parameters<typeof forecastAt>[1]} campaign
 * @param {Forecast} pass
 */
function replayTickMs(model, campaign, pass) {
  const o = resolveControllerOptions(model.options);
  const seconds = Math.min(pass.durationHighSeconds, campaign.horizonSeconds ?? Infinity);
  const history = campaign.history ?? [];
  const warmupSeconds = history.length > 0 ? ((campaign.now ?? model.at) - Math.min(...history.map((h) => h.at))) / 1000 : 0;
  for (const k of [1, 2, 5, 10, 20, 50]) {
    const tickMs = k * o.metricsWindowMs;
    if (tickMs >= FORECAST_COARSE_TICK_MS) break;
    const kernelBins = worldKernel(o, model, tickMs).length;
    // The warm-up replays the sends of the last hour at most (pastSendsByBin).
    const updates = 6 + (Math.min(3600, warmupSeconds) + seconds) / (tickMs / 1000);
    if (3 * updates * kernelBins <= REPLAY_BUDGET_BINS) return tickMs;
  }
  return FORECAST_COARSE_TICK_MS;
}

/**
 * The world's wake-up kernel, per tick of `tickMs`: the likeliest shape, or between campaigns the remembered one.
 * @param {Readonly<import('../pacing/controller-options.js').ControllerOptions>} o
 * @param {LiveModel} model
 * @param {number} tickMs
 */
function worldKernel(o, model, tickMs) {
  const shape = model.rememberedShape ?? model;
  return binKernel(shapeMassPerSecond(o, shape.medianFactor, shape.sigmaFactor), tickMs / 1000);
}

/**
 * The forecast with the model's own tick (forecastCampaign chooses it).
 * @param {LiveModel} model
 * @param {Parameters<typeof forecastCampaign>[1]} campaign
 * @returns {Forecast}
 */
function forecastAt(model, { devices, startAt, now = model.at, maxRate = null, history = [], earlier = [], kind = null, horizonSeconds = Infinity }) {
  const o = resolveControllerOptions(model.options);
  const rateCap = maxRate === null ? o.maxRate : Math.min(o.maxRate, maxRate);
  const baselineAtHour = startAt !== undefined && startAt - now > LATER_MS ? hourBaseline(model, startAt) : null;
  const baselineRps = baselineAtHour?.rps ?? model.baselineRps;
  const spread = model.requestsPerSend > 0 ? 1 + model.requestsPerSendSd / model.requestsPerSend : 1;
  const past = pastSendsByBin(history, now, o);
  const kernel = worldKernel(o, model, o.metricsWindowMs);
  // While a campaign runs, the live estimate is being tested by its load: it stands.
  const gatewayRps = past.length > 0 || Number(model.remaining) > 0 ? model.capacityRps : gatewayCapacity(model, earlier);
  const horizonBins = Math.ceil(horizonSeconds / (o.metricsWindowMs / 1000));
  const run = (/** @type {number} */ trueGain) => controllerRun(o, model, kernel, { devices, baselineRps, trueGain, rateCap, past, gatewayRps, horizonBins });
  const expected = run(model.requestsPerSend);
  const low = run(model.requestsPerSend / spread);
  const high = run(model.requestsPerSend * spread);
  // The world is stepped once per metrics window (the governor's tick), so are the load's points.
  const loadBinSeconds = o.metricsWindowMs / 1000;
  const load = expected.load.map((loadRps, k) => ({
    t: k * loadBinSeconds,
    loadRps: round(loadRps),
    lowRps: round(Math.min(loadRps, low.load[k] ?? baselineRps, high.load[k] ?? baselineRps)),
    highRps: round(Math.max(loadRps, low.load[k] ?? baselineRps, high.load[k] ?? baselineRps))
  }));
  const finished = expected.finished && high.finished;
  const calibration = calibrate(o, model, kernel, earlier, { now, kind });
  const factor = calibration?.ratio ?? 1;
  const spreadBy = calibration?.spread ?? 1;
  return {
    source: 'governor',
    devices,
    durationSeconds: Math.ceil(expected.seconds * factor),
    // Less gain is a faster campaign, but the range is ordered whatever the plan does.
    durationLowSeconds: Math.floor((Math.min(low.seconds, expected.seconds) * factor) / spreadBy),
    durationHighSeconds: Math.ceil(Math.max(high.seconds, expected.seconds) * factor * spreadBy),
    modelDurationSeconds: expected.seconds,
    calibration,
    peakLoadRps: round(expected.peakLoadRps),
    peakLoadHighRps: round(Math.max(high.peakLoadRps, expected.peakLoadRps)),
    capacityRps: round(model.capacityRps),
    baselineRps: round(baselineRps),
    baselineAtHour,
    requestsPerSend: round(model.requestsPerSend, 3),
    requestsPerSendSd: round(model.requestsPerSendSd, 3),
    averageRate: expected.seconds > 0 ? round(devices / (expected.seconds * factor)) : devices,
    load,
    note: finished ? ''
      : expected.extrapolated || high.extrapolated ? `replayed for ${Math.round(horizonSeconds / 60)} minutes, then extrapolated at the rate reached by then`
        : `not finished within ${MAX_SECONDS / 86_400} days at the minimum rate: the gateway has no room for wake-ups at this baseline`
  };
}

/**
 * The model as a governor with a tick of at least `tickMs` would hold it (see replayTickMs).
 * @param {LiveModel} model
 * @param {number} tickMs
 * @returns {LiveModel}
 */
function withTickAtLeast(model, tickMs) {
  const o = resolveControllerOptions(model.options);
  if (o.metricsWindowMs >= tickMs && o.binMs >= tickMs) return model;
  const coarse = Math.ceil(tickMs / 1000) * 1000;
  return { ...model, options: { ...model.options, metricsWindowMs: Math.max(o.metricsWindowMs, coarse), binMs: Math.max(o.binMs, coarse) } };
}

/**
 * The estimate without a live model: the fixed rate alone, as before the governor existed.
 * @param {{ devices: number, rate: number }} campaign
 * @returns {Forecast}
 */
export function fixedRateForecast({ devices, rate }) {
  const seconds = rate > 0 ? Math.ceil(devices / rate) : Infinity;
  return {
    source: 'fixed-rate',
    devices,
    durationSeconds: seconds,
    durationLowSeconds: seconds,
    durationHighSeconds: seconds,
    peakLoadRps: null,
    peakLoadHighRps: null,
    capacityRps: null,
    baselineRps: null,
    baselineAtHour: null,
    requestsPerSend: null,
    requestsPerSendSd: null,
    averageRate: rate,
    modelDurationSeconds: seconds,
    calibration: null,
    load: [],
    note: 'no governor is running: estimate from the fixed rate alone'
  };
}

/**
 * The capacity of the forecast's gateway: the live estimate, or the one the latest campaign
 * ended with if that is higher. Between campaigns the gateway carries only its baseline, and
 * there the estimate can fall on a window's noise (the two-point fit extrapolates far from
 * light load) but rises only under load near it (capacity-estimator.js), so an idle night
 * wears it down: in a tuning world 15,200 requests/s after a campaign, 8,430 at the next one's
 * launch, 15,000 again ten minutes into it. The controller in the replay starts from the live
 * estimate, as the governor will, and climbs as the load tests it. Only between campaigns:
 * under a running campaign's load the live estimate is the measured one.
 * @param {LiveModel} model
 * @param {readonly import('../pacing/wake-up-memory.js').MemoryEntry[]} earlier
 */
function gatewayCapacity(model, earlier) {
  let latest = null;
  for (const e of earlier) if (Number(e.capacityRps) > 0 && (latest === null || e.at > latest.at)) latest = e;
  return Math.max(model.capacityRps, Number(latest?.capacityRps ?? 0));
}

/**
 * How recent campaigns compared with the model's replay of each, in its own conditions; null
 * when the memory holds none with its duration and conditions (older entries, or none yet).
 * @param {Readonly<import('../pacing/controller-options.js').ControllerOptions>} o
 * @param {LiveModel} model
 * @param {ArrayLike<number>} kernel  the world's wake-up kernel (forecastCampaign's)
 * @param {readonly import('../pacing/wake-up-memory.js').MemoryEntry[]} earlier
 * @param {{ now: number, kind: string | null }} context
 * @returns {Calibration | null}
 */
function calibrate(o, model, kernel, earlier, { now, kind }) {
  const usable = earlier
    .filter((e) => Number(e.seconds) > 0 && Number(e.capacityRps) > 0 && e.baselineRps !== null && e.baselineRps !== undefined && e.baselineRps >= 0)
    .sort((a, b) => b.at - a.at)
    .slice(0, CALIBRATION_CAMPAIGNS);
  if (!usable.length) return null;
  // A campaign of a tick or two is measured to the tick: neither side counts below one.
  const tickSeconds = o.metricsWindowMs / 1000;
  let weightSum = 0;
  let logSum = 0;
  let logSquares = 0;
  for (const e of usable) {
    // Its own conditions and the prior it started from, today's belief about the audience.
    const started = e.startPrior ?? { requestsPerSend: model.requestsPerSend, requestsPerSendSd: model.requestsPerSendSd };
    const replay = controllerRun(o, { ...model, capacityRps: Number(e.capacityRps) }, kernel,
      { devices: e.sends, baselineRps: Number(e.baselineRps), trueGain: model.requestsPerSend, rateCap: o.maxRate, past: [], startPrior: started });
    const ratio = Math.max(tickSeconds, Number(e.seconds)) / Math.max(tickSeconds, replay.seconds);
    const logRatio = Math.log(Math.min(CALIBRATION_BOUNDS[1], Math.max(CALIBRATION_BOUNDS[0], ratio)));
    const sameKind = kind === null || e.kind === null || e.kind === kind;
    const weight = 0.5 ** (Math.max(0, now - e.at) / CALIBRATION_HALF_LIFE_MS) * (sameKind ? 1 : OTHER_KIND_WEIGHT);
    weightSum += weight;
    logSum += weight * logRatio;
    logSquares += weight * logRatio * logRatio;
  }
  if (!(weightSum > 1e-9)) return null;
  const mean = logSum / weightSum;
  const sd = Math.sqrt(Math.max(0, logSquares / weightSum - mean * mean));
  return { campaigns: usable.length, ratio: round(Math.exp(mean), 3), spread: round(Math.exp(sd), 3) };
}

/**
 * The baseline learned for startAt's UTC hour, when enough windows taught it.
 * @param {LiveModel} model
 * @param {number} startAt
 */
export function hourBaseline(model, startAt) {
  const hour = new Date(startAt).getUTCHours();
  const entry = (model.baselineByHour ?? []).find((h) => h.hour === hour);
  return entry && entry.windows >= MIN_HOUR_WINDOWS ? { hour, rps: round(entry.rps), windows: entry.windows } : null;
}

/**
 * One virtual campaign under the controller itself (createInspectableController, every member
 * of its bank, its guards), against a gateway that is its model: load B + a·g * sends, and a
 * latency curve through the capacity estimate (an M/M/1-shaped p95 with the setpoint at it).
 * @param {Readonly<import('../pacing/controller-options.js').ControllerOptions>} o
 * @param {LiveModel} model
 * @param {ArrayLike<number>} kernel  the world's request mass per send, per metrics window
 * @param {{ devices: number, baselineRps: number, trueGain: number, rateCap: number, past: Array<[number, number]>,
 *   startPrior?: { requestsPerSend: number, requestsPerSendSd: number }, gatewayRps?: number, horizonBins?: number }} run
 *   startPrior: the gain prior the controller starts from (the model's when absent); gatewayRps: the gateway's
 *   load at the setpoint, when it is not the controller's estimate (see gatewayCapacity); horizonBins: the
 *   campaign's ticks replayed at most, its end extrapolated beyond them at the rate of their last quarter
 */
function controllerRun(o, model, kernel, { devices, baselineRps, trueGain, rateCap, past, startPrior, gatewayRps = model.capacityRps, horizonBins = Infinity }) {
  const controller = createInspectableController({ ...model.options, capacityRps: model.capacityRps, maxRate: rateCap });
  controller.setGainPrior(startPrior ?? { requestsPerSend: model.requestsPerSend, requestsPerSendSd: model.requestsPerSendSd });
  const binMs = o.metricsWindowMs;
  const binSeconds = binMs / 1000;
  const setpointMs = o.setpointRatio * o.sloP95Ms;
  const idleMs = 0.25 * setpointMs;
  const mu = gatewayRps / (1 - idleMs / setpointMs);
  const lagBins = Math.round(o.metricsLagMs / binMs);
  // The warm-up teaches the controller the baseline, and replays the sends already made.
  const warmupBins = Math.max(6 + lagBins, past.length > 0 ? -past[0][0] : 0);
  const pastAt = new Map(past.map(([bin, count]) => [warmupBins + bin, count]));
  /** Requests/s per bin, from the warm-up's first. @type {number[]} */
  const load = [];
  const loadAt = (/** @type {number} */ bin) => load[bin] ?? baselineRps;
  const addSends = (/** @type {number} */ bin, /** @type {number} */ count) => {
    for (let j = 0; j < kernel.length; j++) load[bin + j] = loadAt(bin + j) + (trueGain * count * kernel[j]) / binSeconds;
  };
  let remaining = devices;
  let sent = 0;
  let lastSendBin = 0;
  let lastSendSeconds = 0;
  let bin = 0;
  const maxBins = warmupBins + Math.min(MAX_SECONDS / binSeconds, horizonBins);
  /** Sends per replayed tick of the campaign. @type {number[]} */
  const sentByBin = [];
  for (; bin < maxBins && (bin < warmupBins || remaining > 0); bin++) {
    const windowBin = bin - lagBins - 1;
    const rps = windowBin >= 0 ? loadAt(windowBin) : null;
    const p95Ms = rps === null ? 0 : rps >= 0.999 * mu ? 10 * o.sloP95Ms : idleMs / (1 - rps / mu);
    const gateway = rps === null ? null : { rps, p95Ms, p99Ms: 1.2 * p95Ms, errorRatio: 0 };
    const campaign = bin >= warmupBins;
    const decision = controller.update({ now: bin * binMs, sent, gateway, remaining: campaign ? remaining : null });
    sent = 0;
    if (!campaign) {
      sent = pastAt.get(bin) ?? 0;
      if (sent > 0) addSends(bin, sent);
      continue;
    }
    sent = Math.min(remaining, decision.rate * binSeconds);
    sentByBin.push(sent);
    remaining -= sent;
    if (remaining < 0.5) remaining = 0;
    if (sent > 0) {
      addSends(bin, sent);
      lastSendBin = bin;
      // The last interval ends when its sends are out, at the rate decided.
      lastSendSeconds = remaining === 0 ? sent / decision.rate : binSeconds;
    }
  }
  const lastSeconds = (lastSendBin - warmupBins) * binSeconds;
  const last = load.slice(warmupBins);
  // Cut at the horizon with devices left: the rest goes at the rate its last quarter reached.
  const extrapolated = remaining > 0 && sentByBin.length >= horizonBins;
  const tail = sentByBin.slice(-Math.max(1, Math.floor(sentByBin.length / 4)));
  const tailRate = tail.reduce((a, b) => a + b, 0) / (tail.length * binSeconds);
  const rest = extrapolated ? (tailRate > 0 ? remaining / tailRate : Infinity) : 0;
  return {
    seconds: Math.ceil(extrapolated ? sentByBin.length * binSeconds + rest : lastSeconds + lastSendSeconds),
    peakLoadRps: Math.max(baselineRps, ...last),
    load: last,
    finished: remaining === 0,
    extrapolated
  };
}

/**
 * Past sends per bin, relative to now (bin -1 is the one that just ended), within the
 * wake-up horizon the forecast needs (an hour at most). Oldest first.
 * @param {SendHistory} history
 * @param {number} now
 * @param {Readonly<import('../pacing/controller-options.js').ControllerOptions>} o
 * @returns {Array<[number, number]>}
 */
function pastSendsByBin(history, now, o) {
  const horizonBins = Math.ceil(3_600_000 / o.metricsWindowMs);
  /** @type {Map<number, number>} */
  const bins = new Map();
  for (const { at, sent } of history) {
    const bin = Math.floor((at - now) / o.metricsWindowMs);
    if (!(sent > 0) || bin >= 0 || bin < -horizonBins) continue;
    bins.set(bin, (bins.get(bin) ?? 0) + sent);
  }
  return [...bins.entries()].sort((a, b) => a[0] - b[0]);
}

/** @param {number} x @param {number} [digits] */
function round(x, digits = 1) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
