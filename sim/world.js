// The scenario's true world, as functions of time (seconds from the campaign's start):
// baseline traffic, gateway capacity, the wake-up kernel, and the SLO capacity the oracle
// plans against. Strategies other than the oracle never see these; the adaptive one only
// sees gateway metrics, like the real governor.
import { createGatewayModel } from './gateway-model.js';
import { requestMassPerSecond } from './delay-kernel.js';

/** @typedef {import('./scenario.js').Scenario} Scenario */

/**
 * @param {Scenario} scenario
 * @param {{ massPerSecond?: Float64Array }} [known]  massPerSecond: the scenario's kernel, already
 *   built (the informed oracle rebuilds the world as it learns of events; the kernel stays)
 */
export function createWorld(scenario, { massPerSecond = requestMassPerSecond(scenario.wakeUp) } = {}) {
  const { baseline, gateway, wakeUp, slo } = scenario;
  const gatewayModel = createGatewayModel(gateway);
  const requestsPerSend = wakeUp.openProbability * wakeUp.requestsPerOpen;

  /** Seconds after a send by which `share` of its requests have arrived. @param {number} share */
  function requestDelayQuantile(share) {
    let sum = 0;
    for (let i = 0; i < massPerSecond.length; i++) {
      sum += massPerSecond[i];
      if (sum >= share) return i + 1;
    }
    return massPerSecond.length;
  }

  /** Expected non-push request rate at second t (before noise). @param {number} t */
  function baselineAt(t) {
    let rps = baseline.rps;
    if (baseline.diurnal) {
      const hour = baseline.diurnal.startHour + t / 3600;
      rps *= 1 + baseline.diurnal.amplitude * Math.cos((2 * Math.PI * (hour - baseline.diurnal.peakHour)) / 24);
    }
    for (const spike of baseline.spikes) if (t >= spike.atSeconds && t < spike.atSeconds + spike.durationSeconds) rps *= spike.factor;
    return rps;
  }

  /** Share of the gateway's CPU left to it at second t (noisy neighbours). @param {number} t */
  function capacityFactorAt(t) {
    let factor = 1;
    for (const c of gateway.capacityChanges) if (t >= c.atSeconds && t < c.atSeconds + c.durationSeconds) factor *= c.factor;
    return factor;
  }

  /**
   * The total request rate the oracle allows at second t: the rate whose stationary p95 is at
   * the SLO, less `confidence` standard deviations of the load's noise (one second's Poisson
   * count plus the baseline's own noise). A window's p95 is a mixture of its seconds and is
   * driven by the busiest of them; with the default confidence (1.3, calibrated by Monte
   * Carlo at full and at 60% capacity) a window at this expected load exceeds the SLO about
   * 1% of the time, the share the adaptive strategy is held to.
   * @param {number} t
   * @param {number} confidence
   */
  function sloCapacityAt(t, confidence) {
    const limit = gatewayModel.rateAtP95(capacityFactorAt(t), slo.p95Ms);
    const b = baselineAt(t);
    const sd = (/** @type {number} */ rate) => Math.sqrt(rate + (baseline.noise.sigma * b) ** 2);
    let rate = limit;
    for (let i = 0; i < 30; i++) rate = Math.max(0, limit - confidence * sd(rate));
    return rate;
  }

  return { gatewayModel, massPerSecond, requestsPerSend, requestDelayQuantile, baselineAt, capacityFactorAt, sloCapacityAt };
}

/** @typedef {ReturnType<typeof createWorld>} World */
