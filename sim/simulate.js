// The virtual-time simulator: one-second ticks over arrays, no per-device events, so a
// million devices over hours of simulated time take well under a second per strategy.
//
// Each second: the strategy decides how many devices to send to; their wake-up requests are
// added to the future push load (the true kernel × the true requests per send); the gateway
// receives a Poisson number of requests around baseline × noise + push load and queues them
// (sim/gateway-model.js); every metrics window (10 s) yields p95, p99, error ratio and rps,
// which a governor may read `lagSeconds` after the window ends (with rps null when the
// scenario's metrics source does not report it).
import { createRandom } from './random.js';
import { createWorld } from './world.js';
import { createBlastStrategy } from './strategies/blast.js';
import { createBatchesStrategy } from './strategies/batches.js';
import { createStaticStrategy } from './strategies/static.js';
import { createAdaptiveStrategy } from './strategies/adaptive.js';
import { createOracleStrategy } from './strategies/oracle.js';
import { createInformedOracleStrategy } from './strategies/informed-oracle.js';

/** @typedef {import('./scenario.js').Scenario} Scenario */
/** @typedef {import('./strategies/strategy.js').Strategy} Strategy */
/** @typedef {import('../shared/pacing/controller.js').GatewaySample} GatewaySample */

/** The warm-up's seconds, counted back from the campaign's start, that draw from the scenario's own random stream (every run before session 56 had a 300-s warm-up). */
const SHARED_WARMUP_SECONDS = 300;
/** Mixed into the scenario's seed for the stream of a longer warm-up's earlier seconds. */
const HISTORY_STREAM = 0x68e31da4;

/** Every strategy by name. @type {Readonly<Record<string, (scenario: Scenario, world: import('./world.js').World) => Strategy>>} */
export const STRATEGIES = Object.freeze({
  blast: createBlastStrategy,
  batches: createBatchesStrategy,
  static: createStaticStrategy,
  adaptive: createAdaptiveStrategy,
  oracle: createOracleStrategy,
  'informed-oracle': createInformedOracleStrategy
});

/**
 * @typedef {object} SimulationResult
 * @property {string} scenario
 * @property {string} strategy
 * @property {boolean} completed
 * @property {number | null} completionSeconds  from the first possible send to the last send; null if not completed within maxSeconds
 * @property {number} sloViolationShare  share of the evaluated 10-s windows whose p95 is over the SLO
 * @property {number} gatewayErrors      requests failed (timed out) over the whole run
 * @property {number} peakP95Ms          highest window p95 from the campaign's start on
 * @property {number} evaluatedWindows   windows from the start until the last send's load has arrived (99%) and any backlog has drained
 * @property {number} violatedWindows
 * @property {number} sent
 * @property {number} peakSendRate       most sends in one second
 * @property {number} peakLoadRps        highest window rps
 * @property {number} sloP95Ms
 * @property {number} runtimeMs          wall time of the simulation, including the strategy's planning
 * @property {Series} [series]           per-window time series (with `series: true`)
 */

/**
 * @typedef {object} Series  one entry per metrics window from the campaign's start
 * @property {number} windowSeconds
 * @property {number[]} t            window start, seconds from the campaign's start
 * @property {number[]} sendRate     sends/s over the window
 * @property {number[]} rps          gateway responses/s (what its request counter shows; the governor's `rps`)
 * @property {number[]} offeredRps   requests/s arriving at the gateway (above its capacity under overload)
 * @property {number[]} capacity     requests/s the gateway completes at full CPU
 * @property {number[]} sloCapacity  requests/s at which the stationary p95 meets the SLO
 * @property {number[]} p95Ms
 * @property {number[]} errors       failed requests in the window
 * @property {Array<Record<string, number | string | boolean>>} [trace]  the adaptive controller's decisions
 */

/** @typedef {(scenario: Scenario, world: import('./world.js').World) => Strategy} StrategyFactory */

/**
 * Runs one strategy on one scenario.
 * @param {Scenario} scenario
 * @param {string | StrategyFactory} strategyOrFactory  a name from STRATEGIES, or a factory (benchmarks, tests)
 * @param {{ series?: boolean }} [options]
 * @returns {SimulationResult}
 */
export function simulate(scenario, strategyOrFactory, { series = false } = {}) {
  const started = performance.now();
  const factory = typeof strategyOrFactory === 'function' ? strategyOrFactory : STRATEGIES[strategyOrFactory];
  if (!factory) throw new RangeError(`unknown strategy ${strategyOrFactory}; known: ${Object.keys(STRATEGIES).join(', ')}`);
  const world = createWorld(scenario);
  const strategy = factory(scenario, world);
  const strategyName = strategy.name;
  const random = createRandom(scenario.seed);
  const { gatewayModel, massPerSecond, requestsPerSend } = world;
  const warmup = scenario.warmupSeconds;
  const windowSeconds = scenario.metrics.windowSeconds;
  const lag = scenario.metrics.lagSeconds;
  const kernelLength = massPerSecond.length;
  const tail99 = world.requestDelayQuantile(0.99);

  // Per-second state, indexed from the warm-up's first second.
  const total = warmup + scenario.maxSeconds + kernelLength + windowSeconds;
  const push = new Float64Array(total);
  const arrivals = new Float64Array(total);
  const delayMs = new Float64Array(total);
  const rho = new Float64Array(total);
  const serviceMs = new Float64Array(total);
  const errors = new Float64Array(total);
  const responses = new Float64Array(total);
  const sends = new Float64Array(total);

  // Per-window results, as the gateway's metrics have them.
  /** @type {Array<GatewaySample & { rps: number }>} */
  const windows = [];
  // A source that sees latency only (an active probe) has no request rate.
  const reportsRps = scenario.metrics.reportsRps;

  const noise = scenario.baseline.noise;
  const phi = Math.exp(-1 / noise.correlationSeconds);
  const innovation = noise.sigma * Math.sqrt(1 - phi * phi);
  let logNoise = noise.sigma * random.normal();
  // The warm-up's last SHARED_WARMUP_SECONDS and the campaign draw from the scenario's stream;
  // a longer warm-up's earlier seconds draw from a stream of their own. So a longer warm-up
  // changes what the controller has seen before the campaign, not the campaign's noise.
  const historySeconds = Math.max(0, warmup - SHARED_WARMUP_SECONDS);
  const history = createRandom(scenario.seed ^ HISTORY_STREAM);
  let historyNoise = noise.sigma * history.normal();

  const inOutage = (/** @type {number} */ t) => scenario.metrics.outages.some((o) => t >= o.atSeconds && t < o.atSeconds + o.durationSeconds);
  let remaining = scenario.audience;
  let lastSend = -1;
  let backlog = 0;
  let i = 0;
  /** @type {number | null} */
  let drainedAt = null;

  for (; i < total - kernelLength; i++) {
    const t = i - warmup;
    // The latest complete window a governor can read now.
    const observe = () => {
      if (inOutage(t)) return null;
      const k = Math.floor((i - lag) / windowSeconds) - 1;
      if (k < 0 || k >= windows.length) return null;
      return reportsRps ? windows[k] : { ...windows[k], rps: null };
    };
    const n = strategy.sendsAt({ t, remaining, snsMax: scenario.sns.maxRate, observe });
    if (n > 0) {
      if (t < 0 || n > remaining || n > scenario.sns.maxRate || !Number.isInteger(n)) throw new RangeError(`strategy ${strategy.name} sent ${n} at t=${t} with ${remaining} remaining`);
      remaining -= n;
      sends[i] = n;
      lastSend = t;
      const scale = n * requestsPerSend;
      for (let j = 0; j < kernelLength; j++) push[i + j] += scale * massPerSecond[j];
    }

    const early = i < historySeconds;
    const draw = early ? history : random;
    if (early) historyNoise = phi * historyNoise + innovation * history.normal();
    else logNoise = phi * logNoise + innovation * random.normal();
    const expected = world.baselineAt(t) * Math.exp((early ? historyNoise : logNoise) - (noise.sigma * noise.sigma) / 2) + push[i];
    const a = draw.poisson(expected);
    const second = gatewayModel.step({ arrivals: a, factor: world.capacityFactorAt(t), backlog });
    backlog = second.backlog;
    arrivals[i] = a;
    delayMs[i] = second.delayMs;
    rho[i] = second.rho;
    serviceMs[i] = second.serviceMs;
    errors[i] = second.errors;
    responses[i] = second.completed;

    if ((i + 1) % windowSeconds === 0) {
      const from = i + 1 - windowSeconds;
      const to = i + 1;
      let count = 0;
      let failed = 0;
      for (let s = from; s < to; s++) { count += responses[s]; failed += errors[s]; }
      const perSecond = { arrivals, delayMs, rho, serviceMs };
      windows.push({
        p95Ms: gatewayModel.windowQuantile(perSecond, from, to, 0.95),
        p99Ms: gatewayModel.windowQuantile(perSecond, from, to, 0.99),
        errorRatio: count > 0 ? Math.min(1, failed / count) : 0,
        rps: count / windowSeconds
      });
    }

    // Done when everything is sent, 99% of its load has arrived and the backlog has drained.
    if (remaining === 0 && backlog === 0 && drainedAt === null && t >= lastSend + tail99) drainedAt = t;
    if (drainedAt !== null && (i + 1) % windowSeconds === 0) { i++; break; }
  }

  // Evaluate from the campaign's start until the last send's load has (99%) arrived and any
  // backlog has drained; unfinished campaigns are evaluated over everything simulated.
  const completed = remaining === 0;
  const startWindow = Math.ceil(warmup / windowSeconds);
  const evalEnd = completed ? warmup + Math.max(lastSend + 1 + tail99, drainedAt ?? 0) : i;
  const endWindow = Math.min(windows.length, Math.ceil(evalEnd / windowSeconds));
  let violated = 0;
  let peakP95Ms = 0;
  let peakLoadRps = 0;
  for (let k = startWindow; k < windows.length; k++) {
    const w = windows[k];
    peakP95Ms = Math.max(peakP95Ms, w.p95Ms);
    peakLoadRps = Math.max(peakLoadRps, w.rps);
    if (k < endWindow && w.p95Ms > scenario.slo.p95Ms) violated++;
  }
  let gatewayErrors = 0;
  let peakSendRate = 0;
  for (let s = 0; s < i; s++) { gatewayErrors += errors[s]; peakSendRate = Math.max(peakSendRate, sends[s]); }

  /** @type {SimulationResult} */
  const result = {
    scenario: scenario.name,
    strategy: strategyName,
    completed,
    completionSeconds: completed ? lastSend + 1 : null,
    sloViolationShare: endWindow > startWindow ? violated / (endWindow - startWindow) : 0,
    gatewayErrors: Math.round(gatewayErrors),
    peakP95Ms: Math.round(peakP95Ms),
    evaluatedWindows: Math.max(0, endWindow - startWindow),
    violatedWindows: violated,
    sent: scenario.audience - remaining,
    peakSendRate,
    peakLoadRps: Math.round(peakLoadRps),
    sloP95Ms: scenario.slo.p95Ms,
    runtimeMs: 0
  };
  if (series) {
    /** @type {Series} */
    const out = { windowSeconds, t: [], sendRate: [], rps: [], offeredRps: [], capacity: [], sloCapacity: [], p95Ms: [], errors: [] };
    for (let k = startWindow; k < windows.length; k++) {
      const from = k * windowSeconds;
      const t = from - warmup;
      let sent = 0;
      let failed = 0;
      let offered = 0;
      for (let s = from; s < from + windowSeconds; s++) { sent += sends[s]; failed += errors[s]; offered += arrivals[s]; }
      out.t.push(t);
      out.sendRate.push(sent / windowSeconds);
      out.rps.push(windows[k].rps);
      out.offeredRps.push(offered / windowSeconds);
      out.capacity.push(gatewayModel.capacityRps(world.capacityFactorAt(t)));
      out.sloCapacity.push(gatewayModel.rateAtP95(world.capacityFactorAt(t), scenario.slo.p95Ms));
      out.p95Ms.push(windows[k].p95Ms);
      out.errors.push(failed);
    }
    if (strategy.trace) out.trace = strategy.trace;
    result.series = out;
  }
  result.runtimeMs = Math.round(performance.now() - started);
  return result;
}
