// blast: everything as fast as SNS accepts it. The first thing the company tried; a denial
// of service on its own gateway a minute later.
import { createPacer } from './pacer.js';

/** @typedef {import('./strategy.js').Strategy} Strategy */

/** @param {import('../scenario.js').Scenario} scenario @returns {Strategy} */
export function createBlastStrategy(scenario) {
  const pacer = createPacer();
  return {
    name: 'blast',
    sendsAt({ t, remaining, snsMax }) {
      return t < 0 ? 0 : pacer.take(scenario.sns.maxRate, Math.min(remaining, snsMax));
    }
  };
}
