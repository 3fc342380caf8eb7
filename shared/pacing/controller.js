// The pacing controller: the send rate that keeps the gateway's p95 within its SLO, from
// a model of the wake-up traffic each send causes minutes later and the gateway's metrics.
// Pure: no I/O, no timers; the clock comes in with each observation. The governor process,
// the simulator (sim/) and tests all drive this same module. docs/pacing.md has the
// equations and the reasoning; controller-options.js every parameter.
//
// Each update:
//  1. records the sends since the last update in the load ledger (feedforward state);
//  2. with a fresh gateway observation, updates the baseline/requests-per-send filter and
//     the capacity estimate (feedback);
//  3. plans the largest rate whose future load stays within capacity (dead-time
//     compensation);
//  4. applies the guards: cut at once on errors or p99, no second cut within one open
//     delay, decay to a safe rate when metrics are stale, and the min/max bounds.
import { resolveControllerOptions } from './controller-options.js';
import { binKernel, cumulativeKernel, medianRequestDelayMs, requestTimeMassPerSecond } from './wake-up-model.js';
import { createLoadLedger } from './load-ledger.js';
import { createParameterEstimator } from './parameter-estimator.js';
import { createCapacityEstimator } from './capacity-estimator.js';
import { createRatePlanner } from './rate-planner.js';

/** @typedef {import('./controller-options.js').ControllerOptions} ControllerOptions */

/**
 * @typedef {object} GatewaySample  one metrics window of the API gateway
 * @property {number} p95Ms
 * @property {number} p99Ms
 * @property {number} errorRatio  failed / all requests in the window, 0..1
 * @property {number} rps         requests per second over the window, all traffic
 */

/**
 * @typedef {object} Observation
 * @property {number} now                 ms (any epoch; only differences matter)
 * @property {number} sent                sends since the previous update
 * @property {GatewaySample | null} gateway  null when the metrics are unavailable
 */

/**
 * @typedef {'plan' | 'max-rate' | 'min-rate' | 'error-cut' | 'latency-cut' | 'cut-hold' | 'stale'} RateReason
 *   plan: the model's rate; max-rate/min-rate: a bound; error-cut/latency-cut: a guard cut
 *   now; cut-hold: capped by an earlier cut; stale: metrics missing, decaying to safeRate
 */

/** @typedef {{ rate: number, reason: RateReason }} RateDecision */

/**
 * The controller with the public contract `{ update(observation) }`.
 * @param {Partial<ControllerOptions>} [options]
 * @returns {{ update(observation: Observation): RateDecision }}
 */
export function createController(options) {
  const { update } = createInspectableController(options);
  return { update };
}

/**
 * The same controller plus `snapshot()`, its internal estimates after the last update, for
 * charts, logs and tests.
 * @param {Partial<ControllerOptions>} [options]
 */
export function createInspectableController(options) {
  const o = resolveControllerOptions(options);
  const binSeconds = o.binMs / 1000;
  const massPerSecond = requestTimeMassPerSecond({
    openDelay: [{ share: 1, medianMs: o.openDelayMedianMs, sigma: o.openDelaySigma }],
    session: { kind: 'uniform', lengthMs: o.sessionMs }
  }, { tailMass: o.kernelTailMass });
  const kernel = binKernel(massPerSecond, binSeconds);
  const cumulative = cumulativeKernel(kernel);
  const ledger = createLoadLedger({ kernel, binMs: o.binMs, pastBins: Math.ceil((o.metricsLagMs + o.metricsWindowMs) / o.binMs) + 2 });
  const requestsPerSend = o.openProbability * o.requestsPerOpen;
  const params = createParameterEstimator({
    requestsPerSend,
    // priorUncertainty is where the upper confidence bound starts: prior + z·sd = prior × factor.
    requestsPerSendSd: o.confidence > 0 ? (requestsPerSend * (o.priorUncertainty - 1)) / o.confidence : requestsPerSend * (o.priorUncertainty - 1),
    baselineDrift: o.baselineDrift,
    gainDrift: o.gainDrift,
    rpsNoise: o.rpsNoise,
    windowSeconds: o.metricsWindowMs / 1000
  });
  const setpointMs = o.setpointRatio * o.sloP95Ms;
  const capacity = createCapacityEstimator({
    capacityRps: o.capacityRps,
    setpointMs,
    sloMs: o.sloP95Ms,
    baseLatencyMs: o.baseLatencyMs,
    riseLimit: o.capacityRiseLimit,
    dropLimit: o.capacityDropLimit,
    riseGain: o.capacityRiseGain,
    dropGain: o.capacityDropGain,
    activeShare: o.capacityActiveShare
  });
  const planner = createRatePlanner({ kernel, cumulative, binMs: o.binMs });
  const holdMs = o.cutHoldMs ?? medianRequestDelayMs(massPerSecond);
  const safeRate = Math.min(o.maxRate, Math.max(o.minRate, o.safeRate));

  /** @type {number | null} */
  let lastNow = null;
  /** @type {number | null} */
  let lastGatewayAt = null;
  /** @type {number | null} */
  let lastWindowAt = null;
  let lastRate = safeRate;
  let cap = Infinity;
  let holdUntil = -Infinity;
  /** The envelope that stale metrics decay: where it started and from which rate. */
  /** @type {{ since: number, from: number } | null} */
  let stale = null;
  let lastPlan = 0;
  let lastMaxUnitLoad = 0;

  /**
   * @param {Observation} observation
   * @returns {RateDecision}
   */
  function update(observation) {
    const now = Number(observation?.now);
    if (!Number.isFinite(now)) throw new TypeError(`observation.now must be a finite number of ms, got ${observation?.now}`);
    const sent = Number(observation.sent ?? 0);
    if (!Number.isFinite(sent) || sent < 0) throw new TypeError(`observation.sent must be a count ≥ 0, got ${observation.sent}`);
    const gateway = usable(observation.gateway) ? observation.gateway : null;

    // 1. Feedforward state: what has been sent, as the load it will cause.
    const from = lastNow === null || lastNow > now ? now - o.binMs : lastNow;
    const interval = lastNow === null || now <= lastNow ? o.binMs : Math.min(o.binMs, now - lastNow);
    ledger.advanceTo(Math.floor(now / o.binMs));
    ledger.addSends(from, now, sent);
    lastNow = now;

    // 2. Feedback: the gateway's window, aligned with the load predicted for that window.
    /** @type {RateReason | null} */
    let cutNow = null;
    if (gateway) {
      const windowEnd = now - o.metricsLagMs;
      params.update({
        rps: gateway.rps,
        unitLoad: ledger.meanOver(windowEnd - o.metricsWindowMs, windowEnd),
        dtMs: lastWindowAt === null ? o.metricsWindowMs : now - lastWindowAt
      });
      capacity.update({ rps: gateway.rps, p95Ms: gateway.p95Ms });
      lastGatewayAt = now;
      lastWindowAt = now;
      stale = null;
      const errors = gateway.errorRatio > o.maxErrorRatio;
      if (errors || gateway.p99Ms > o.p99LimitMs) {
        // The load in flight keeps arriving for about one open delay whatever is sent now;
        // cutting again on each window of it would starve the campaign.
        if (now >= holdUntil) {
          cap = Math.max(o.minRate, lastRate * o.cutFactor);
          holdUntil = now + holdMs;
          cutNow = errors ? 'error-cut' : 'latency-cut';
        }
      } else if (now >= holdUntil && cap < Infinity) {
        cap *= o.cutRecovery;
        if (cap >= o.maxRate) cap = Infinity;
      }
    }

    // 3. The plan.
    let planned = 0;
    if (params.initialised) {
      lastMaxUnitLoad = params.maxUnitLoad(capacity.capacity, o.confidence);
      planned = planner.plan({ nowMs: now, maxUnitLoad: lastMaxUnitLoad, committed: ledger.at, intervalMs: interval });
    }
    lastPlan = planned;

    // 4. Guards and bounds: the smallest limit wins and names the reason.
    /** @type {RateDecision} */
    let decision = { rate: planned, reason: 'plan' };
    if (cap < decision.rate || cutNow) decision = { rate: Math.min(cap, decision.rate), reason: cutNow ?? 'cut-hold' };
    const isStale = lastGatewayAt === null || now - lastGatewayAt > o.staleAfterMs;
    if (isStale) {
      stale ??= { since: now, from: lastGatewayAt === null ? safeRate : Math.max(lastRate, safeRate) };
      const envelope = safeRate + (stale.from - safeRate) * Math.exp(-(now - stale.since) / o.staleDecayMs);
      if (!params.initialised || envelope <= decision.rate) decision = { rate: envelope, reason: 'stale' };
    }
    if (decision.rate > o.maxRate) decision = { rate: o.maxRate, reason: cutNow ?? 'max-rate' };
    if (decision.rate < o.minRate) decision = { rate: o.minRate, reason: cutNow ?? 'min-rate' };
    lastRate = decision.rate;
    return decision;
  }

  return {
    update,
    /** Internal estimates after the last update. */
    snapshot() {
      return {
        ...params.snapshot(),
        ...capacity.snapshot(),
        maxUnitLoad: lastMaxUnitLoad,
        planned: lastPlan,
        cap,
        holdUntil,
        holdMs,
        setpointMs,
        stale: stale !== null
      };
    }
  };
}

/**
 * A gateway sample the controller can use: every field a finite number. Anything else counts
 * as "metrics unavailable", like null.
 * @param {unknown} g
 * @returns {g is GatewaySample}
 */
function usable(g) {
  if (!g || typeof g !== 'object') return false;
  const s = /** @type {Record<string, unknown>} */ (g);
  return ['p95Ms', 'p99Ms', 'errorRatio', 'rps'].every((k) => typeof s[k] === 'number' && Number.isFinite(s[k]) && /** @type {number} */ (s[k]) >= 0);
}
