// Feedback on the SLO itself: a trim on the capacity the plan fills, steered by how often
// the gateway's p95 actually goes over the SLO.
//
// The capacity estimate aims the p95 at the setpoint, a fixed share of the SLO, and the
// share is the operator's margin for one window's p95 noise. How much margin a gateway needs
// depends on how much its p95 jumps from window to window at the same load, and that is not
// known in advance: on the simulator's gateways the setpoint's margin is ample, on the demo's
// real one-process gateway the p95 at the same load spans a factor of 5-7 between 2-s windows
// (its CPU speed changes in phases, a window holds 40-80 requests) and the capacity estimate
// follows the fast spells, so 12-20% of its 5-s windows went over the SLO with the setpoint
// at 60% of it (docs/pacing.md, "Misses of the SLO").
//
// So the share of windows over the SLO is tracked against a target q with a stochastic
// approximation of a quantile (Robbins-Monro): each window over multiplies the trim by
// (1 − step), each window within by (1 + step·q/(1 − q)). Where the misses come more often
// than q the trim falls until they do not; on a gateway that never misses, the trim stays at
// 1 and changes nothing. A run of windows over is one event (a capacity drop, a flash sale,
// the load of sends already made), which the capacity and baseline estimates answer: only
// the first window of a run counts, so one overload does not cost the campaign's pace for
// long after it is over.

/**
 * @param {object} options
 * @param {number} options.missShare  target share of metrics windows that start a run over the SLO (0: off, trim always 1)
 * @param {number} options.missStep   relative cut of the trim per run over the SLO
 * @param {number} options.missFloor  the trim never falls below this
 */
export function createMissFeedback({ missShare, missStep, missFloor }) {
  let trim = 1;
  let lastOver = false;
  let misses = 0;
  return {
    /**
     * One metrics window's p95 against the SLO.
     * @param {boolean} over
     */
    observe(over) {
      if (missShare > 0) {
        if (over && !lastOver) {
          trim = Math.max(missFloor, trim * (1 - missStep));
          misses++;
        } else if (!over) {
          trim = Math.min(1, trim * (1 + (missStep * missShare) / (1 - missShare)));
        }
      }
      lastOver = over;
    },
    /** The share of the capacity estimate the plan may fill. */
    get trim() { return trim; },
    snapshot() { return { missTrim: trim, misses }; }
  };
}
