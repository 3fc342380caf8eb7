// How the gateway's baseline wanders from one metrics window to the next, measured where the
// baseline is alone: in windows where no wake-up of this governor's sends can be due (before a
// campaign, between campaigns). The filters then model the wandering as a state of its own
// (parameter-estimator.js), an AR(1) process with this variance and this window-to-window
// correlation, instead of reading a run of windows below the baseline as requests per send.
//
// Why only there: once wake-ups are due, a window's distance from the baseline is as much the
// model's error about them as the baseline's wandering, and counted as wandering it would let
// the wandering absorb the wake-ups (in the simulator: a world whose baseline scatters by 8
// requests/s read 290 after its first overload, and the campaign took 1.3 × as long).

/** The share of the old average each window replaces (about 20 windows' memory), as the bank's noise. */
const SHARE = 0.05;
/** The most window-to-window correlation the filters are given: at 10-s windows, a 3-minute correlation time. */
const MAX_CORRELATION = 0.95;

export function createWanderMeter() {
  let mean = 0;
  let square = 0;
  let expected = 0;
  let lagged = 0;
  let previous = NaN;
  let windows = 0;

  /**
   * One window where the baseline is alone.
   * @param {{ residual: number, measurementVariance: number }} w  residual: the load less the
   *   baseline's slow level; measurementVariance: its counting noise (Poisson and rpsNoise)
   */
  function observe({ residual, measurementVariance }) {
    // A plain mean over the first windows, an exponential one after.
    const share = Math.max(SHARE, 1 / ++windows);
    mean += share * (residual - mean);
    square += share * (residual * residual - square);
    expected += share * (measurementVariance - expected);
    if (!Number.isNaN(previous)) lagged += share * ((residual - mean) * (previous - mean) - lagged);
    previous = residual;
  }

  /** A window where wake-ups may be due: the next one has no neighbour to be correlated with. */
  function skip() {
    previous = NaN;
  }

  /** The wandering's variance (rps²): the residuals' variance beyond the counting noise, never below 0. */
  function variance() {
    return Math.max(0, square - mean * mean - expected);
  }

  /** Its correlation from one window to the next, 0 to MAX_CORRELATION. */
  function correlation() {
    const v = variance();
    return v > 0 ? Math.max(0, Math.min(MAX_CORRELATION, lagged / v)) : 0;
  }

  return { observe, skip, variance, correlation };
}

/** @typedef {ReturnType<typeof createWanderMeter>} WanderMeter */
