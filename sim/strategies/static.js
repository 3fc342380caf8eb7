// static: one fixed rate an operator typed in (what push platforms offer today, and what
// pushpace did before the governor: `pushctl rate N`).
import { createPacer } from './pacer.js';

/** @typedef {import('./strategy.js').Strategy} Strategy */

/** @param {import('../scenario.js').Scenario} scenario @returns {Strategy} */
export function createStaticStrategy(scenario) {
  const pacer = createPacer();
  const { rate } = scenario.strategies.static;
  return {
    name: 'static',
    sendsAt({ t, remaining, snsMax }) {
      return t < 0 ? 0 : pacer.take(rate, Math.min(remaining, snsMax));
    }
  };
}
