// adaptive: the pacing controller (shared/pacing/controller.js), the same module the
// governor runs, fed the simulated gateway's metrics windows every control interval. It
// starts during the warm-up, as the always-running governor would have, so it has seen the
// baseline before the first send.
import { createInspectableController } from '../../shared/pacing/controller.js';
import { CONTROLLER_DEFAULTS } from '../../shared/pacing/controller-options.js';
import { createPacer } from './pacer.js';

/** @typedef {import('./strategy.js').Strategy} Strategy */
/**
 * @typedef {object} AdaptiveDecision  one control interval, as sim/trace-world.js prints it
 * @property {number} t            s of simulated time
 * @property {number} remaining    devices not yet sent
 * @property {import('../../shared/types.js').GatewaySample | null} gateway  the window the controller read (null: none)
 * @property {{ rate: number, reason: string }} decision
 * @property {ReturnType<ReturnType<typeof createInspectableController>['snapshot']>} snapshot  its estimates after deciding
 */

/**
 * The controller's options for a scenario: the SLO, metrics timing and SNS limit come from
 * the scenario's world (the governor reads them from its config); the priors from
 * strategies.adaptive.controller, else the controller's defaults.
 * @param {import('../scenario.js').Scenario} scenario
 */
export function adaptiveControllerOptions(scenario) {
  return {
    sloP95Ms: scenario.slo.p95Ms,
    metricsWindowMs: scenario.metrics.windowSeconds * 1000,
    metricsLagMs: scenario.metrics.lagSeconds * 1000,
    maxRate: scenario.sns.maxRate,
    ...scenario.strategies.adaptive.controller
  };
}

/**
 * @param {import('../scenario.js').Scenario} scenario
 * @param {unknown} [_world]  unused: the controller knows only what it observes
 * @param {{ tellsRemaining?: boolean, onDecision?: (decision: AdaptiveDecision) => void }} [options]
 *   tellsRemaining false: the controller is not told the devices still to send, as with a
 *   governor that cannot read them (a reference for bench/pacing.js); onDecision: called with
 *   each decision and everything the controller knew then (sim/trace-world.js)
 * @returns {Strategy}
 */
export function createAdaptiveStrategy(scenario, _world, { tellsRemaining = true, onDecision } = {}) {
  const interval = scenario.strategies.adaptive.controlIntervalSeconds;
  const controller = createInspectableController(adaptiveControllerOptions(scenario));
  const pacer = createPacer();
  /** @type {Array<Record<string, number | string | boolean>>} */
  const trace = [];
  let rate = 0;
  let sentSinceUpdate = 0;
  let lastSendT = -Infinity;
  const idleResetSeconds = (adaptiveControllerOptions(scenario).idleResetMs ?? CONTROLLER_DEFAULTS.idleResetMs) / 1000;
  /** What the controller had learned at the campaign's end, before an idle reset forgets it. @type {ReturnType<typeof controller.snapshot> | null} */
  let learned = null;
  return {
    name: 'adaptive',
    trace,
    get learned() { return learned; },
    /** The controller's estimates now (bench/forecast-accuracy.js forecasts from them). */
    snapshot: () => controller.snapshot(),
    sendsAt({ t, remaining, snsMax, observe }) {
      if (((t % interval) + interval) % interval === 0) {
        const gateway = observe();
        const decision = controller.update({ now: t * 1000, sent: sentSinceUpdate, gateway, remaining: tellsRemaining ? remaining : null, untilNextMs: interval * 1000 });
        sentSinceUpdate = 0;
        rate = decision.rate;
        const s = controller.snapshot();
        onDecision?.({ t, remaining, gateway, decision, snapshot: s });
        if (t - lastSendT < idleResetSeconds - interval) learned = s;
        trace.push({ t, rate, reason: decision.reason, capacity: s.capacity, baseline: s.baseline, requestsPerSend: s.requestsPerSend, requestsPerSendSd: s.requestsPerSendSd, maxUnitLoad: s.maxUnitLoad, uncertaintyRps: s.uncertaintyRps, models: s.plausibleModels, shape: `${s.medianFactor.toFixed(2)}/${s.sigmaFactor.toFixed(2)}`, capacityTrial: s.capacityTrial });
      }
      if (t < 0) return 0;
      const n = pacer.take(rate, Math.min(remaining, snsMax));
      sentSinceUpdate += n;
      if (n > 0) lastSendT = t;
      return n;
    }
  };
}
