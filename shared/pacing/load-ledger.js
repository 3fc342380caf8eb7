// The send history, kept as the load it will cause: for every bin of time, the push-induced
// requests per second predicted from all sends made so far, per unit of requests-per-send
// ("unit load"). Multiply by the estimated requests per send a to get requests per second.
//
// Adding n sends made in bin b adds n·kernel[j]/binSeconds to bin b + j for every lag j:
// the convolution of the send history with the open-delay kernel, kept incrementally so an
// update costs one pass over the kernel instead of a pass over the whole history. Bins in
// the past stay readable for a while (the estimator compares them with gateway metrics that
// arrive late); bins further back are recycled for the future.

/**
 * @param {{ kernel: Float64Array, binMs: number, pastBins: number }} options
 *   kernel: share of a send's requests per lag bin (binKernel); pastBins: how many bins
 *   before the current one must stay readable
 */
export function createLoadLedger({ kernel, binMs, pastBins }) {
  const size = kernel.length + pastBins + 2;
  const unitLoad = new Float64Array(size);
  const binSeconds = binMs / 1000;
  /** The lowest bin still held; bins below it read as 0 (nothing was sent that long ago that still matters, or it was dropped). */
  let firstBin = 0;
  let started = false;

  /** @param {number} bin */
  const slot = (bin) => ((bin % size) + size) % size;

  /** Recycles bins that fell out of the past window so their slots can hold future bins. @param {number} currentBin */
  function advanceTo(currentBin) {
    const keepFrom = currentBin - pastBins;
    if (!started) {
      firstBin = keepFrom;
      started = true;
      return;
    }
    if (keepFrom <= firstBin) return;
    // Everything from firstBin to keepFrom - 1 leaves; at most `size` slots need clearing.
    const drop = Math.min(keepFrom - firstBin, size);
    for (let i = 0; i < drop; i++) unitLoad[slot(firstBin + i)] = 0;
    firstBin = keepFrom;
  }

  /**
   * Records `count` sends made at a constant pace over [fromMs, toMs).
   * @param {number} fromMs
   * @param {number} toMs
   * @param {number} count
   */
  function addSends(fromMs, toMs, count) {
    if (!(count > 0)) return;
    if (!(toMs > fromMs)) { addToBin(Math.floor(fromMs / binMs), count); return; }
    const first = Math.floor(fromMs / binMs);
    const last = Math.floor((toMs - 1e-9) / binMs);
    for (let b = first; b <= last; b++) {
      const overlap = Math.min(toMs, (b + 1) * binMs) - Math.max(fromMs, b * binMs);
      if (overlap > 0) addToBin(b, (count * overlap) / (toMs - fromMs));
    }
  }

  /** @param {number} bin @param {number} count */
  function addToBin(bin, count) {
    const perSecond = count / binSeconds;
    for (let j = 0; j < kernel.length; j++) {
      const b = bin + j;
      if (b < firstBin) continue;
      if (b >= firstBin + size) break;
      unitLoad[slot(b)] += perSecond * kernel[j];
    }
  }

  /** Unit load predicted for one bin (0 outside what is held). @param {number} bin */
  function at(bin) {
    if (bin < firstBin || bin >= firstBin + size) return 0;
    return unitLoad[slot(bin)];
  }

  /**
   * Mean unit load over [fromMs, toMs), weighted by overlap with each bin.
   * @param {number} fromMs
   * @param {number} toMs
   */
  function meanOver(fromMs, toMs) {
    if (!(toMs > fromMs)) return at(Math.floor(fromMs / binMs));
    let sum = 0;
    for (let b = Math.floor(fromMs / binMs); b * binMs < toMs; b++) {
      const overlap = Math.min(toMs, (b + 1) * binMs) - Math.max(fromMs, b * binMs);
      if (overlap > 0) sum += at(b) * overlap;
    }
    return sum / (toMs - fromMs);
  }

  return { advanceTo, addSends, at, meanOver, binMs, kernel };
}

/** @typedef {ReturnType<typeof createLoadLedger>} LoadLedger */
