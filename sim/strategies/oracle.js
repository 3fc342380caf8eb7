// oracle: perfect knowledge of the world and its future (baseline, capacity changes, the
// true wake-up kernel and requests per send): replays the fastest schedule that keeps the
// expected load within the SLO capacity (sim/oracle-planner.js).
import { planOracle } from '../oracle-planner.js';
import { createPacer } from './pacer.js';

/** @typedef {import('./strategy.js').Strategy} Strategy */

/**
 * @param {import('../scenario.js').Scenario} scenario
 * @param {import('../world.js').World} world
 * @returns {Strategy}
 */
export function createOracleStrategy(scenario, world) {
  const plan = planOracle(scenario, world);
  const pacer = createPacer();
  return {
    name: 'oracle',
    sendsAt({ t, remaining, snsMax }) {
      if (t < 0) return 0;
      const bin = Math.floor(t / plan.binSeconds);
      // Past the plan only rounding leftovers (a few sends) can remain: send them at once.
      const rate = bin < plan.sendsPerBin.length ? plan.sendsPerBin[bin] / plan.binSeconds : remaining;
      return pacer.take(rate, Math.min(remaining, snsMax));
    }
  };
}
