// batches: a fixed batch, sent as fast as SNS takes it, then a fixed pause; what the company
// did next. Its default (50,000 every 1,400 s) takes about 7.4 hours for a million devices,
// the 7-8 hours of the field notes, and still peaks at twice the baseline after each batch.
import { createPacer } from './pacer.js';

/** @typedef {import('./strategy.js').Strategy} Strategy */

/** @param {import('../scenario.js').Scenario} scenario @returns {Strategy} */
export function createBatchesStrategy(scenario) {
  const { batchSize, pauseSeconds } = scenario.strategies.batches;
  const pacer = createPacer();
  let pending = 0;
  return {
    name: 'batches',
    sendsAt({ t, remaining, snsMax }) {
      if (t < 0) return 0;
      if (t % pauseSeconds === 0) pending += batchSize;
      const n = pacer.take(pending, Math.min(remaining, snsMax, pending));
      pending -= n;
      return n;
    }
  };
}
