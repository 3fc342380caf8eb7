// The one seeded generator for everything that must repeat itself from a seed: the
// simulator's worlds, the demo's gateway and phones, the SNS emulator's fault split, the
// example audience. Math.random cannot be seeded.

/**
 * mulberry32: a small, fast 32-bit generator, good enough for simulation (not for secrets).
 * The same seed gives the same sequence.
 * @param {number} seed
 * @returns {() => number} uniform on [0, 1)
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
