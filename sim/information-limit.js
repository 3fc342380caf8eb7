// The information limit of the hold-out targets (issue #11): on how many drawn worlds can
// any controller, however built, finish within a given factor of the informed oracle and
// still hold the SLO on the worlds it cannot tell apart from them?
//
// For a world w, its twin w' is the same world (the same gateway, baseline, noise and seed)
// whose users make `gainFactor` times the requests per open: as likely a draw, since
// requests per open is drawn log-uniformly (sim/families.js). A controller sees only the
// gateway's metrics, and those are the same in both worlds until the extra wake-up load has
// shown. Take the informed oracle's schedule on w stretched by `stretch` (the target: finish
// within stretch × its time) and measure when w and w' become distinguishable under it: the
// first time the detectability of the difference, d'² = Σ over metrics windows of (the
// difference in expected rps / that window's rps noise)², reaches 1 (a likelihood-ratio
// test at d' = 1 still errs about one time in three), plus the metrics lag. A controller
// that finishes w by then has made the same sends in w'. If the informed oracle of w' needs
// more than stretch × T*(w), no schedule that fast is safe in w', and the replay shows what
// it costs there. So on these "information-limited" worlds every controller either misses
// the time target on w or breaks the SLO on w', which is drawn as often.
//
// A third twin, **fast**, has the same requests per send but opens FAST_FACTOR times sooner
// (every delay median divided by it, within the family's drawn range, so as likely a draw):
// where the oracle sends a whole campaign in a burst because its users open late, the twin's
// users open while the burst still goes out, and nothing but the delay tells them apart.
//
// Conservative on the controller's side: the detection integrates every window optimally and
// counts only Poisson and baseline noise. Where the world's source reports the request rate,
// the twins differ in it; where it does not (a probe: reportsRps false, 30% of the draws),
// they differ only in the p95, and a p95 moves only where the gateway's latency curve does.
// Behind one queue of many processes the curve is flat almost to the cliff (M/M/c), so a
// latency-only source cannot see the wake-ups, the world's or its twin's, until the load
// nears the SLO. The p95 is read as the simulator computes it, with the same noise in both
// worlds, to LATENCY_RESOLUTION.
import { drawScenario, delayShapeOf, highestBaseline, DELAY_MEDIAN_RANGES } from './families.js';
import { resolveScenario } from './scenario.js';
import { simulate } from './simulate.js';
import { createInformedOracleStrategy, knownScenario } from './strategies/informed-oracle.js';
import { binKernel } from '../shared/pacing/wake-up-model.js';
import { maximise } from './linear-program.js';
import { loadRows } from './oracle-planner.js';
import { createPacer } from './strategies/pacer.js';
import { createWorld } from './world.js';

/** Requests per open are drawn within this range (sim/families.js). */
const REQUESTS_PER_OPEN_MAX = 30;
/** The open probability is drawn within this range (at most; a family may draw a narrower one). */
const OPEN_PROBABILITY_MAX = 0.4;
/** The late twin's slow wave: a median of 20 minutes, the top of the delay medians drawn. */
const LATE_WAVE_SECONDS = 1200;
/** The fast twin's users open this many times sooner. */
export const FAST_FACTOR = 3;
/**
 * How well an observer knows a window's p95 beyond its load's noise, as a share. Generous to
 * the controller: the controller itself assumes 15% (`latencyNoise`), and the demo's one-process
 * gateway moved by a factor of 5-7 between windows at the same load (docs/pacing.md).
 */
export const LATENCY_RESOLUTION = 0.01;

/**
 * @typedef {object} TwinCase  one twin of a world, under one stretch of the oracle's schedule
 * @property {'gain' | 'late' | 'fast' | 'baseline'} twin
 * @property {number} stretch
 * @property {number | null} twinOracleSeconds  T*(w'); null: no twin within the family's range
 * @property {number} finishSeconds     when the stretched schedule sends its last device
 * @property {number | null} distinguishableSeconds  when w and w' can first be told apart under it (null: never)
 * @property {boolean} limited          finished before distinguishable, and T*(w') > stretch × T*(w)
 * @property {number | null} twinShare  windows over the SLO of the stretched schedule on w'
 * @property {number | null} twinErrors gateway errors on w'
 */

/**
 * @param {string} family
 * @param {number} seed  the world's seed (drawScenario's)
 * @param {{ stretches?: number[], factor?: number, twins?: Array<'gain' | 'late' | 'fast' | 'baseline'>, latencyResolutions?: number[] }} [options]
 *   latencyResolutions: how well a latency-only source's p95 is known (default LATENCY_RESOLUTION alone)
 * @returns {{ seed: number, description: string, latencyOnly: boolean, oracleSeconds: number, replayShares: number[], cases: TwinCase[], casesByResolution: TwinCase[][] }}
 *   replayShares: windows over the SLO of each stretched schedule on w itself; cases: judged at
 *   the first resolution; casesByResolution: at each (a world that reports the request rate
 *   is told apart by it, so it has one list)
 */
export function informationLimit(family, seed, { stretches = [1.15, 1.4], factor = 1.3, twins = ['gain', 'late'], latencyResolutions = [LATENCY_RESOLUTION] } = {}) {
  const raw = drawScenario(family, seed);
  const scenario = resolveScenario(raw, raw.name);
  /** @type {number[]} */
  const schedule = [];
  const oracleSeconds = /** @type {number} */ (simulate(scenario, recording(schedule)).completionSeconds);
  const stretched = stretches.map((stretch) => stretchSchedule(schedule, stretch));
  // A latency-only source is judged on the windows' p95 as simulated (whenLatencyDiffers).
  const latencyOnly = !scenario.metrics.reportsRps;
  const replays = stretched.map((s) => simulate(scenario, replaying(s), { series: latencyOnly }));
  const replayShares = replays.map((r) => r.sloViolationShare);
  // The twins are simulated once; only how well their p95 is known differs by resolution.
  const resolutions = latencyOnly ? latencyResolutions : [null];
  /** @type {TwinCase[][]} */
  const casesByResolution = resolutions.map(() => []);
  for (const kind of twins) {
    const twinRaw = twinOf(raw, factor, kind);
    const twin = twinRaw && resolveScenario(twinRaw, twinRaw.name);
    const twinOracleSeconds = twin && simulate(twin, 'informed-oracle').completionSeconds;
    stretches.forEach((stretch, i) => {
      const finishSeconds = stretched[i].length;
      if (!twin) {
        for (const cases of casesByResolution) cases.push({ twin: kind, stretch, twinOracleSeconds: null, finishSeconds, distinguishableSeconds: null, limited: false, twinShare: null, twinErrors: null });
        return;
      }
      const replay = simulate(twin, replaying(stretched[i]), { series: latencyOnly });
      resolutions.forEach((resolution, r) => {
        const distinguishableSeconds = resolution !== null
          ? whenLatencyDiffers(/** @type {import('./simulate.js').Series} */ (replays[i].series), /** @type {import('./simulate.js').Series} */ (replay.series), scenario.metrics.lagSeconds, resolution)
          : whenDistinguishable(scenario, twin, stretched[i]);
        const limited = twinOracleSeconds !== null && twinOracleSeconds > stretch * oracleSeconds &&
          (distinguishableSeconds === null || finishSeconds <= distinguishableSeconds);
        casesByResolution[r].push({ twin: kind, stretch, twinOracleSeconds, finishSeconds, distinguishableSeconds, limited, twinShare: replay.sloViolationShare, twinErrors: replay.gatewayErrors });
      });
    });
  }
  return { seed, description: scenario.description, latencyOnly, oracleSeconds, replayShares, cases: casesByResolution[0], casesByResolution };
}

/**
 * The twin. `gain`: requests per open × factor (or, where that leaves the drawn range, the
 * open probability × factor). `late`: a slow wave added after the world's own, carrying
 * 1 − 1/factor of the requests, with requests per open × factor, so that the early wave is
 * unchanged and only the late one differs. `fast`: every delay median ÷ FAST_FACTOR, the
 * requests unchanged. `baseline`: the users nobody pushed × factor (the baseline's share of
 * the SLO capacity is drawn uniformly, so as likely a draw while it stays within the range and
 * its peak within the headroom). Null when the twin leaves the family's range.
 * @param {Record<string, any>} raw
 * @param {number} factor
 * @param {'gain' | 'late' | 'fast' | 'baseline'} kind
 */
function twinOf(raw, factor, kind) {
  if (kind === 'baseline') {
    const rps = raw.baseline.rps * factor;
    return rps <= highestBaseline(raw) ? { ...raw, name: `${raw.name}-twin`, baseline: { ...raw.baseline, rps } } : null;
  }
  const wakeUp = { ...raw.wakeUp };
  if (kind === 'fast') {
    const shape = delayShapeOf(raw);
    if (!shape) return null;
    const ranges = DELAY_MEDIAN_RANGES[shape];
    const openDelay = wakeUp.openDelay.map((/** @type {Record<string, any>} */ c) => ({ ...c, medianSeconds: c.medianSeconds / FAST_FACTOR }));
    if (openDelay.some((/** @type {Record<string, any>} */ c, /** @type {number} */ i) => c.medianSeconds < ranges[Math.min(i, ranges.length - 1)][0])) return null;
    return { ...raw, name: `${raw.name}-twin`, wakeUp: { ...wakeUp, openDelay } };
  }
  if (wakeUp.requestsPerOpen * factor <= REQUESTS_PER_OPEN_MAX) wakeUp.requestsPerOpen *= factor;
  else if (wakeUp.openProbability * factor <= OPEN_PROBABILITY_MAX) wakeUp.openProbability *= factor;
  else {
    // Split between the two: requests per open to the top of its range, the rest on the open probability.
    const rest = factor / (REQUESTS_PER_OPEN_MAX / wakeUp.requestsPerOpen);
    if (wakeUp.openProbability * rest > OPEN_PROBABILITY_MAX) return null;
    wakeUp.requestsPerOpen = REQUESTS_PER_OPEN_MAX;
    wakeUp.openProbability *= rest;
  }
  if (kind === 'late') {
    const kept = 1 / factor;
    wakeUp.openDelay = [
      ...wakeUp.openDelay.map((/** @type {Record<string, unknown>} */ c) => ({ ...c, share: /** @type {number} */ (c.share) * kept })),
      { kind: 'lognormal', share: 1 - kept, medianSeconds: LATE_WAVE_SECONDS, sigma: 0.5 }
    ];
  }
  return { ...raw, name: `${raw.name}-twin`, wakeUp };
}

/**
 * The late twin where the family could have drawn it: a world whose users open in one
 * log-normal wave, and a twin that keeps it as the first of two (share 1/factor, within the
 * 0.3-0.8 the log-normal family draws for a mixture's first component; sim/families.js), the
 * second at LATE_WAVE_SECONDS with σ 0.5, also within its range. Null otherwise.
 * @param {Record<string, any>} raw
 * @param {number} factor
 */
function lateTwinInRange(raw, factor) {
  const [only, ...more] = raw.wakeUp.openDelay;
  if (more.length > 0 || only.kind !== 'lognormal' || !(1 / factor >= 0.3 && 1 / factor <= 0.8)) return null;
  return twinOf(raw, factor, 'late');
}

/**
 * The informed oracle, recording its sends per second from the campaign's start.
 * @param {number[]} schedule
 * @returns {import('./simulate.js').StrategyFactory}
 */
function recording(schedule) {
  return (scenario, world) => {
    const oracle = createInformedOracleStrategy(scenario, world);
    return {
      name: 'informed-oracle',
      sendsAt(context) {
        const n = oracle.sendsAt(context);
        if (context.t >= 0 && n > 0) schedule[context.t] = n;
        return n;
      }
    };
  };
}

/**
 * The same sends spread over stretch × the time: the cumulative count at t is the oracle's at
 * t / stretch.
 * @param {number[]} schedule
 * @param {number} stretch
 * @returns {number[]} sends per second
 */
function stretchSchedule(schedule, stretch) {
  const cumulative = [0];
  for (let t = 0; t < schedule.length; t++) cumulative.push(cumulative[t] + (schedule[t] ?? 0));
  const total = cumulative.at(-1) ?? 0;
  const at = (/** @type {number} */ x) => {
    const i = Math.floor(x);
    if (i >= schedule.length) return total;
    return cumulative[i] + (x - i) * (cumulative[i + 1] - cumulative[i]);
  };
  /** @type {number[]} */
  const out = [];
  const pacer = createPacer();
  let sent = 0;
  for (let t = 0; sent < total; t++) {
    const n = Math.min(total - sent, pacer.take(at((t + 1) / stretch) - at(t / stretch), total - sent));
    out.push(n);
    sent += n;
  }
  return out;
}

/**
 * Sends a fixed schedule.
 * @param {number[]} schedule
 * @returns {import('./simulate.js').StrategyFactory}
 */
function replaying(schedule) {
  return () => ({
    name: 'replay',
    sendsAt: ({ t, remaining }) => (t < 0 || t >= schedule.length ? (t >= schedule.length ? remaining : 0) : Math.min(remaining, schedule[t]))
  });
}

/**
 * When the metrics of w and its twin first differ detectably under a schedule: d'² summed
 * over the metrics windows of (Δrps / σ)² reaches 1, Δrps the difference of the expected
 * loads (the push loads, and the baselines for the baseline twin), σ² the window's Poisson
 * variance plus the baseline noise's; then the lag.
 * @param {import('./scenario.js').Scenario} scenario
 * @param {import('./scenario.js').Scenario} twin
 * @param {number[]} schedule
 * @returns {number | null}
 */
function whenDistinguishable(scenario, twin, schedule) {
  const world = createWorld(scenario);
  const twinWorld = createWorld(twin);
  const window = scenario.metrics.windowSeconds;
  const length = schedule.length + Math.max(world.massPerSecond.length, twinWorld.massPerSecond.length) + window;
  const push = pushLoad(world, schedule, length);
  const twinPush = pushLoad(twinWorld, schedule, length);
  let detect = 0;
  for (let from = 0; from + window <= length; from += window) {
    let load = 0;
    let difference = 0;
    let base = 0;
    for (let t = from; t < from + window; t++) {
      load += push[t];
      difference += twinPush[t] + twinWorld.baselineAt(t) - push[t] - world.baselineAt(t);
      base += world.baselineAt(t);
    }
    load /= window;
    difference /= window;
    base /= window;
    const variance = (base + load) / window + (scenario.baseline.noise.sigma * base) ** 2;
    detect += difference ** 2 / variance;
    if (detect >= 1) return from + window + scenario.metrics.lagSeconds;
  }
  return null;
}

/**
 * When a latency-only source first tells w and its twin apart under a schedule: the windows'
 * p95 as simulated in both (the same seed, so the same noise: only the load differs), d'²
 * summed over the windows of (Δp95 / (resolution · p95))² reaches 1; then the lag.
 * The simulated p95, not a stationary curve's at the mean load: a window's p95 is driven by
 * its busiest seconds, and a queue that builds up in them shows.
 * @param {import('./simulate.js').Series} own   the schedule's windows in w
 * @param {import('./simulate.js').Series} twin  the same schedule's windows in the twin
 * @param {number} lagSeconds
 * @param {number} resolution  the p95's relative noise
 * @returns {number | null}
 */
function whenLatencyDiffers(own, twin, lagSeconds, resolution) {
  let detect = 0;
  for (let k = 0; k < Math.min(own.t.length, twin.t.length); k++) {
    detect += ((twin.p95Ms[k] - own.p95Ms[k]) / (resolution * own.p95Ms[k])) ** 2;
    if (detect >= 1) return own.t[k] + own.windowSeconds + lagSeconds;
  }
  return null;
}

/**
 * The expected push load per second of a schedule in a world.
 * @param {import('./world.js').World} world
 * @param {number[]} schedule
 * @param {number} length
 */
function pushLoad({ massPerSecond, requestsPerSend }, schedule, length) {
  const push = new Float64Array(length);
  for (let t = 0; t < schedule.length; t++) {
    const scale = schedule[t] * requestsPerSend;
    if (scale > 0) for (let j = 0; j < massPerSecond.length && t + j < length; j++) push[t + j] += scale * massPerSecond[j];
  }
  return push;
}

/**
 * The blind bound: how fast any controller can finish w while its blind sends stay safe on a
 * twin. No metrics window that shows a campaign's wake-ups can be read before the window's
 * length plus the lag, so whatever a controller sends before then it sends the same in w and
 * in every twin with the same gateway and baseline (the gain, fast and late twins), however it
 * is built. A late twin's first wave is w's own, so it stays blind longer: until its late
 * wave could first show (lateTwinInRange; the blind time is at least as long). Those sends'
 * load on the twin must then stay within the twin's room by themselves: the sends after it can be stopped, those before it cannot. The smallest number of bins that
 * sends all of w's audience within w's room (the oracle's program, sim/oracle-planner.js) and
 * also keeps the twin's load from the blind bins within the twin's room is a lower bound on the
 * time of every controller that keeps w within the oracle's room and the twin within `room`
 * (in the limited worlds of tuning seed 11 it lies at 1.0-1.5 × the blind time: what the blind
 * bins could not send must then fit w's own room).
 * `room`: 'slo' is the twin's SLO capacity as the oracle plans
 * with it (its windows would go over the SLO); 'throughput' its full-CPU throughput (its queue
 * would grow without bound for the bin: requests time out).
 *
 * Conservative on the controller's side: bins only partly blind are not constrained, the last
 * bin counts from its start, and rows past `maxRows` bins (the kernel's far tail) are dropped.
 * A world can be limited only if T* < blind/(stretch − 1): waiting out the blind time and then
 * sending the oracle's schedule is always possible, so longer campaigns are not computed.
 * @param {string} family
 * @param {number} seed
 * @param {{ twin?: 'gain' | 'fast' | 'late' | 'fast+gain', factor?: number, stretches?: number[], room?: 'slo' | 'throughput', maxRows?: number, oracleSeconds?: number }} [options]
 *   oracleSeconds: the informed oracle's time on w, when already known (it is simulated otherwise)
 * @returns {{ seed: number, oracleSeconds: number, blindSeconds: number, twinInRange: boolean, plainSeconds: number | null, guardedSeconds: number | null, limited: boolean[] }}
 */
export function blindBound(family, seed, { twin = 'gain', factor = 3, stretches = [1.15, 1.4], room = 'throughput', maxRows = 1500, oracleSeconds: simulated } = {}) {
  const raw = drawScenario(family, seed);
  const scenario = resolveScenario(raw, raw.name);
  const oracleSeconds = simulated ?? /** @type {number} */ (simulate(scenario, 'informed-oracle').completionSeconds);
  // 'fast+gain': both at once (sooner, and more), within range for both.
  const fast = twin === 'fast+gain' ? twinOf(raw, factor, 'fast') : null;
  const twinRaw = twin === 'fast+gain' ? fast && twinOf(fast, factor, 'gain') : twin === 'late' ? lateTwinInRange(raw, factor) : twinOf(raw, factor, twin);
  // The late twin differs only in a wave that comes minutes later, so it cannot be told apart
  // as soon as a window shows the campaign's first wake-ups: only once the late wave's own
  // requests show. At the earliest, that is when they would show had the whole audience been
  // sent at once in the first second (the most and the earliest sends there can be, so the
  // largest difference at every moment; sim/information-limit.js whenDistinguishable).
  const detected = twin === 'late' && twinRaw ? whenDistinguishable(scenario, resolveScenario(twinRaw, twinRaw.name), [scenario.audience]) : null;
  const blindSeconds = Math.max(scenario.metrics.windowSeconds + scenario.metrics.lagSeconds, detected ?? 0);
  const none = { seed, oracleSeconds, blindSeconds, twinInRange: twinRaw !== null, plainSeconds: null, guardedSeconds: null, limited: stretches.map(() => false) };
  if (!twinRaw || oracleSeconds * (Math.max(...stretches) - 1) >= blindSeconds) return none;
  const known = knownScenario(scenario, 0);
  const world = createWorld(known);
  const twinScenario = knownScenario(resolveScenario(twinRaw, twinRaw.name), 0);
  const twinWorld = createWorld(twinScenario);
  const { confidence } = scenario.strategies.oracle;
  const binSeconds = Math.max(1, Math.ceil((Math.max(...stretches) * oracleSeconds) / 60));
  const blindBins = Math.floor(blindSeconds / binSeconds);
  /** Room per bin in sends at one world's requests per send. @param {import('./world.js').World} w @param {(t: number) => number} capacity */
  const roomOf = (w, capacity) => (/** @type {number} */ j) => {
    let least = Infinity;
    for (let t = j * binSeconds; t < (j + 1) * binSeconds; t++) least = Math.min(least, capacity(t) - w.baselineAt(t));
    return (Math.max(0, least) * binSeconds) / w.requestsPerSend;
  };
  const ownRoom = roomOf(world, (t) => world.sloCapacityAt(t, confidence));
  const twinRoom = roomOf(twinWorld, room === 'slo'
    ? (t) => twinWorld.sloCapacityAt(t, confidence)
    : (t) => twinWorld.gatewayModel.capacityRps(twinWorld.capacityFactorAt(t)));
  const kernel = binKernel(world.massPerSecond, binSeconds);
  const twinKernel = binKernel(twinWorld.massPerSecond, binSeconds);
  const perBinMax = scenario.sns.maxRate * binSeconds;

  /** The most n bins can send; guarded: the blind bins also within the twin's room. @param {number} n @param {boolean} guarded */
  function most(n, guarded) {
    const rows = loadRows(kernel, n, Math.min(n + kernel.length - 1, maxRows));
    const bounds = rows.map((_, j) => ownRoom(j));
    const g = guarded ? Math.min(n, blindBins) : 0;
    const twinRows = loadRows(twinKernel, n, Math.min(g + twinKernel.length - 1, maxRows), g);
    rows.push(...twinRows);
    bounds.push(...twinRows.map((_, j) => twinRoom(j)));
    for (let i = 0; i < n; i++) {
      const row = new Float64Array(n);
      row[i] = 1;
      rows.push(row);
      bounds.push(perBinMax);
    }
    return maximise({ rows, bounds, objective: new Float64Array(n).fill(1) }).value;
  }
  /** The fewest bins that send the audience (most(n) grows with n). @param {boolean} guarded */
  function fewest(guarded) {
    let hi = 1;
    while (most(hi, guarded) < scenario.audience) {
      hi *= 2;
      if (hi * binSeconds > 4 * Math.max(...stretches) * oracleSeconds + blindSeconds) return Infinity;
    }
    let lo = hi / 2;
    if (hi === 1) return 1;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (most(mid, guarded) >= scenario.audience) hi = mid; else lo = mid;
    }
    return hi;
  }
  const plainSeconds = (fewest(false) - 1) * binSeconds;
  const guardedSeconds = (fewest(true) - 1) * binSeconds;
  return { ...none, plainSeconds, guardedSeconds, limited: stretches.map((s) => guardedSeconds > s * oracleSeconds) };
}
