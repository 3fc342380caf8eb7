// Seeded draws for the demo's gateway and devices. The same seed gives the same service
// times and the same wake-up behaviour; the wall clock still differs from run to run.
import { mulberry32 } from '../shared/seeded-random.js';

/** @param {number} seed */
export function createRandom(seed) {
  const uniform = mulberry32(seed);
  // (0, 1]: a log of it is always finite.
  const open = () => 1 - uniform();
  return {
    uniform,
    /** Exponential with this mean. @param {number} mean */
    exponential: (mean) => -Math.log(open()) * mean,
    /** Standard normal (Box–Muller). */
    normal: () => Math.sqrt(-2 * Math.log(open())) * Math.cos(2 * Math.PI * uniform()),
    /** Poisson with a small mean (Knuth's product of uniforms; the demo's means are a few per tick). @param {number} mean */
    poisson(mean) {
      const limit = Math.exp(-mean);
      let n = 0;
      for (let p = uniform(); p > limit; p *= uniform()) n++;
      return n;
    }
  };
}

/** @typedef {ReturnType<typeof createRandom>} Random */
