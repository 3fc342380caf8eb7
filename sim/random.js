// Seeded randomness for the simulator: the same scenario and seed give the same run.
import { mulberry32 } from '../shared/seeded-random.js';

/**
 * A seeded generator (mulberry32) with the draws the simulator needs.
 * @param {number} seed
 */
export function createRandom(seed) {
  /** Uniform on [0, 1). A zero seed is replaced, as it always was here. */
  const uniform = mulberry32((seed >>> 0) || 0x9e3779b9);
  /** @type {number | null} */
  let spare = null;
  /** Standard normal (Box–Muller, the second value kept for the next call). */
  function normal() {
    if (spare !== null) { const s = spare; spare = null; return s; }
    let u = 0;
    while (u === 0) u = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    const phi = 2 * Math.PI * uniform();
    spare = r * Math.sin(phi);
    return r * Math.cos(phi);
  }
  /**
   * Poisson count with mean `mean`: exact (Knuth) below 30, normal approximation above,
   * where the two differ by less than the gateway model's other approximations.
   * @param {number} mean
   */
  function poisson(mean) {
    if (!(mean > 0)) return 0;
    if (mean < 30) {
      const limit = Math.exp(-mean);
      let k = 0;
      let p = uniform();
      while (p > limit) { k++; p *= uniform(); }
      return k;
    }
    return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal()));
  }
  return { uniform, normal, poisson };
}
