// Small helpers the SVG charts share (sim/chart.js for the simulator, demo/chart.js for the demo).

/**
 * A round step giving about 4-8 ticks up to max.
 * @param {number} max
 * @param {number} [minStep] never a smaller step (1 for axes of whole counts)
 */
export function niceStep(max, minStep = 0) {
  const raw = max / 6;
  const p = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return Math.max(m * p, minStep);
  return 10 * p;
}

/**
 * A round number at or above v, on the grid niceStep draws.
 * @param {number} v
 * @param {number} [minStep]
 */
export function niceCeil(v, minStep = 0) {
  const step = niceStep(v, minStep);
  return Math.ceil(v / step) * step;
}
