// Watches the governor's pacing controller from outside: wraps it so that each decision
// sets the controller gauges and appends a point to the governor series the dashboard
// charts (gateway p95 against the SLO). The controller and governor.js stay unaware of it.
import { CONTROLLER_REASONS, controllerMetrics } from './registry.js';

/** @typedef {import('../governor/governor.js').Controller} Controller */
/** @typedef {import('../pacing/controller.js').Observation} Observation */

/**
 * @param {Controller} controller
 * @param {object} options
 * @param {import('./registry.js').MetricsRegistry} options.registry
 * @param {number} options.sloMs                 the controller's p95 objective
 * @param {Pick<import('./series-store.js').SeriesStore, 'appendGovernor'>} [options.series]  where decisions go for the dashboard
 * @param {import('pino').Logger} [options.logger]
 * @returns {Controller}
 */
export function observeController(controller, { registry, sloMs, series, logger }) {
  const m = controllerMetrics(registry);
  m.slo.set(sloMs / 1000);
  for (const reason of CONTROLLER_REASONS) m.reason.set({ reason }, 0);
  let seriesFailing = false;

  /** @param {Observation} observation @param {import('../pacing/controller.js').RateDecision} decision */
  function record(observation, decision) {
    const g = observation.gateway;
    m.rate.set(decision.rate);
    m.lastDecision.set(Date.now() / 1000);
    for (const reason of CONTROLLER_REASONS) m.reason.set({ reason }, reason === decision.reason ? 1 : 0);
    m.decisions.inc({ reason: decision.reason });
    m.gatewayP95.set(g ? g.p95Ms / 1000 : NaN);
    m.gatewayP99.set(g ? g.p99Ms / 1000 : NaN);
    m.gatewayRps.set(g?.rps ?? NaN);
    m.gatewayErrors.set(g ? g.errorRatio : NaN);
    m.remaining.set(typeof observation.remaining === 'number' ? observation.remaining : NaN);
    const s = /** @type {Record<string, unknown>} */ (typeof controller.snapshot === 'function' ? controller.snapshot() ?? {} : {});
    const num = (/** @type {unknown} */ v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);
    m.planned.set(num(s.planned));
    m.capacity.set(num(s.capacity));
    m.capacityTrial.set(num(s.capacityTrial));
    m.missTrim.set(num(s.missTrim));
    m.baseline.set(num(s.baseline));
    m.requestsPerSend.set(num(s.requestsPerSend));
    // The load the plan steers to, at the mean estimate: what the controller expects the
    // gateway to carry once the wake-ups of its sends arrive (uncertainty margin excluded).
    m.predictedLoad.set(num(s.predictedLoadRps ?? num(s.baseline) + num(s.requestsPerSend) * num(s.maxUnitLoad)));
    if (series) {
      series.appendGovernor({ p95Ms: g ? g.p95Ms : null, sloMs, rate: decision.rate, reason: decision.reason }).then(() => {
        seriesFailing = false;
      }, (error) => {
        if (!seriesFailing) logger?.warn({ err: error }, 'writing the governor series for the dashboard failed');
        seriesFailing = true;
      });
    }
  }

  return {
    update(observation) {
      const decision = controller.update(observation);
      try {
        record(observation, decision);
      } catch (error) {
        // Metrics must never stop the governor from deciding.
        logger?.warn({ err: error }, 'recording controller metrics failed');
      }
      return decision;
    },
    // A replayed past observation (a governor taking over) is neither a decision nor a point in the series.
    replay(observation) {
      if (controller.replay) controller.replay(observation);
      else controller.update(observation);
    },
    ...(typeof controller.snapshot === 'function' ? { snapshot: () => /** @type {() => unknown} */ (controller.snapshot)() } : {}),
    ...(controller.setGainPrior ? { setGainPrior: controller.setGainPrior } : {}),
    ...(controller.takeFinished ? { takeFinished: controller.takeFinished } : {})
  };
}

/**
 * Exports whether this governor holds the lease, read at scrape time.
 * @param {import('./registry.js').MetricsRegistry} registry
 * @param {{ leading(): boolean }} governor
 */
export function exportLeadership(registry, governor) {
  controllerMetrics(registry).watchLeadership(() => governor.leading());
}
