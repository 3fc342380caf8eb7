// Latency feedback: estimates the request rate the gateway can take with its p95 at the
// setpoint (a fixed share of the SLO), from each metrics window's rate and p95.
//
// A queue's latency rises as its utilisation ρ = λ/μ nears 1; for an M/M/1 queue the mean
// sojourn is the service time over 1 - ρ. With the same shape for the p95,
//
//   ℓ(λ) = ℓ₀ / (1 - λ/μ)
//
// one window (y, ℓ) gives μ = y / (1 - ℓ₀/ℓ), and the rate at which ℓ would equal the
// setpoint ℓ* is
//
//   C_obs = y · (1 - ℓ₀/ℓ*) / (1 - ℓ₀/ℓ).
//
// At the setpoint itself C_obs = y whatever ℓ₀ is, so the estimate's fixed point is exact
// even though a real gateway is not an M/M/1 queue; the model only supplies the direction
// and size of each step away from it. Near ℓ₀ (an idle gateway) C_obs is huge and says
// little, which is why increases are rate-limited and only trusted while the gateway
// actually carries a load near the estimate. Because y and ℓ come from the same window, the
// estimate does not suffer the wake-up dead time: it is a measurement of the latency curve,
// not a loop around the delayed load.

/**
 * @param {object} options
 * @param {number} options.capacityRps   prior: rps at the setpoint latency (from a load test)
 * @param {number} options.setpointMs    target p95 (setpointRatio × SLO)
 * @param {number} options.sloMs         the SLO's p95: above it, the estimate drops at once
 * @param {number | null} options.baseLatencyMs  ℓ₀, or null to learn it as the lower envelope of observed p95
 * @param {number} options.riseLimit     largest relative increase per window
 * @param {number} options.dropLimit     largest relative decrease per window
 * @param {number} options.riseGain      share of the way to C_obs moved up per window
 * @param {number} options.dropGain      share of the way to C_obs moved down per window (below the SLO)
 * @param {number} options.activeShare   load above this share of the estimate makes latency informative about it
 */
export function createCapacityEstimator({ capacityRps, setpointMs, sloMs, baseLatencyMs, riseLimit, dropLimit, riseGain, dropGain, activeShare }) {
  let capacity = capacityRps;
  /** @type {number | null} */
  let base = baseLatencyMs;
  let lastObserved = Infinity;

  /**
   * The rate at which this window's gateway would reach the setpoint.
   * @param {number} rps
   * @param {number} p95Ms
   * @param {number} baseMs
   */
  function observedCapacity(rps, p95Ms, baseMs) {
    if (setpointMs <= baseMs) return rps * setpointMs / Math.max(p95Ms, 1e-9);
    if (p95Ms <= baseMs * 1.02) return Infinity;
    return (rps * (1 - baseMs / setpointMs)) / (1 - baseMs / p95Ms);
  }

  /** @param {{ rps: number, p95Ms: number }} window */
  function update({ rps, p95Ms }) {
    if (!(p95Ms > 0) || !(rps >= 0)) return;
    if (baseLatencyMs === null) {
      // The lower envelope of p95: follows drops fast, rises slowly (a lasting change, such as
      // a slower downstream, still gets through in a few hundred windows).
      base = base === null ? p95Ms : p95Ms < base ? base + 0.5 * (p95Ms - base) : base + 0.002 * (p95Ms - base);
    }
    const cObs = observedCapacity(rps, p95Ms, /** @type {number} */ (base));
    lastObserved = cObs;
    const floor = capacity * (1 - dropLimit);
    if (p95Ms >= sloMs) {
      // Over the SLO: believe the model's number at once (bounded per window).
      capacity = Math.max(floor, Math.min(capacity, cObs));
    } else if (cObs < capacity) {
      capacity = Math.max(floor, capacity + dropGain * (cObs - capacity));
    } else {
      // Latency says there is more room. Trust it when the gateway is loaded near the
      // estimate; when it is not, only recover towards the prior.
      const target = rps >= activeShare * capacity ? cObs : Math.min(cObs, capacityRps);
      if (target > capacity) capacity = Math.min(capacity * (1 + riseLimit), capacity + riseGain * (target - capacity));
    }
  }

  return {
    update,
    get capacity() { return capacity; },
    snapshot() { return { capacity, baseLatencyMs: base, observedCapacity: lastObserved }; }
  };
}

/** @typedef {ReturnType<typeof createCapacityEstimator>} CapacityEstimator */
