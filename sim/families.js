// Scenario families: named distributions of random worlds, for an evaluation that no
// setting can be tuned to (issue #11). `drawScenario(family, seed)` draws one world as a raw
// scenario (the same object a scenario file holds; sim/scenario.js resolves it), the same
// world for the same seed. docs/simulator.md lists the families and every range.
//
// Every draw varies the gateway (1-64 processes, per-process or shared queueing, service
// and downstream times, an SLO between 60% and 90% utilisation), the baseline (flat, diurnal
// or with short spikes, 20-60% of the SLO capacity, noise), the metrics (lag 0-120 s, with or
// without the request rate), the wake-up behaviour (open probability 2-40%, requests per
// open, session, delay medians 20 s to 20 min) and the audience. The adaptive strategy gets
// only what an operator would configure (operatorSettings).
import { readFileSync } from 'node:fs';
import { createGatewayModel } from './gateway-model.js';
import { createRandom } from './random.js';
import { resolveScenario } from './scenario.js';
import { calibrateOracleConfidence } from './oracle-calibration.js';
import { InputError } from '../shared/errors.js';

/** The longest open delay modelled: beyond it a Pareto or wide log-normal tail is cut (sim/delay-kernel.js). */
const MAX_DELAY_SECONDS = 4 * 3600;
/** Campaigns the oracle would finish in between these (seconds): long enough to pace, short enough to simulate quickly. */
const DURATION_RANGE = /** @type {const} */ ([600, 7200]);
/** Baseline peaks (diurnal, spikes, jumps, with capacity at its lowest) stay below this share of the SLO capacity. */
const BASELINE_HEADROOM = 0.85;
/** The baseline's mean share of the SLO capacity is drawn uniformly from this range. */
const BASELINE_SHARE = /** @type {const} */ ([0.2, 0.6]);
/** The smallest gateway drawn, in requests/s at full CPU. */
const MIN_CAPACITY_RPS = 200;
/** The setpoint, as a share of the SLO, at which the operator's load test measures capacityRps (the controller's default). */
export const OPERATOR_SETPOINT_RATIO = 0.8;
/** The load test's error on capacityRps: log-normal, σ 0.15 (about ±15%). */
const LOAD_TEST_SIGMA = 0.15;
/** The error of the operator's figure for the users' own request rate: log-normal, σ 0.3 (about ±30%). */
const USERS_FIGURE_SIGMA = 0.3;
/** How long the controller has read the gateway when a drawn campaign starts (the simulator's warm-up): the journal's hour. */
export const GOVERNOR_HISTORY_SECONDS = 3600;

/**
 * A warm-up given on a command line (`--warmup` of sim/tune.js, sim/trace-world.js, sim/judge.js):
 * whole seconds ≥ 0, in whole 10-s metrics windows so that the windows keep their alignment
 * with the campaign's start. Undefined stays undefined: the drawn worlds' own.
 * @param {string} flag  the option's name, for the message
 * @param {string | undefined} value
 * @returns {number | undefined}
 */
export function warmupArgument(flag, value) {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!(Number.isInteger(seconds) && seconds >= 0 && seconds % 10 === 0)) throw new InputError(`${flag} must be a whole number of seconds ≥ 0 in 10-s windows, got ${value}`);
  return seconds;
}

/** @typedef {ReturnType<typeof createRandom>} Random */
/** @typedef {import('./scenario.js').DelayComponent} DelayComponent */
/** @typedef {import('./scenario.js').CapacityChange} WorldEvent */

/**
 * The families and what each draws. The delay shape is the family's own, or one of the four
 * shapes at random; `events` adds the unannounced events that define a family.
 * @type {Readonly<Record<string, { description: string, shape: string | null, openProbability?: [number, number], audience?: [number, number], events?: 'baseline-jump' | 'capacity-drop' }>>}
 */
export const FAMILIES = Object.freeze({
  lognormal: { description: 'log-normal open delays (one component, or a mixture of two)', shape: 'lognormal' },
  bimodal: { description: 'a fast wave within the first minute and a slow wave 15-40 minutes later', shape: 'bimodal' },
  pareto: { description: 'a power-law (Lomax) tail and a high open rate (20-40%)', shape: 'pareto', openProbability: [0.2, 0.4] },
  exponential: { description: 'memoryless open delays: no early peak', shape: 'exponential' },
  'baseline-jump': { description: 'a flash sale: the baseline × 1.5-3 mid-campaign for 15-90 minutes, unannounced', shape: null, events: 'baseline-jump' },
  'capacity-drop': { description: 'one or two unannounced capacity drops of 30-60% for 5-45 minutes', shape: null, events: 'capacity-drop' },
  small: { description: '1,000-20,000 devices', shape: null, audience: [1000, 20_000] }
});

/** Every family name `drawScenario` accepts: the families, and `mixed`, which draws one of them per world. */
export const FAMILY_NAMES = Object.freeze([...Object.keys(FAMILIES), 'mixed']);

const SHAPES = ['lognormal', 'bimodal', 'pareto', 'exponential'];

/**
 * The ranges the open delays' medians are drawn in (seconds), per shape and component:
 * log-uniform for a single shape's median, uniform for the two waves of a bimodal one.
 * sim/information-limit.js keeps its twins within them.
 */
export const DELAY_MEDIAN_RANGES = Object.freeze(/** @type {const} */ ({
  lognormal: [[20, 1200], [20, 1200]],
  bimodal: [[10, 50], [900, 2400]],
  pareto: [[20, 1200]],
  exponential: [[20, 1200]]
}));

/**
 * The delay shape a drawn world was given (drawScenario writes it into the description as
 * "SHAPE delays"), or null for a scenario not drawn from a family.
 * @param {{ description?: string }} raw
 * @returns {keyof typeof DELAY_MEDIAN_RANGES | null}
 */
export function delayShapeOf(raw) {
  const shape = /: (\w+) delays/.exec(raw.description ?? '')?.[1];
  return shape && shape in DELAY_MEDIAN_RANGES ? /** @type {keyof typeof DELAY_MEDIAN_RANGES} */ (shape) : null;
}

/**
 * The seeds fixed in sim/held-out-seeds.json: the held-out ones (for judging, never for
 * tuning), the confirmation ones, and the tuning ones.
 * @returns {{ comment: string, heldOut: Record<string, number>, confirmationComment: string, confirmation: Record<string, number>, tuning: number[] }}
 */
export function heldOutSeeds() {
  return JSON.parse(readFileSync(new URL('./held-out-seeds.json', import.meta.url), 'utf8'));
}

/**
 * The seed of world k in a run of `family` from base seed `base` (FNV-1a of the three), so
 * that runs with different bases or families share no world.
 * @param {string} family
 * @param {number} base
 * @param {number} k
 */
export function worldSeed(family, base, k) {
  let h = 0x811c9dc5;
  for (const ch of `${family}/${base}/${k}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/**
 * Draws one world of a family.
 * @param {string} family  one of FAMILY_NAMES
 * @param {number} seed
 * @returns {Record<string, any>} a raw scenario for resolveScenario
 */
export function drawScenario(family, seed) {
  if (!FAMILY_NAMES.includes(family)) throw new RangeError(`unknown family ${family}; known: ${FAMILY_NAMES.join(', ')}`);
  const random = createRandom(seed);
  const u = (/** @type {number} */ lo, /** @type {number} */ hi) => lo + (hi - lo) * random.uniform();
  const logU = (/** @type {number} */ lo, /** @type {number} */ hi) => Math.exp(u(Math.log(lo), Math.log(hi)));
  const pick = (/** @type {readonly string[]} */ list) => list[Math.floor(random.uniform() * list.length)];
  const drawn = family === 'mixed' ? pick(Object.keys(FAMILIES)) : family;
  const spec = FAMILIES[drawn];

  // The gateway: its capacity, how requests queue, and an SLO between 60% and 90% of it.
  const gateway = {
    processes: Math.round(logU(1, 64)),
    serviceMs: 0,
    downstreamMs: Math.round(u(20, 100)),
    timeoutSeconds: 30,
    queueing: random.uniform() < 0.5 ? 'per-process' : 'shared',
    /** @type {WorldEvent[]} */
    capacityChanges: []
  };
  // At least MIN_CAPACITY_RPS: below it a one-second Poisson count is too noisy for the
  // per-second queueing model (its queues would relax over many seconds, not one).
  gateway.serviceMs = round(logU(2, Math.max(2.5, Math.min(40, (gateway.processes * 1000) / MIN_CAPACITY_RPS))), 1);
  const model = createGatewayModel(/** @type {import('./gateway-model.js').GatewayConfig} */ (gateway));
  const capacity = model.capacityRps(1);
  const p95At = (/** @type {number} */ rho, factor = 1) => model.stationaryQuantile(rho * capacity * factor, factor, 0.95);
  const sloUtilisation = u(0.6, 0.9);

  // The wake-up behaviour.
  const shape = spec.shape ?? pick(SHAPES);
  const [pLo, pHi] = spec.openProbability ?? [0.02, 0.4];
  const wakeUp = {
    openProbability: round(u(pLo, pHi), 4),
    requestsPerOpen: round(logU(3, 30), 2),
    openDelay: drawDelay(shape, u, logU),
    sessionMeanSeconds: Math.round(logU(10, 120)),
    maxDelaySeconds: MAX_DELAY_SECONDS
  };
  const requestsPerSend = wakeUp.openProbability * wakeUp.requestsPerOpen;

  // The baseline's shape; its level is set below, once the events are known.
  const kind = pick(['flat', 'flat', 'diurnal', 'spikes']);
  const diurnal = kind === 'diurnal' ? { amplitude: round(u(0.1, 0.4), 3), peakHour: round(u(18, 22), 2), startHour: round(u(0, 24), 2) } : null;
  const baselineShare = u(...BASELINE_SHARE);
  // The events' sizes first (the baseline's level depends on them), their times once the
  // campaign's length is known.
  /** @type {Array<{ list: WorldEvent[], share: number, event: WorldEvent }>} */
  const placed = [];
  /** @type {WorldEvent[]} */
  const spikes = [];
  if (kind === 'spikes') {
    for (let i = 0, n = 1 + Math.floor(u(0, 3)); i < n; i++) {
      placed.push({ list: spikes, share: u(0, 1), event: { atSeconds: 0, durationSeconds: Math.round(u(60, 300)), factor: round(u(1.2, 2), 2) } });
    }
  }
  if (spec.events === 'baseline-jump') {
    placed.push({ list: spikes, share: u(0.2, 0.6), event: { atSeconds: 0, durationSeconds: Math.round(logU(900, 5400)), factor: round(u(1.5, 3), 2) } });
  }
  if (spec.events === 'capacity-drop') {
    for (let i = 0, n = random.uniform() < 0.5 ? 1 : 2; i < n; i++) {
      placed.push({ list: gateway.capacityChanges, share: i === 0 ? u(0.15, 0.6) : u(60, 900), event: { atSeconds: 0, durationSeconds: Math.round(logU(300, 2700)), factor: round(u(0.4, 0.7), 2) } });
    }
  }

  // The SLO: at the drawn utilisation, but the controller aims at 0.8 × the SLO, so keep
  // that above the idle gateway's p95 (a third above it), and a gateway that lost capacity
  // must still meet the SLO at half its remaining capacity and well above its idle p95:
  // where the SLO is barely above the latency of an idle gateway, the p95 hovers at the SLO
  // whatever is sent, and the world measures nothing.
  const lowestFactor = lowestFactorOf(placed.filter((p) => p.list === gateway.capacityChanges).map((p) => p.event));
  const sloP95Ms = Math.ceil(Math.max(p95At(sloUtilisation), p95At(0, lowestFactor) / 0.75, p95At(0.5, lowestFactor)) / 10) * 10;
  const sloCapacity = model.rateAtP95(1, sloP95Ms);

  // The baseline's level: its mean share of the SLO capacity, lowered where needed so that
  // its peak (diurnal high, spikes, the jump) stays within the SLO capacity at the lowest
  // capacity: a world where the baseline alone breaks the SLO measures nothing. (Spikes
  // rarely overlap; the peak counts the largest one.)
  const rps = round(Math.min(baselineShare * sloCapacity, baselineCeiling(model, sloP95Ms, lowestFactor, diurnal, placed.filter((p) => p.list === spikes).map((p) => p.event))), 2);

  // The audience: drawn, then kept to a campaign of 10 minutes to 2 hours if the oracle had
  // the mean room to itself (the small family keeps its sizes, up to 2 hours).
  const room = Math.max(1e-6, sloCapacity - rps) / requestsPerSend;
  const [aLo, aHi] = spec.audience ?? [100_000, 5_000_000];
  let audience = logU(aLo, aHi);
  if (audience / room > DURATION_RANGE[1]) audience = DURATION_RANGE[1] * room;
  else if (!spec.audience && audience / room < DURATION_RANGE[0]) audience = DURATION_RANGE[0] * room;
  audience = Math.max(1, Math.round(audience));
  const duration = audience / room;

  // Events at shares of that length: a jump or the first drop within its middle, a second
  // drop 1-15 minutes after the first ends, spikes anywhere.
  let previousEnd = 0;
  for (const p of placed) {
    const second = p.list === gateway.capacityChanges && p.list.length > 0;
    p.event.atSeconds = Math.round(second ? previousEnd + p.share : p.share * duration);
    if (p.list === gateway.capacityChanges) previousEnd = p.event.atSeconds + p.event.durationSeconds;
    p.list.push(p.event);
  }
  const eventSeconds = placed.reduce((s, p) => s + p.event.durationSeconds, 0);

  const metrics = { windowSeconds: 10, lagSeconds: 5 * Math.round(u(0, 24)), outages: [], reportsRps: random.uniform() < 0.7 };
  const scenario = {
    name: `${family}-${seed}`,
    description: `${drawn}: ${shape} delays, ${gateway.processes} × ${gateway.serviceMs} ms (${gateway.queueing}), ${kind} baseline` +
      `${spec.events ? `, ${spec.events}` : ''}, metrics lag ${metrics.lagSeconds} s${metrics.reportsRps ? '' : ', no rps'}`,
    seed: Math.floor(random.uniform() * 2 ** 31),
    audience,
    // The governor runs all day, and one taking over the lease replays the journal's last
    // hour: a campaign meets a controller that has read its gateway for an hour at least. The
    // 300 s drawn before session 56 flattered it (bench/RESULTS.md, 2026-12-06 13:45).
    warmupSeconds: GOVERNOR_HISTORY_SECONDS,
    // Generous: the adaptive strategy may take several times the oracle's time, and the
    // informed oracle waits out capacity it believes lost for good.
    maxSeconds: Math.min(86_400, Math.ceil(4 * duration + eventSeconds + 3600)),
    slo: { p95Ms: sloP95Ms },
    gateway,
    baseline: { rps, diurnal, spikes, noise: { sigma: round(u(0, 0.1), 3), correlationSeconds: Math.round(logU(10, 300)) } },
    wakeUp,
    metrics,
    sns: { maxRate: 30_000 },
    /** @type {Record<string, unknown>} */
    strategies: {}
  };
  scenario.strategies = { adaptive: { controlIntervalSeconds: 10, controller: operatorSettings(model, sloP95Ms, rps, random) } };
  // The oracles' margin, calibrated for this gateway so that they exceed the SLO in about 1%
  // of the windows, as on the shipped scenarios (sim/oracle-calibration.js). A drop's own
  // margin, calibrated at the lowest capacity, holds only while the capacity is down, as the
  // oracle knows it: the informed oracle takes it once the metrics show the drop, not before
  // (kept all campaign, it hedged against a drop no reader of the metrics could foresee, at
  // up to 8 standard deviations, and ran at half the room: docs/simulator.md).
  const resolved = resolveScenario(scenario);
  const confidence = calibrateOracleConfidence(resolved);
  const dropConfidence = lowestFactor < 1 ? calibrateOracleConfidence(resolved, { factor: lowestFactor }) : null;
  scenario.strategies = { ...scenario.strategies, oracle: { binSeconds: 10, confidence, dropConfidence } };
  return scenario;
}

/**
 * What an operator would configure beyond the SLO, the metrics timing and the SNS limit
 * (which the adaptive strategy takes from the scenario): capacityRps from a load test, the
 * true total rate at the controller's setpoint p95 (0.8 × the SLO) with a log-normal error
 * of about ±15%, and sloCapacityRatio from the same test, the rate at the SLO p95 over it
 * (the error is the test's, in both rates alike: the ratio is the true one). Everything
 * else, the wake-up priors included, stays at the controller's defaults: an operator does
 * not know the open rate or the delay of a campaign not yet sent. And baseLoadRps, the least
 * the users send as a dashboard shows it: the baseline's mean with a log-normal error of about
 * ±30%, less two of its standard deviations (over the truth in 2.3% of worlds), drawn last so
 * that no other draw moves.
 * @param {import('./gateway-model.js').GatewayModel} model
 * @param {number} sloP95Ms
 * @param {number} baselineRps  the baseline's mean
 * @param {Random} random
 */
function operatorSettings(model, sloP95Ms, baselineRps, random) {
  const atSetpoint = model.rateAtP95(1, OPERATOR_SETPOINT_RATIO * sloP95Ms);
  const measured = atSetpoint * Math.exp(LOAD_TEST_SIGMA * random.normal());
  // Rounded down: an operator who rounds up lets the whole-campaign burst past the SLO.
  const sloCapacityRatio = Math.max(1, Math.floor((100 * model.rateAtP95(1, sloP95Ms)) / atSetpoint) / 100);
  const baseLoadRps = round(baselineRps * Math.exp(USERS_FIGURE_SIGMA * (random.normal() - 2)), 1);
  return { capacityRps: round(Math.max(1, measured), 1), sloCapacityRatio, baseLoadRps };
}

/**
 * @param {string} shape
 * @param {(lo: number, hi: number) => number} u
 * @param {(lo: number, hi: number) => number} logU
 * @returns {DelayComponent[]}
 */
function drawDelay(shape, u, logU) {
  switch (shape) {
    case 'bimodal': {
      const fast = round(u(0.3, 0.7), 3);
      return [
        { kind: 'lognormal', share: fast, medianSeconds: Math.round(u(...DELAY_MEDIAN_RANGES.bimodal[0])), sigma: round(u(0.5, 0.9), 2) },
        { kind: 'lognormal', share: round(1 - fast, 3), medianSeconds: Math.round(u(...DELAY_MEDIAN_RANGES.bimodal[1])), sigma: round(u(0.4, 0.8), 2) }
      ];
    }
    case 'pareto': return [{ kind: 'pareto', share: 1, medianSeconds: Math.round(logU(...DELAY_MEDIAN_RANGES.pareto[0])), alpha: round(u(1.1, 2.5), 2) }];
    case 'exponential': return [{ kind: 'exponential', share: 1, medianSeconds: Math.round(logU(...DELAY_MEDIAN_RANGES.exponential[0])) }];
    default: {
      const components = [{ kind: 'lognormal', share: 1, medianSeconds: Math.round(logU(...DELAY_MEDIAN_RANGES.lognormal[0])), sigma: round(u(0.5, 1.5), 2) }];
      if (u(0, 1) < 0.3) {
        components[0].share = round(u(0.3, 0.8), 3);
        components.push({ kind: 'lognormal', share: round(1 - components[0].share, 3), medianSeconds: Math.round(logU(...DELAY_MEDIAN_RANGES.lognormal[1])), sigma: round(u(0.5, 1.5), 2) });
      }
      return /** @type {DelayComponent[]} */ (components);
    }
  }
}

/** @param {number} x @param {number} digits */
function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** @param {number} x @param {number} lo @param {number} hi */
function clamp(x, lo, hi) {
  return Math.min(hi, Math.max(lo, x));
}

/** The lowest capacity factor of a world's drops (1: none). @param {WorldEvent[]} drops */
function lowestFactorOf(drops) {
  return drops.reduce((f, c) => Math.min(f, c.factor), 1);
}

/**
 * The most baseline a drawn world can have on its gateway: its peak (the diurnal high times the
 * largest spike or jump) within BASELINE_HEADROOM of the SLO capacity at the lowest capacity,
 * so that the baseline alone never breaks the SLO.
 * @param {ReturnType<typeof createGatewayModel>} model
 * @param {number} sloP95Ms
 * @param {number} lowestFactor
 * @param {{ amplitude: number } | null} diurnal
 * @param {WorldEvent[]} spikes  spikes and the jump
 */
function baselineCeiling(model, sloP95Ms, lowestFactor, diurnal, spikes) {
  const peakFactor = (1 + (diurnal?.amplitude ?? 0)) * spikes.reduce((f, p) => Math.max(f, p.factor), 1);
  return (BASELINE_HEADROOM * model.rateAtP95(lowestFactor, sloP95Ms)) / peakFactor;
}

/**
 * The highest mean baseline drawScenario could have given this world, all else equal: its
 * share of the SLO capacity at the top of the drawn range, its peak within the headroom.
 * @param {Record<string, any>} raw  drawScenario's world
 */
export function highestBaseline(raw) {
  const model = createGatewayModel(raw.gateway);
  const ceiling = baselineCeiling(model, raw.slo.p95Ms, lowestFactorOf(raw.gateway.capacityChanges), raw.baseline.diurnal, raw.baseline.spikes);
  return Math.min(BASELINE_SHARE[1] * model.rateAtP95(1, raw.slo.p95Ms), ceiling);
}
