// A latency-only source's ramp: raising the push load in steps while the gateway's p95 stays
// at its floor, as TCP's slow start raises a window while no loss shows.
//
// A source without the gateway's request rate reads the load off the latency curve. Under the
// curve's knee the p95 is the floor whatever the load (a shared queue over many processes
// stays flat up to most of its capacity), so a window there says "under the knee" and no
// more: the baseline estimate keeps an uncertainty of about the capacity itself, the requests
// per send learn from nothing, and the plan, which keeps room for both at its caution, sends
// at the minimum rate (simulator: a 27-process gateway at 1 send/s for 570 s, then an hour at
// a tenth of what the informed oracle sent, and never a window over the SLO).
//
// So while the p95 stays where it was before the campaign, the plan may send at `growth`
// times the rate of the last step, one step per time it takes a send's wake-ups to show (the
// nominal kernel's 80th percentile, plus one window and the metrics lag). The first step is
// the push load the cold start deems small at the prior's upper bound (coldStartShare of the
// capacity). The ramp ends for the campaign at the first window over the SLO, or when the
// mean log p95 of a step has risen over the floor's by more than `z` standard errors: the
// latency has started to show the load, the readings are information, and the plan takes
// over. It starts again after the next idle reset.

/**
 * @param {object} options
 * @param {number} options.growth     each step's rate over the last step's mean rate (0: off)
 * @param {number} options.firstRate  the first step's rate, sends/s
 * @param {number} options.stepMs     how long one step lasts
 * @param {number} options.sloMs      a window at or over this ends the ramp
 * @param {number} [options.z]        standard errors of rise in the mean log p95 that end it
 */
export function createLatencyRamp({ growth, firstRate, stepMs, sloMs, z = 2 }) {
  /** The rate the plan may send at, sends/s (0: no ramp). */
  let rate = 0;
  /** The rate of the step before the last, whose wake-ups the last step saw at the floor. */
  let verified = 0;
  let ended = false;
  /** The floor: the mean log p95 of the last step before the campaign's first send. @type {{ sum: number, n: number } | null} */
  let floor = null;
  /** This step: when it started, its windows' log p95 and its sends. */
  let stepAt = /** @type {number | null} */ (null);
  let sum = 0;
  let n = 0;
  let sent = 0;

  return {
    /**
     * One update: the sends since the last, and the window if a fresh latency-only one came.
     * @param {{ now: number, sent: number, p95Ms: number | null, noise: number, campaign: boolean }} input
     *   noise: one window's relative p95 noise; campaign: sends have begun since the last idle reset
     */
    update({ now, sent: count, p95Ms, noise, campaign }) {
      if (!(growth > 0)) return;
      if (ended) {
        // The hold lasts until the first window over the SLO.
        if (p95Ms !== null && p95Ms >= sloMs) rate = 0;
        return;
      }
      stepAt ??= now;
      sent += count;
      if (p95Ms !== null) {
        if (p95Ms >= sloMs) return end(0);
        sum += Math.log(p95Ms);
        n++;
        // Within a step, a clear rise ends the ramp at once: the step's sends are still going
        // out, and on a flat curve the SLO is only a little further.
        if (campaign && floor !== null && n >= 3 && risen(noise, z + 1)) return end(verified);
      }
      if (now - stepAt < stepMs || n === 0) return;
      if (!campaign || floor === null) {
        // Before the campaign the step measures the floor.
        floor = { sum, n };
      } else if (risen(noise, z)) {
        return end(verified);
      }
      // This step's windows showed the wake-ups of the last step's rate at the floor.
      verified = rate;
      rate = Math.max(firstRate, (growth * sent * 1000) / (now - stepAt));
      stepAt = now;
      sum = 0;
      n = 0;
      sent = 0;
    },
    /** After an idle reset: the next campaign ramps again, from a floor measured anew. */
    reset() {
      rate = 0;
      verified = 0;
      ended = false;
      floor = null;
      stepAt = null;
      sum = 0;
      n = 0;
      sent = 0;
    },
    /** The rate the plan may send at (0: none). */
    get rate() { return rate; },
    snapshot() { return { rampRate: rate, rampEnded: ended }; }
  };

  /** The step's mean log p95 is over the floor's by more than k standard errors. @param {number} noise @param {number} k */
  function risen(noise, k) {
    const f = /** @type {{ sum: number, n: number }} */ (floor);
    return sum / n - f.sum / f.n > k * noise * Math.sqrt(1 / n + 1 / f.n);
  }

  /** @param {number} hold  the rate the plan may still send at (the last verified; 0 after a window over the SLO) */
  function end(hold) {
    rate = hold;
    ended = true;
  }
}
