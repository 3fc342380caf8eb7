// The oracle's margin for one world. The oracle keeps its expected load `confidence`
// standard deviations of the load's noise below the rate whose stationary p95 meets the SLO
// (world.sloCapacityAt). The default, 1.3, was calibrated by Monte Carlo on the shipped
// gateway (20 processes, per-process queues), where a window at that load exceeds the SLO
// about 1% of the time. A gateway with one queue in front of many processes has a much
// sharper knee, and a small one much noisier seconds, so the same margin lets 5-20% of the
// windows over: the oracle would no longer be a fair yardstick. This finds, per world, the
// confidence at which a window at the oracle's load exceeds the SLO `target` of the time.
//
// A window is `windowSeconds` seconds of Poisson arrivals around the baseline × its
// log-normal AR(1) noise plus the push load, through the gateway model; it is over the SLO
// when more than 5% of its requests are slower than the SLO (the same test as the window
// p95, without the quantile's bisection). The same random draws serve every confidence
// tried, so the share falls monotonically as the confidence rises.
import { createRandom } from './random.js';
import { createWorld } from './world.js';

/**
 * @param {import('./scenario.js').Scenario} scenario  resolved
 * @param {{ windows?: number, target?: number, factor?: number }} [options]  factor: calibrate
 *   for the gateway with this share of its CPU (a capacity drop); default the scenario's at t = 0
 * @returns {number} the confidence, to 0.05
 */
export function calibrateOracleConfidence(scenario, { windows = 2000, target = 0.01, factor } = {}) {
  const gateway = factor === undefined ? scenario.gateway : { ...scenario.gateway, capacityChanges: [{ atSeconds: -1, durationSeconds: 2, factor }] };
  // The kernel is not needed: a one-second one saves building it.
  const world = createWorld({ ...scenario, gateway }, { massPerSecond: new Float64Array([1]) });
  const capacityFactor = world.capacityFactorAt(0);
  const { gatewayModel } = world;
  const seconds = scenario.metrics.windowSeconds;
  const { sigma, correlationSeconds } = scenario.baseline.noise;
  const phi = Math.exp(-1 / correlationSeconds);
  const innovation = sigma * Math.sqrt(1 - phi * phi);
  const baseline = world.baselineAt(0);
  // Per window and second: a standard normal for the noise and a uniform-free Poisson
  // stand-in (the normal approximation's z), drawn once.
  const random = createRandom(scenario.seed ^ 0x5eed);
  const noiseZ = new Float64Array(windows * seconds);
  const countZ = new Float64Array(windows * seconds);
  for (let i = 0; i < noiseZ.length; i++) { noiseZ[i] = random.normal(); countZ[i] = random.normal(); }
  const arrivals = new Float64Array(seconds);
  const delayMs = new Float64Array(seconds);
  const rho = new Float64Array(seconds);
  const serviceMs = new Float64Array(seconds);

  /** Share of windows over the SLO at a confidence. @param {number} confidence */
  function overShare(confidence) {
    const push = Math.max(0, world.sloCapacityAt(0, confidence) - baseline);
    let over = 0;
    for (let w = 0; w < windows; w++) {
      let logNoise = sigma * noiseZ[w * seconds];
      let backlog = 0;
      for (let s = 0; s < seconds; s++) {
        if (s > 0) logNoise = phi * logNoise + innovation * noiseZ[w * seconds + s];
        const mean = baseline * Math.exp(logNoise - (sigma * sigma) / 2) + push;
        const a = Math.max(0, Math.round(mean + Math.sqrt(mean) * countZ[w * seconds + s]));
        const second = gatewayModel.step({ arrivals: a, factor: capacityFactor, backlog });
        backlog = second.backlog;
        arrivals[s] = a;
        delayMs[s] = second.delayMs;
        rho[s] = second.rho;
        serviceMs[s] = second.serviceMs;
      }
      if (gatewayModel.windowExceedance({ arrivals, delayMs, rho, serviceMs }, 0, seconds, scenario.slo.p95Ms) > 0.05) over++;
    }
    return over / windows;
  }

  let lo = 0;
  let hi = 8;
  if (overShare(hi) > target) return hi;
  while (hi - lo > 0.05) {
    const mid = (lo + hi) / 2;
    if (overShare(mid) > target) lo = mid; else hi = mid;
  }
  return Math.round(hi * 20) / 20;
}
