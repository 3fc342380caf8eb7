// The pacing controller: the send rate that keeps the gateway's p95 within its SLO, from
// a model of the wake-up traffic each send causes minutes later and the gateway's metrics.
// Pure: no I/O, no timers; the clock comes in with each observation. The governor process,
// the simulator (sim/) and tests all drive this same module. docs/pacing.md has the
// equations and the reasoning; controller-options.js every parameter.
//
// Each update:
//  1. records the sends since the last update in the load ledgers (feedforward state);
//  2. with a fresh gateway observation, updates the wake-up model bank's baseline and
//     requests-per-send filters and the capacity estimate (feedback);
//  3. plans the largest rate whose future load stays within capacity (dead-time
//     compensation), the lowest over the wake-up shapes the data still allows;
//  4. applies the guards: cut at once on errors or p99, no second cut within one open
//     delay, decay to a safe rate when metrics are stale, and the min/max bounds.
import { resolveControllerOptions } from './controller-options.js';
import { medianRequestDelayMs } from './wake-up-model.js';
import { createModelBank } from './model-bank.js';
import { createCapacityEstimator } from './capacity-estimator.js';
import { createMissFeedback } from './miss-feedback.js';

/** @typedef {import('./controller-options.js').ControllerOptions} ControllerOptions */

/** The trial's hold stops once the bank's widest gain deviation is this share of the prior's. */
const HOLD_GAIN_SHARE = 0.75;
/** The least fixed wait before the margin settles to the noise (noiseMarginAfterMs null, noiseMarginWaitFactor 0): tuned on the default prior, whose slowest openers' median is 810 s. */
const NOISE_MARGIN_AFTER_MS = 1_800_000;

/** @typedef {import('../types.js').GatewaySample} GatewaySample  one metrics window of the API gateway (rps null: a latency-only source) */

/**
 * @typedef {object} Observation
 * @property {number} now                 ms (any epoch; only differences matter)
 * @property {number} sent                sends since the previous update
 * @property {GatewaySample | null} gateway  null when the metrics are unavailable
 * @property {number | null} [remaining]  optional: devices still to send in the campaigns
 *   running now. Lets the plan use the room the last sends leave behind. Omitted, null or 0:
 *   unknown, and the plan keeps room for sends that may follow.
 * @property {number} [untilNextMs]       optional: how long the decision will hold, until the next update
 *   (the governor's first tick comes early, on the lease, and the next on the wall clock's tick
 *   boundary). Default: one bin. The plan's burst is sized for it: sized for the time since the
 *   last update instead, a first decision 5 s before the boundary held twice as long as planned.
 */

/**
 * @typedef {'plan' | 'plan-latency-only' | 'cold-start' | 'whole-campaign' | 'short-campaign' | 'max-rate' | 'min-rate' | 'error-cut' | 'latency-cut' | 'cut-hold' | 'stale'} RateReason
 *   plan: the model's rate; plan-latency-only: the same, with the load read off the latency
 *   curve (the source has no request rate); cold-start: no metrics yet, but the campaign's
 *   whole wake-up load fits well inside the prior capacity; whole-campaign: a campaign not
 *   yet started whose whole wake-up load the plan fits under the capacity at the SLO
 *   (sloCapacityRatio); short-campaign: a campaign that fits under it when sent evenly
 *   within shortCampaignMs of its first send; max-rate/min-rate: a bound;
 *   error-cut/latency-cut: a guard cut now; cut-hold: capped by an earlier cut; stale:
 *   metrics missing, decaying to safeRate
 */

/** @typedef {{ rate: number, reason: RateReason }} RateDecision */

/**
 * @typedef {{ requestsPerSend: number, requestsPerSendSd: number, shape?: ShapePrior }} GainPrior  requests per send a
 *   campaign starts from, and the open-delay shape its model bank leans towards (wake-up-memory.js)
 * @typedef {import('./model-bank.js').ShapePrior} ShapePrior
 */

/**
 * @typedef {object} FinishedCampaign  what the controller had learned when sends stopped for idleResetMs
 * @property {number} startedAt          ms (the controller's clock): the first send (the start of the interval it was counted in)
 * @property {number} endedAt            ms (the controller's clock): the last send
 * @property {number} sends              sends since the previous reset
 * @property {number} baselineRps        the baseline when its sends began (later, its own wake-ups muddle it)
 * @property {number} capacityRps        and the capacity estimate
 * @property {number} priorRequestsPerSend    the prior on requests per send it started from
 * @property {number} priorRequestsPerSendSd
 * @property {number} requestsPerSend
 * @property {number} requestsPerSendSd
 * @property {number} medianFactor       the likeliest open-delay median, as a factor of the configured one
 * @property {number} sigmaFactor
 */

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
  const bank = createModelBank(o);
  const setpointMs = o.setpointRatio * o.sloP95Ms;
  /** The margin a campaign's plan settles to: never wider than sloMargin ("A margin that settles"). */
  const settledMargin = Math.min(o.settledMargin ?? o.sloMargin, o.sloMargin);
  /** One open delay: a cut holds this long; after a crossing the capacity estimate returns to the edge over as long (capacityEdgeRestoreMs null). */
  const holdMs = o.cutHoldMs ?? medianRequestDelayMs(bank.nominalMassPerSecond);
  const capacity = createCapacityEstimator({
    capacityRps: o.capacityRps,
    setpointMs,
    sloMs: o.sloP95Ms,
    baseLatencyMs: o.baseLatencyMs,
    riseLimit: o.capacityRiseLimit,
    dropLimit: o.capacityDropLimit,
    riseGain: o.capacityRiseGain,
    dropGain: o.capacityDropGain,
    activeShare: o.capacityActiveShare,
    saturationRatio: o.saturationRatio,
    latencyNoise: o.latencyNoise,
    sloCapacityRatio: o.sloCapacityRatio,
    edgeRelax: o.capacityEdgeRelax,
    edgeProbeWindows: o.capacityEdgeProbeWindows,
    edgeRestoreWindows: Math.round((o.capacityEdgeRestoreMs ?? holdMs) / o.metricsWindowMs),
    trialShare: o.capacityTrialShare,
    trialGrowth: o.capacityTrialGrowth,
    trialHoldShare: o.capacityTrialHoldShare ?? Infinity,
    trialHoldWindows: Math.round(holdMs / o.metricsWindowMs),
    envelopeWindows: Math.round(o.capacityEnvelopeMs / o.metricsWindowMs),
    baseLoadRps: o.baseLoadRps,
    windowMs: o.metricsWindowMs
  });
  const misses = createMissFeedback(o);
  const safeRate = Math.min(o.maxRate, Math.max(o.minRate, o.safeRate));
  /** With noiseMarginWaitFactor 0, when the margin may settle to the noise: once the slowest openers the bank allows have shown their wake-ups. */
  const fixedNoiseWaitMs = o.noiseMarginAfterMs ?? Math.max(NOISE_MARGIN_AFTER_MS, 2 * Math.max(1, o.slowOpenerFactor) ** 2 * o.openDelayMedianMs);

  /** @type {number | null} */
  let lastNow = null;
  /** @type {number | null} */
  let lastGatewayAt = null;
  /** @type {number | null} */
  let lastWindowAt = null;
  /** @type {number | null} */
  let lastSendAt = null;
  let gainIsPrior = true;
  let lastRate = safeRate;
  let cap = Infinity;
  let holdUntil = -Infinity;
  /** @type {{ since: number, from: number } | null} the envelope stale metrics decay: when it started, from which rate */
  let stale = null;
  let lastPlan = 0;
  /** How far the plan's margin is from settled: 1 at a campaign's start and after a window over the SLO, falling towards 0 while the windows stay under it. */
  let unsettled = 1;
  /** The margin the last plan kept free of the capacity at the SLO (sloMargin, or on its way to settledMargin). */
  let margin = o.sloMargin;
  /** A window of the current campaign went over the SLO. */
  let missedInCampaign = false;
  /** The last window came from a source that sees latency only. */
  let latencyOnly = false;
  /** The total load the last window showed or implied. @type {number | null} */
  let lastLoad = null;
  /** The last window's p95. @type {number | null} */
  let lastP95 = null;
  /** The gain prior the next campaign starts from (wake-up-memory.js); null: the configured one. @type {GainPrior | null} */
  let gainPrior = null;
  /** Sends since the last reset: the campaign(s) the current estimate was learned from. */
  let sendsSinceReset = 0;
  /** When the sends since the last reset began, and the baseline then. @type {number | null} */
  let firstSendAt = null;
  /** The short campaign's rate, set before its first send (0: not one; later decisions go no faster), and the devices it was set for, less the sends since. */
  let shortRate = 0;
  let shortLeft = 0;
  /** @type {number | null} */
  let startBaseline = null;
  /** The gain prior the sends since the last reset started from. @type {{ requestsPerSend: number, requestsPerSendSd: number } | null} */
  let startPrior = null;
  /** What the last campaign taught, once it is over, until takeFinished(). @type {FinishedCampaign | null} */
  let finished = null;

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
    const remaining = observation.remaining == null || observation.remaining === 0 ? Infinity : Number(observation.remaining);
    if (!(remaining > 0)) throw new TypeError(`observation.remaining must be a count ≥ 0 or null, got ${observation.remaining}`);

    // 1. Feedforward state: what has been sent, as the load it will cause.
    const from = lastNow === null || lastNow > now ? now - o.binMs : lastNow;
    const untilNextMs = observation.untilNextMs === undefined ? o.binMs : Number(observation.untilNextMs);
    if (!(untilNextMs > 0)) throw new TypeError(`observation.untilNextMs must be a number of ms > 0, got ${observation.untilNextMs}`);
    /** How long the rate decided now will hold: the plan sizes its sends for it. */
    const interval = Math.min(o.binMs, untilNextMs);
    bank.record(now, from, now, sent);
    lastNow = now;
    // No sends for a while: whatever comes next may be another campaign with another open
    // rate, so its first burst is sized from the prior again, not from the last campaign.
    if (sent > 0) {
      if (sendsSinceReset === 0) {
        firstSendAt = from;
        const start = bank.snapshot();
        startBaseline = start.baseline;
        startPrior = { requestsPerSend: start.requestsPerSend, requestsPerSendSd: start.requestsPerSendSd };
      }
      lastSendAt = now;
      gainIsPrior = false;
      sendsSinceReset += sent;
    } else if (!gainIsPrior && (lastSendAt === null || now - lastSendAt >= o.idleResetMs)) {
      const learned = bank.snapshot();
      finished = {
        startedAt: firstSendAt ?? lastSendAt ?? now, endedAt: lastSendAt ?? now, sends: sendsSinceReset,
        requestsPerSend: learned.requestsPerSend, requestsPerSendSd: learned.requestsPerSendSd,
        medianFactor: learned.medianFactor, sigmaFactor: learned.sigmaFactor,
        baselineRps: startBaseline ?? learned.baseline, capacityRps: capacity.snapshot().capacity,
        priorRequestsPerSend: startPrior?.requestsPerSend ?? learned.requestsPerSend,
        priorRequestsPerSendSd: startPrior?.requestsPerSendSd ?? learned.requestsPerSendSd
      };
      bank.resetGain(gainPrior ?? undefined);
      gainIsPrior = true;
      sendsSinceReset = 0;
      firstSendAt = null;
      startBaseline = null;
      startPrior = null;
    }

    // 2. Feedback: the gateway's window, aligned with the load predicted for that window.
    /** @type {RateReason | null} */
    let cutNow = null;
    if (gateway) {
      const windowEnd = now - o.metricsLagMs;
      latencyOnly = gateway.rps === null;
      // The trial's hold guards the prior's gain while the bank has not learned better: once
      // every member that counts knows requests per send to within HOLD_GAIN_SHARE of the
      // prior's deviation, the wake-ups it plans for are the measured ones (adopted in session
      // 68; docs/pacing.md "The trial's hold").
      const holdable = startPrior === null || bank.widestCountingGainSd() > HOLD_GAIN_SHARE * startPrior.requestsPerSendSd;
      capacity.update({ rps: gateway.rps, p95Ms: gateway.p95Ms, holdable });
      misses.observe(gateway.p95Ms > o.sloP95Ms);
      // A saturated gateway's request counter shows its throughput, not the demand: the
      // window says the load was at least that much (censored). Not once the demand has
      // fallen back: the gateway then serves its queue at full speed, more than arrives. In
      // a saturated FIFO queue the wait grows by (λ − y)/y per second, so a window whose p95
      // fell since the last says the load was at least y·(1 + Δp95/Δt) ("A draining queue",
      // docs/pacing.md). A latency-only source's load is read off the capacity curve; the
      // source's own request rate (a probe's) is never gateway load.
      const saturated = gateway.p95Ms >= 2 * o.sloP95Ms || gateway.errorRatio > o.maxErrorRatio;
      const dtMs = lastWindowAt === null ? o.metricsWindowMs : now - lastWindowAt;
      const drained = saturated && lastP95 !== null ? Math.max(0, 1 + Math.min(0, gateway.p95Ms - lastP95) / dtMs) : 1;
      const load = gateway.rps === null
        ? capacity.loadAtLatency(gateway.p95Ms, 2 * o.sloP95Ms)
        : { rps: gateway.rps * drained, variance: undefined, censored: false };
      lastP95 = gateway.p95Ms;
      bank.observe({
        rps: load.rps,
        variance: load.variance,
        censored: saturated || load.censored,
        windowStartMs: windowEnd - o.metricsWindowMs,
        windowEndMs: windowEnd,
        dtMs
      });
      lastWindowAt = now;
      // The margin (below) is widest where the estimates are least tried: a campaign's first
      // minutes and the windows after a miss. Each window of the campaign under the SLO takes
      // it a step towards settledMargin; a window over puts it back. A campaign with any
      // window over keeps settledMargin at least: the margin sized by the noise is for
      // campaigns whose every window stayed under the SLO.
      if (sendsSinceReset === 0) missedInCampaign = false;
      else if (gateway.p95Ms > o.sloP95Ms) missedInCampaign = true;
      unsettled = sendsSinceReset === 0 || gateway.p95Ms > o.sloP95Ms ? 1 : unsettled * Math.exp(-dtMs / o.marginSettleMs);
      lastLoad = load.rps;
      lastGatewayAt = now;
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
      } else if (now >= holdUntil) {
        // One open delay later the model has absorbed the event (the capacity estimate has
        // followed the latency, the load in flight has arrived): the plan is in charge again.
        cap = Infinity;
      }
    }

    // 3. The plan. With the capacity at the SLO known, the plan keeps at most sloMargin of it
    // free: where the latency curve is flat near the setpoint, 0.8 × the SLO in latency is
    // half the capacity at the SLO in load, and a gateway whose baseline sits near the
    // setpoint left a campaign 7 requests/s of room (sim/families.js worlds that never
    // finished; docs/pacing.md "A margin in load terms"). While the campaign's windows stay
    // under the SLO that margin settles towards settledMargin ("A margin that settles").
    // The plan fills the estimate, or less while the operator's prior is on trial
    // (capacity-estimator.js followTrial).
    const estimateRps = capacity.capacity * misses.trim;
    const capacityRps = capacity.planned * misses.trim;
    const sloRps = o.sloCapacityRatio * capacityRps;
    // The whole and the short campaign read the estimate, not the prior's trial (below).
    const sloEstimateRps = o.sloCapacityRatio * estimateRps;
    // Once the slowest shape the bank still counts has shown its wake-ups (noiseMarginWaitFactor
    // × its median since the campaign's first send; or noiseMarginAfterMs), in a campaign with
    // no window over, and with a source that reports the request rate, the margin settles
    // further where the load noise is small against the capacity at the SLO: to noiseMarginZ
    // of its standard deviations, never under noiseMarginFloor ("A margin sized by the noise",
    // docs/pacing.md). The noise is the measured one and the Poisson count of the load near
    // the SLO over noiseMarginPoissonMs (√(λ/τ) requests/s): a window's p95 is set by its
    // busiest seconds, not by its mean, which on a small gateway is most of the difference.
    const age = firstSendAt === null ? 0 : now - firstSendAt;
    const noiseWaitMs = o.noiseMarginAfterMs === null && o.noiseMarginWaitFactor > 0
      ? o.noiseMarginWaitFactor * bank.slowestCountingFactor() * o.openDelayMedianMs
      : fixedNoiseWaitMs;
    const noiseRps = o.noiseMarginZ > 0 && settledMargin < o.sloMargin && !latencyOnly && !missedInCampaign && age >= noiseWaitMs ? bank.loadNoiseRps() : null;
    const poissonVariance = o.noiseMarginPoissonMs > 0 && sloRps > 0 ? sloRps / (o.noiseMarginPoissonMs / 1000) : 0;
    const settleTo = noiseRps === null || !(sloRps > 0) ? settledMargin
      : Math.min(settledMargin, Math.max(o.noiseMarginFloor, (o.noiseMarginZ * Math.sqrt(noiseRps ** 2 + poissonVariance)) / sloRps));
    margin = settleTo + (o.sloMargin - settleTo) * unsettled;
    const aimRps = Math.max(capacityRps, (1 - margin) * sloRps);
    // Optionally (off by default) a margin in proportion to the push load as well: what the
    // model gets wrong (the gain, the shape) scales with it. With the ratio unknown the
    // setpoint is the margin ("A margin in proportion to the push load", docs/pacing.md).
    const pushMargin = o.sloCapacityRatio > 1 ? o.pushMargin : 0;
    // A campaign not yet started whose whole wake-up load, planned at each member's caution,
    // fits under the capacity at the SLO goes out in this interval: the setpoint's margin is
    // for a campaign's long run of windows, not for the one peak of a campaign sent at once.
    // Asked first: the bank's snapshot keeps the plan at the setpoint. It reads the estimate,
    // not the prior's trial: one peak, not the long run of windows the trial guards (with the
    // trial here too, the campaigns the informed oracle sends within a minute took 4.13 × its
    // time, not 0.40 ×: sim/tune.js, seed 11).
    const fitsAtSlo = bank.initialised && sendsSinceReset === 0 && remaining < Infinity && o.sloCapacityRatio > 1 &&
      bank.plan({ nowMs: now, capacityRps: estimateRps, aimRps: sloEstimateRps, intervalMs: interval, remaining, pushMargin }) * (interval / 1000) >= remaining;
    const planned = bank.initialised ? bank.plan({ nowMs: now, capacityRps, aimRps, intervalMs: interval, remaining, pushMargin }) : 0;
    const whole = fitsAtSlo && planned * (interval / 1000) < remaining;
    // A campaign that does not fit in one interval may still be one peak: sent evenly within
    // shortCampaignMs of its first send, its whole wake-up load, at each member's caution,
    // under the capacity at the SLO. Its first sends' wake-ups mostly arrive after its last
    // send, as with the campaign sent at once; the setpoint's margin is for the long run of
    // windows in which the plan reads its own campaign's load and corrects. The rate is set
    // before the first send, from the prior, whose width is honest; later decisions ask again
    // and go no faster than that: asked afresh mid-campaign, a member sure of a wrong gain (a
    // shape that misfits) sent 72,731 devices at once (exponential/2816701733, tuning seed 12).
    // Devices added since (another campaign) make it another campaign: the rule is off.
    shortLeft -= sent;
    // (Before the first send shortRate is set afresh below.)
    if (remaining > shortLeft) shortRate = 0;
    const asked = (sendsSinceReset === 0 || shortRate > 0) && bank.initialised && remaining < Infinity &&
      o.sloCapacityRatio > 1 && o.lossShare === 0 && age < o.shortCampaignMs;
    const even = asked ? bank.shortCampaignRate({ nowMs: now, aimRps: sloEstimateRps, remaining, maxMs: o.shortCampaignMs - age, pushMargin }) : 0;
    if (sendsSinceReset === 0) {
      shortRate = even;
      shortLeft = remaining;
    }
    const short = Math.min(shortRate, even);
    lastPlan = planned;

    // 4. Guards and bounds: the smallest limit wins and names the reason.
    /** @type {RateDecision} */
    let decision = whole
      ? { rate: Math.max(planned, remaining / (interval / 1000)), reason: 'whole-campaign' }
      : short > planned
        ? { rate: short, reason: 'short-campaign' }
        : { rate: planned, reason: latencyOnly ? 'plan-latency-only' : 'plan' };
    if (cap < decision.rate || cutNow) decision = { rate: Math.min(cap, decision.rate), reason: cutNow ?? 'cut-hold' };
    const isStale = lastGatewayAt === null || now - lastGatewayAt > o.staleAfterMs;
    if (isStale) {
      stale ??= { since: now, from: lastGatewayAt === null ? safeRate : Math.max(lastRate, safeRate) };
      const envelope = safeRate + (stale.from - safeRate) * Math.exp(-(now - stale.since) / o.staleDecayMs);
      if (!bank.initialised || envelope <= decision.rate) decision = { rate: envelope, reason: 'stale' };
      // No metrics yet: a campaign whose whole wake-up load, at the prior's upper bound, fits
      // well inside the prior capacity goes out at once instead of at the safe rate (an
      // independent check: 1,000 devices took 41 s at 20/s for about 1% of the headroom).
      if (lastGatewayAt === null && remaining < Infinity && bank.coldStartLoad(remaining) <= o.coldStartShare * o.capacityRps) {
        decision = { rate: Math.max(decision.rate, remaining / (interval / 1000)), reason: 'cold-start' };
      }
    }
    if (decision.rate >= o.maxRate) decision = { rate: o.maxRate, reason: cutNow ?? (decision.reason.startsWith('plan') ? 'max-rate' : decision.reason) };
    if (decision.rate < o.minRate) decision = { rate: o.minRate, reason: cutNow ?? 'min-rate' };
    lastRate = decision.rate;
    return decision;
  }

  return {
    update,
    /**
     * The gain prior the next campaign starts from (null: the configured one). Applied at
     * once while no campaign is being learned, else at the next idle reset.
     * @param {GainPrior | null} prior
     */
    setGainPrior(prior) {
      gainPrior = prior;
      if (gainIsPrior) bank.resetGain(prior ?? undefined);
    },
    /** What the last finished campaign taught (at its idle reset), once; null if none since the last call. */
    takeFinished() {
      const taken = finished;
      finished = null;
      return taken;
    },
    /** Internal estimates after the last update. */
    snapshot() {
      return {
        ...bank.snapshot(),
        ...capacity.snapshot(),
        ...misses.snapshot(),
        planned: lastPlan,
        margin,
        /** The capacity the plan fills: the estimate, or less during the prior's trial or on a jumpy gateway, × the miss trim. */
        plannedCapacityRps: capacity.planned * misses.trim,
        cap,
        holdUntil,
        holdMs,
        setpointMs,
        stale: stale !== null,
        mode: latencyOnly ? 'latency-only' : 'rate',
        /** The baseline when the sends since the last reset began (null: none since). */
        startBaselineRps: startBaseline,
        /** The gain prior they started from (null: none since). */
        startPrior,
        observedLoadRps: lastLoad
      };
    }
  };
}

/**
 * A gateway sample the controller can use: every field a finite number, but `rps` may be
 * null (a latency-only source). Anything else counts as "metrics unavailable", like null.
 * @param {unknown} g
 * @returns {g is GatewaySample}
 */
function usable(g) {
  if (!g || typeof g !== 'object') return false;
  const s = /** @type {Record<string, unknown>} */ (g);
  const number = (/** @type {string} */ k) => typeof s[k] === 'number' && Number.isFinite(s[k]) && /** @type {number} */ (s[k]) >= 0;
  return ['p95Ms', 'p99Ms', 'errorRatio'].every(number) && (s.rps === null || number('rps'));
}
