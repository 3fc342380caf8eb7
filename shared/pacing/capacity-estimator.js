// Latency feedback: estimates the request rate the gateway can take with its p95 at the
// setpoint (a fixed share of the SLO), from each metrics window's rate and p95.
//
// A queue's latency rises as its utilisation ρ = λ/μ nears 1; for an M/M/1 queue the mean
// sojourn is the service time over 1 - ρ. With the same shape for the p95,
//
//   ℓ(λ) = L / (1 - λ/μ)
//
// Two points fix L and μ: the base (y₀, ℓ₀), the lowest p95 seen and the load it was seen
// at, and the window (y, ℓ). Then
//
//   μ = (ℓ·y - ℓ₀·y₀) / (ℓ - ℓ₀),   L = ℓ₀·(1 - y₀/μ),   C_obs = μ·(1 - L/ℓ*)
//
// is the rate at which ℓ would equal the setpoint ℓ*. At the setpoint itself C_obs = y
// whatever the base is, so the estimate's fixed point is exact even though a real gateway
// is not an M/M/1 queue; the model only supplies the direction and size of each step away
// from it. The base is measured under the baseline traffic, not at zero load, and reading
// it as the idle latency (y₀ = 0, the one-point form C_obs = y·(1 - ℓ₀/ℓ*)/(1 - ℓ₀/ℓ))
// makes the curve too flat: in the simulator it put the slope near the setpoint at 40% of
// the true one, so one window's p95 noise moved C_obs 2.5 times as far as it should, and
// the estimate ran ahead of the truth while the load ramped up. Through the measured base
// point the slope is within about 30% of the truth (the rest is latency that does not
// queue, such as the services behind the gateway).
//
// Near ℓ₀ C_obs is huge and says little, which is why increases are rate-limited and only
// trusted while the gateway actually carries a load near the estimate. Because y and ℓ come
// from the same window, the estimate does not suffer the wake-up dead time: it is a
// measurement of the latency curve, not a loop around the delayed load.

/**
 * @param {object} options
 * @param {number} options.capacityRps   prior: rps at the setpoint latency (from a load test)
 * @param {number} options.setpointMs    target p95 (setpointRatio × SLO)
 * @param {number} options.sloMs         the SLO's p95: above it the estimate drops faster, above twice it at once
 * @param {number | null} options.baseLatencyMs  ℓ₀ of the idle gateway (y₀ = 0), or null to learn (y₀, ℓ₀) as the lower envelope of observed p95
 * @param {number} options.riseLimit     largest relative increase per window
 * @param {number} options.dropLimit     largest relative decrease per window
 * @param {number} options.riseGain      share of the way to C_obs moved up per window
 * @param {number} options.dropGain      share of the way to C_obs moved down per window (below the SLO; 0.5 above it)
 * @param {number} options.activeShare   load above this share of the estimate makes latency informative about it
 * @param {number} options.saturationRatio  the gateway's full-CPU throughput over its capacity at the setpoint (≥ 1): shapes the latency curve a latency-only source is read through
 * @param {number} options.latencyNoise  the least relative noise of one window's p95; more is measured (see measureNoise)
 * @param {number} [options.sloCapacityRatio]  the capacity at the SLO over the capacity at the setpoint, from the load test (1: not known)
 * @param {number} [options.edgeRelax]  relative rise per window of the edge a crossing of the SLO sets, just after it (see learnEdge)
 * @param {number} [options.edgeProbeWindows]  that rise grows as (1 + n / edgeProbeWindows)² with the windows n since the crossing
 * @param {number} [options.edgeRestoreWindows]  after the crossing's run, an estimate the fit took under RESTORE_DEPTH of the run's floor returns to that floor over this many windows under the setpoint (0: off; see restoreEdge)
 * @param {number} [options.trialShare]  the share of the prior the plan may fill before the gateway has shown it (1: no trial; see followTrial)
 * @param {number} [options.trialGrowth] during the trial, a window under the setpoint lets the plan fill this multiple of its load
 * @param {number} [options.trialHoldShare] during a latency-only source's trial, a window whose p95 is this share of the way from the base latency to the setpoint holds the trial (Infinity: never; see followTrial)
 * @param {number} [options.trialHoldWindows] while held, the trial grows at most once in this many windows
 * @param {number} [options.baseLoadRps]  a latency-only reading at the base latency is at least this load (the users' own; see loadAtLatency)
 * @param {number} [options.envelopeWindows]  on a jumpy gateway the plan fills the lowest estimate of this many windows (0: off; see lowest)
 * @param {number} [options.windowMs]  the metrics window: a window's requests are its rate × this (undefined: every window counts as measured over enough requests; see learnBase)
 */
export function createCapacityEstimator({ capacityRps, setpointMs, sloMs, baseLatencyMs, riseLimit, dropLimit, riseGain, dropGain, activeShare, saturationRatio, latencyNoise, sloCapacityRatio = 1, edgeRelax = 0, edgeProbeWindows = Infinity, edgeRestoreWindows = 0, trialShare = 1, trialGrowth = 1.5, trialHoldShare = Infinity, trialHoldWindows = Infinity, envelopeWindows = 0, baseLoadRps = 0, windowMs }) {
  let capacity = capacityRps;
  /** How much of the estimate the plan may fill while the prior is untried (Infinity: tried; see followTrial). */
  let trial = trialShare < 1 ? trialShare * capacityRps : Infinity;
  /** Windows since the trial last grew, or started (see followTrial). */
  let sinceGrowth = 0;
  /** Where the gateway's edge is, as the last crossing of the SLO the estimate allowed put it (see learnEdge): the estimate stays under it. */
  let edge = Infinity;
  /** Windows since the edge was set: the longer, the faster it relaxes. */
  let sinceEdge = 0;
  /** The estimate before the crossing that set the edge, and how many windows the run over the SLO has lasted. */
  let beforeEdge = Infinity;
  let overRun = 0;
  let edgeRun = false;
  /** After the crossing's run: the estimate it ended at, where it returns to, and the windows under the setpoint since (see restoreEdge). @type {{ from: number, to: number, windows: number } | null} */
  let restore = null;
  /** The most load carried with the p95 under the setpoint, forgotten at CARRIED_FORGET per window. */
  let carried = 0;
  /** The estimate's recent highest, forgotten at RECENT_FORGET per window. */
  let recentHigh = capacityRps;
  /** @type {number | null} */
  let base = baseLatencyMs;
  /** The load the base latency was seen at (0: the configured idle latency). */
  let baseRps = 0;
  /** The base has been measured over enough requests, and windows, for the fit to go through it (see learnBase). */
  let baseTrusted = baseLatencyMs !== null;
  /** The healthy windows the base is the median of, until it is trusted. @type {BaseWindow[]} */
  const baseWindows = [];
  let lastObserved = Infinity;
  /** A capacity loss was seen: the next healthy window measures the base point anew. */
  let rebase = false;
  /** The estimate and base point before the last capacity loss, until the gateway shows that curve again. @type {{ capacity: number, baseMs: number, baseRps: number } | null} */
  let lost = null;
  /** The most load the gateway carried with its p95 under the setpoint, since its last window over the SLO. */
  let demonstrated = 0;
  /** ln p95 of the last window, and the mean square of its change from window to window (prior: latencyNoise). */
  let lastLogP95 = NaN;
  let logChangeSq = 2 * latencyNoise ** 2;
  /** The estimate after each of the last envelopeWindows windows (see lowest). @type {number[]} */
  const recent = [];

  /**
   * The rate at which this window's gateway would reach the setpoint.
   * @param {number} rps
   * @param {number} p95Ms
   * @param {number} baseMs
   * @param {number} [fromRps]  the load the base latency was seen at
   */
  function observedCapacity(rps, p95Ms, baseMs, fromRps = baseRps) {
    if (p95Ms <= baseMs * 1.02) return Infinity;
    // Through both points; when the base point no longer lies on the curve (capacity has
    // changed since), the fit gives no queue beyond the loads seen, and the one-point form
    // takes over.
    let mu = (p95Ms * rps - baseMs * fromRps) / (p95Ms - baseMs);
    let idleMs = baseMs * (1 - fromRps / mu);
    if (!(mu > 1.001 * Math.max(rps, fromRps))) {
      mu = rps / (1 - baseMs / p95Ms);
      idleMs = baseMs;
    }
    if (setpointMs <= idleMs) return rps * setpointMs / p95Ms;
    return mu * (1 - idleMs / setpointMs);
  }

  /**
   * One metrics window. `rps` null: the source sees latency only (an active probe); the
   * window then moves the base latency but says nothing about the capacity, which needs the
   * load the latency was seen at.
   * `holdable` false: the trial is not held this window (the controller's wake-up model
   * already knows the gain; see followTrial).
   * @param {{ rps: number | null, p95Ms: number, holdable?: boolean }} window
   */
  function update(window) {
    follow(window);
    if (envelopeWindows > 0 && window.p95Ms > 0) {
      recent.push(capacity);
      if (recent.length > envelopeWindows) recent.shift();
    }
  }

  /**
   * The estimate's step for one window.
   * @param {{ rps: number | null, p95Ms: number, holdable?: boolean }} window
   */
  function follow({ rps, p95Ms, holdable = true }) {
    if (!(p95Ms > 0)) return;
    measureNoise(p95Ms);
    if (rps === null) {
      learnBase(p95Ms, 0, BASE_REQUESTS);
      followTrial(loadAtLatency(p95Ms, 2 * sloMs).rps, p95Ms, holdable);
      return;
    }
    if (!(rps >= 0)) return;
    learnBase(p95Ms, rps, windowMs === undefined ? BASE_REQUESTS : rps * windowMs / 1000);
    if (followTrial(rps, p95Ms, false)) capacity = Math.min(capacity, rps);
    // Until the base is measured over enough requests there is no curve to fit: a window
    // under the setpoint says nothing of the capacity, one over it reads as its load scaled
    // to the setpoint (the one-point form with no fixed latency).
    const cObs = baseTrusted ? observedCapacity(rps, p95Ms, /** @type {number} */ (base))
      : p95Ms >= setpointMs ? rps * setpointMs / p95Ms : Infinity;
    lastObserved = cObs;
    const floor = capacity * (1 - dropLimit);
    // A window tests the estimate when the gateway carries a load near it. On a gateway whose
    // p95 is steady from window to window, a lightly loaded window under the setpoint is a
    // point on the curve far below the estimate, and the fit extrapolates from it: where most
    // of the p95 is fixed latency (downstream services), it reads a rise of a few ms as a
    // curve that turns up just past the load it was seen at. Followed down, the estimate
    // ratcheted under loads the gateway had carried within the setpoint, the plan then allowed
    // less, and that load lowered it again (simulator: 445 → 270 requests/s where the capacity
    // at the SLO was 738; a 2.6-million-device campaign that never finished). So such a window
    // lowers it no further than the most load the gateway has carried under the setpoint since
    // its last window over the SLO: an untested prior can still come down (not at all, it
    // burst into 81 windows over in a flat-curve world). Where the p95 jumps between windows
    // (measured noise above latencyNoise: a one-process gateway's slow spells), such a window
    // can show a slow spell, which is evidence at any load (with the floor there too, a jumpy
    // test gateway put 2.0% of its windows over the SLO, not 1.4%). Over the setpoint any window
    // is evidence: a noisy neighbour shows at whatever load.
    const loaded = rps >= activeShare * capacity;
    learnEdge(rps, p95Ms);
    if (p95Ms >= sloMs) demonstrated = 0;
    else if (p95Ms < setpointMs) demonstrated = Math.max(demonstrated, rps);
    if (cObs < capacity) {
      const extrapolated = !loaded && p95Ms < setpointMs && measuredNoise() <= latencyNoise;
      if (extrapolated && capacity <= demonstrated) return;
      // Between the setpoint and the SLO the evidence is noisy (one window's p95), so move a
      // share of the way; over the SLO, faster; at twice the SLO, all the way at once.
      const gain = p95Ms >= 2 * sloMs ? 1 : p95Ms >= sloMs ? Math.max(dropGain, 0.5) : dropGain;
      const before = capacity;
      capacity = Math.max(floor, capacity + gain * (cObs - capacity), extrapolated ? demonstrated : 0);
      // A window over the SLO at a load well under the estimate: the gateway lost capacity
      // (a noisy neighbour). The base point was measured on the old curve, and kept, it makes
      // the two-point fit read the recovery as no capacity at all (an independent model's
      // two drops: 6-9 sends/s for 12 minutes after the first). Forget it; the next healthy
      // windows measure it again.
      if (p95Ms >= sloMs && baseLatencyMs === null && rps < LOSS_SHARE * before) {
        rebase = true;
        if (base !== null && (lost === null || before > lost.capacity)) lost = { capacity: before, baseMs: base, baseRps };
      }
    } else if (lost !== null && loaded && observedCapacity(rps, p95Ms, lost.baseMs, lost.baseRps) >= lost.capacity) {
      // The loss is over: loaded near the estimate, the gateway is as fast as on the curve it
      // had before the loss, so it has that capacity again. Rising by riseLimit per window,
      // the estimate took 450 s to get back after the noisy neighbour left, at half the load
      // the gateway could take.
      capacity = Math.max(capacity, lost.capacity);
      lost = null;
    } else {
      // Latency says there is more room. Trust it when the gateway is loaded near the
      // estimate; when it is not, only recover towards the prior.
      const target = loaded ? cObs : Math.min(cObs, capacityRps);
      if (target > capacity) capacity = Math.min(capacity * (1 + riseLimit), capacity + riseGain * (target - capacity));
    }
    // The first windows of a crossing at the edge drop the estimate to just under it, not
    // to the two-point fit's reading: on a cliff the fit, a single queue's curve, puts the
    // capacity far under the load the gateway had just carried within the setpoint.
    if (edgeRun && overRun <= EDGE_RUN_WINDOWS) capacity = Math.max(capacity, Math.min(beforeEdge, EDGE_FLOOR * edge));
    restoreEdge(p95Ms);
    capacity = Math.min(capacity, Math.max(edge, capacity * (1 - dropLimit)));
  }

  /**
   * The trial of an untried prior, as TCP's slow start tries a path. The operator's capacity
   * comes from a load test, on a day the gateway had the headroom it had; on a day it has less
   * (a slow phase, a noisy neighbour), the first plan fills the whole prior at once, and the
   * burst's wake-ups arrive one open delay later, before any window could warn (the real
   * gateway at 28-38 ms of CPU per request: 68-87 sends/s for 3-4 ticks from both sources, on
   * a prior of 35 requests/s against about 20). So until the gateway has shown the prior, the
   * plan fills at most trialShare of it, and each window under the setpoint lets it fill
   * trialGrowth times the load that window carried. The trial ends when that reaches the
   * estimate, or at the first window at or over the setpoint at a load of at least the trial's
   * start: the gateway has then shown where its curve is, the capacity at the setpoint is at
   * most that load, and the estimate takes it at once (returns true; a latency-only source's
   * load is read off the curve, which at the setpoint reads the estimate, so for it the trial
   * only ends). A crossing at a lower load is a slow spell, or a capacity far under the prior,
   * which the estimate follows as it always does; the trial goes on, without growing.
   *
   * A latency-only source's load is read off a curve whose capacity is the prior on trial,
   * while the wake-up model treats the same reading near the base latency as nearly
   * uninformative. On a gateway whose p95 is flat until a cliff, the reading rises fastest
   * just before the cliff, and the trial grew fastest there: in a tuning world whose users
   * sent 7 × the prior's requests per send, the p95 went 110 → 113 → 117 ms under a 120-ms
   * setpoint and the trial grew from 1,217 to the whole 1,953 within a minute, the plan sent
   * 1,415/s, and the wake-ups flooded the gateway (docs/pacing.md, "The trial's hold").
   * As TCP's HyStart leaves slow start when the delay rises, a window whose p95 is
   * trialHoldShare of the way from the base to the setpoint lets the trial grow at most once
   * in trialHoldWindows (one open delay: the wake-ups of what the last step let through have
   * then shown), as congestion avoidance grows once a round trip. Held for good instead,
   * campaigns whose p95 sat a little off the base at the trial's fill never ended it (5-6
   * more unfinished a tuning run; docs/pacing.md "The trial's hold").
   * @param {number} load  the window's total load (read off the curve for a latency-only source)
   * @param {number} p95Ms
   * @param {boolean} latencyOnly  the load was read off the curve
   * @returns {boolean} the trial ended at a crossing of the setpoint
   */
  function followTrial(load, p95Ms, latencyOnly) {
    if (trial === Infinity) return false;
    if (p95Ms >= setpointMs) {
      if (load < trialShare * capacityRps) return false;
      trial = Infinity;
      return true;
    }
    sinceGrowth += 1;
    if (latencyOnly && sinceGrowth < trialHoldWindows && base !== null && p95Ms > base + trialHoldShare * (setpointMs - base)) return false;
    if (trialGrowth * load > trial) sinceGrowth = 0;
    trial = Math.max(trial, trialGrowth * load);
    if (trial >= capacity) trial = Infinity;
    return false;
  }

  /**
   * The gateway's edge. Where the p95 is flat until a cliff (many processes behind one
   * queue), latency under the setpoint says nothing about where the cliff is: every loaded
   * window under it reads as room, and the estimate rises by riseLimit per window until the
   * load crosses the SLO; the two-point fit then reads the crossing through a single queue's
   * curve, far too low, and the campaign waits for minutes before rising to cross again
   * (mixed/4050326413, tuning seed 11: 1,647 → 911 requests/s at each crossing, where the
   * gateway had carried 1,470 under the setpoint; 73 of 1,078 windows over the SLO).
   *
   * The first window over the SLO at load y says the capacity at the SLO is under y, so the
   * capacity at the setpoint is under y / sloCapacityRatio, and over the most load the
   * gateway carried under the setpoint lately: the edge is the larger. The estimate stays
   * under it; a window under the setpoint at a load above it lifts it there; and it relaxes,
   * slowly at first and faster the longer no crossing comes (edgeRelax × (1 + n /
   * edgeProbeWindows)² per window, n windows after it was set), so that a gateway that has
   * grown since is found again, as a congestion window probes past its last loss.
   *
   * Only a crossing the estimate allowed sets it: one at a load near the estimate (a crossing
   * well under it is a capacity loss, which `rebase` answers), near the most load carried
   * lately, and with the estimate near its recent highest (a latency that warned first, and
   * pulled the estimate down, is a gateway that changed).
   * @param {number} rps @param {number} p95Ms
   */
  function learnEdge(rps, p95Ms) {
    const over = p95Ms >= sloMs;
    overRun = over ? overRun + 1 : 0;
    if (over) restore = null;
    else if (edgeRun) {
      edgeRun = false;
      const to = Math.min(beforeEdge, EDGE_FLOOR * edge);
      if (edgeRestoreWindows > 0 && capacity < RESTORE_DEPTH * to) restore = { from: capacity, to, windows: 0 };
    }
    if (over && overRun === 1 && rps >= LOSS_SHARE * capacity && rps >= EDGE_SHARE * carried && capacity >= EDGE_SHARE * recentHigh) {
      edge = Math.min(edge, Math.max(rps / sloCapacityRatio, carried));
      edgeRun = true;
      beforeEdge = capacity;
      sinceEdge = 0;
    }
    recentHigh = Math.max(recentHigh * (1 - RECENT_FORGET), capacity);
    carried *= 1 - CARRIED_FORGET;
    if (p95Ms < setpointMs) {
      carried = Math.max(carried, rps);
      edge = Math.max(edge, rps);
    }
    sinceEdge++;
    edge *= 1 + edgeRelax * (1 + sinceEdge / edgeProbeWindows) ** 2;
  }

  /**
   * The way back after a crossing's run. From the run's fourth window the two-point fit reads
   * the crossing through a single queue's curve, far under the edge (pareto/1721270441, tuning
   * seed 12: 14,489 → 6,516 requests/s at loads of 15,263), and that drop is also the plan's
   * backoff while the wake-ups in flight ebb, which takes about one open delay. After it the
   * estimate climbed at riseLimit a window: 2% a window is 42 windows, seven minutes, to get
   * from a reading 2.3 × too low back to the edge, however long the load in flight took to
   * ebb. So once the run is over the estimate returns to just under the edge (the floor of the
   * run's first windows) in a straight line over edgeRestoreWindows windows under the setpoint:
   * a window between the setpoint and the SLO adds no step (the fit reads it as it always does),
   * and a window over the SLO ends the way back. Only after a deep drop, the estimate under
   * RESTORE_DEPTH of that floor: the fit's misreading of a cliff took 40-60% off (pareto and
   * mixed worlds, tuning seeds), while a shallow crossing's 20-30% is the backoff the wake-ups
   * in flight need where the bank's prediction, not the estimate, was short (bimodal/507356909:
   * the slow hump read as the baseline; restored there, its sends came back as a run over the
   * SLO half an hour later). Without that bound a drop of nothing would also hold the estimate
   * up along the line for the restore's windows, where the fit would have lowered it.
   * @param {number} p95Ms
   */
  function restoreEdge(p95Ms) {
    if (restore === null || !(p95Ms < setpointMs)) return;
    restore.windows++;
    const share = Math.min(1, restore.windows / edgeRestoreWindows);
    capacity = Math.max(capacity, restore.from + share * (restore.to - restore.from));
    if (share >= 1 || capacity >= restore.to) restore = null;
  }

  /**
   * How much one window's p95 moves from the next at much the same load, measured: half the
   * mean square of the change of ln p95 between consecutive windows (an EWMA over about ten
   * windows), the square of one window's relative noise if the windows' errors are
   * independent. A load trend between windows counts too, which only errs towards caution.
   * Why measured: the simulator's windows are stationary quantiles and move by a few percent
   * (latencyNoise's 15%); a probe of the demo's one-process gateway then took the worst of five
   * probes, each of which finds the queue empty or waits behind it, and read 4, 47, 108, 233
   * and 5.6 ms in consecutive windows at much the same load. Read through the curve with 15%
   * noise, each window counted as a precise measurement of the load: requests per send went
   * from 0.57 ± 0.60 to 0.37 ± 0.09 in two windows (true 0.9), and the plan flooded the
   * gateway (bench/RESULTS.md, 2026-11-26).
   * @param {number} p95Ms
   */
  function measureNoise(p95Ms) {
    const logP95 = Math.log(p95Ms);
    if (Number.isFinite(lastLogP95)) logChangeSq += NOISE_GAIN * ((logP95 - lastLogP95) ** 2 - logChangeSq);
    lastLogP95 = logP95;
  }

  /** One window's relative p95 noise, as measured. */
  function measuredNoise() {
    return Math.sqrt(logChangeSq / 2);
  }

  /** One window's relative p95 noise: the measured, never less than latencyNoise. */
  function windowNoise() {
    return Math.max(latencyNoise, measuredNoise());
  }

  /**
   * What a jumpy gateway's plan may fill: the lowest estimate of the last envelopeWindows
   * windows (Infinity where the p95 is as steady as latencyNoise, or the envelope is off).
   * Where the gateway's speed moves in phases (a one-process gateway on a shared host), the
   * estimate climbs through a fast phase, at riseLimit a window, and the next slow phase finds
   * the plan filling it: on the demo's real gateway the estimate went 22 → 35 requests/s in
   * 100 s of a fast phase, then a slow one put the p95 at 430-1,470 ms for 30 s; and restoring
   * the capacity before a loss on one fast window (`lost`) took it 22 → 31.5 at once, and the
   * plan to 46 sends/s (bench/RESULTS.md 2026-11-30 04:33). A slow phase that came lately will
   * come again: the plan fills what the gateway took in the slowest of them, as a fixed rate
   * that a sweep found safe does. Gated on the measured noise because a gateway whose p95 is
   * steady has no phases to hold against, and there the envelope would only slow the recovery
   * from each dip of the estimate.
   */
  function lowest() {
    if (recent.length === 0 || measuredNoise() <= latencyNoise) return Infinity;
    return Math.min(...recent);
  }

  /**
   * The base point: the idle gateway's p95 and the load it was seen at. A window's p95 over a
   * handful of requests is their worst, or nearly, and says little: on the demo's real gateway
   * a first window of 12 requests read 23.8 ms against an idle 49 (none of them happened to
   * wait behind another), became the base, and the fit through it read every loaded window at
   * 47-68 ms as a queue near its wall (the estimate 35 → 20.8 requests/s in 12 s; the run took
   * 338 s where one beside it took 251; bench/RESULTS.md 2026-11-30 13:21). A mean weighted by
   * requests does not cure it (23.8 over 12 and 48.2 over 13 requests give 36.5, still a
   * queue at 48), and leaving small windows out lets the first loaded window be the base
   * (118.8 ms in a slow phase: the campaign's first rise read as no queue). So until the
   * healthy windows (under the setpoint) hold BASE_REQUESTS requests, in BASE_WINDOWS windows
   * or one window of that many, the base is their median weighted by requests, and the fit does
   * not use it (baseTrusted). Then it is the lower envelope: it follows drops fast (half the
   * gap, less for a window of fewer requests) and rises slowly, only on healthy windows, so an
   * overload (whose latency is queueing, not the idle gateway's) cannot drag it up; a lasting
   * change such as a slower downstream still gets through in a few hundred windows.
   * @param {number} p95Ms @param {number} rps @param {number} requests  the window's requests
   */
  function learnBase(p95Ms, rps, requests) {
    if (baseLatencyMs !== null || !(p95Ms < setpointMs) || !(requests > 0)) return;
    const p95 = Math.min(p95Ms, 0.9 * setpointMs);
    if (rebase) {
      // A capacity loss: the old base lies on the old curve; measure it anew.
      base = null;
      baseTrusted = false;
      baseWindows.length = 0;
      rebase = false;
    }
    if (base === null || !baseTrusted) {
      baseWindows.push({ p95Ms: p95, rps, requests });
      const median = weightedMedian(baseWindows);
      base = median.p95Ms;
      baseRps = median.rps;
      baseTrusted = requestsOf(baseWindows) >= BASE_REQUESTS && (baseWindows.length >= BASE_WINDOWS || baseWindows[0].requests >= BASE_REQUESTS);
      if (baseTrusted) baseWindows.length = 0;
      return;
    }
    const step = p95Ms < base ? 0.5 * Math.min(1, requests / BASE_REQUESTS) ** 2 : 0.002;
    base = Math.min(0.9 * setpointMs, base + step * (p95Ms - base));
    baseRps += step * (rps - baseRps);
  }

  /**
   * The total load a latency-only window implies, read off a latency curve through the base
   * (ℓ₀, idle unless baseLoadRps says otherwise) and the capacity at the setpoint (Ĉ, ℓ*). The curve is a queue's: a floor and
   * a waiting time that grows as ρ/(1 − ρ) (Pollaczek-Khinchine),
   *
   *   ℓ(λ) = ℓ₀ + τ·ρ/(1 − ρ),  ρ = λ/μ,   so   λ(ℓ) = μ·x/(τ + x),  x = ℓ − ℓ₀,
   *
   * and through (Ĉ, ℓ*): μ = Ĉ·(τ + x*)/x*, x* = ℓ* − ℓ₀. The floor and the waiting time's
   * scale τ are not the same thing. A probe of a cheap endpoint has a floor of a few ms but
   * waits behind the users' requests, 23 ms of CPU each on the demo's real gateway; read with
   * τ = ℓ₀ (the M/M/1 curve ℓ₀/(1 − ρ) this estimator used before), a 30-ms probe meant 87%
   * of the capacity, the baseline read as 28 requests/s against a true 8, and the campaign
   * sat at the minimum rate. So τ is at least what the gateway's saturation ratio implies
   * (Ĉ at the setpoint is 1/saturationRatio of its full-CPU throughput: τ = x*·(s − 1)), and
   * at least ℓ₀ (a gateway whose floor is its service time, where the M/M/1 curve holds).
   * At the setpoint it reads Ĉ exactly, whatever the true curve, so the plan's fixed point
   * stays at the setpoint latency; away from it the error is absorbed into the baseline
   * estimate. With the users' own load given (baseLoadRps, B, kept under 0.9·Ĉ) the curve goes
   * through (B, ℓ₀) instead: λ(ℓ) = B + μ_B·x/(τ + x), μ_B = (Ĉ − B)·(τ + x*)/x*, so the floor
   * reads B where it read 0 (docs/pacing.md, "The users' load on a latency-only curve"). Below
   * the base the curve says nothing more (B). The variance propagates one window's
   * p95 noise (windowNoise()·ℓ) through the curve's slope μ·τ/(τ + x)². Over `censorMs` (the
   * gateway saturated: the p95 is a queue's, not a load's) the answer is a lower bound.
   * @param {number} p95Ms
   * @param {number} censorMs      latency above which the load is only a lower bound
   * @returns {{ rps: number, variance: number, censored: boolean }}
   */
  function loadAtLatency(p95Ms, censorMs) {
    const l0 = Math.min(/** @type {number} */ (base ?? p95Ms), 0.95 * setpointMs);
    const xStar = setpointMs - l0;
    const tau = Math.max(l0, xStar * (saturationRatio - 1));
    const b = Math.min(baseLoadRps, 0.9 * capacity);
    const mu = ((capacity - b) * (tau + xStar)) / xStar;
    const censored = p95Ms >= censorMs;
    const x = Math.max(0, Math.min(p95Ms, censorMs) - l0);
    const rps = b + (mu * x) / (tau + x);
    const slope = (mu * tau) / (tau + x) ** 2;
    return { rps, variance: (slope * windowNoise() * (l0 + x)) ** 2 + 1, censored };
  }

  return {
    update,
    loadAtLatency,
    get capacity() { return capacity; },
    /** What the plan may fill: the estimate, or less while the prior is on trial, or on a jumpy gateway the last minute's lowest. */
    get planned() { return Math.min(capacity, trial, lowest()); },
    snapshot() { return { capacity, capacityTrial: trial, capacityEnvelope: lowest(), capacityEdge: edge, baseLatencyMs: base, baseRps, baseRequests: baseTrusted ? BASE_REQUESTS : Math.min(BASE_REQUESTS, requestsOf(baseWindows)), observedCapacity: lastObserved, rebase, latencyNoise: windowNoise() }; }
  };
}

/** The requests, and the windows unless the first holds them all, the base latency is measured over before the capacity fit goes through it (see learnBase). */
const BASE_REQUESTS = 20;
const BASE_WINDOWS = 3;
/** A window over the SLO at a load under this share of the estimate is a capacity loss, not the estimate's error. */
const LOSS_SHARE = 0.8;
/** A crossing sets the edge only at a load above this share of the most load carried lately, and with the estimate above this share of its recent highest. */
const EDGE_SHARE = 0.9;
/** The first windows of a run over the SLO that set the edge, and the share of the edge the estimate stays at or above during them. */
const EDGE_RUN_WINDOWS = 3;
const EDGE_FLOOR = 0.95;
/** After a crossing's run the estimate returns to that floor only from under this share of it (see restoreEdge). */
const RESTORE_DEPTH = 0.7;
/** The most load carried under the setpoint is forgotten at this share per window (about a thousand windows' memory). */
const CARRIED_FORGET = 0.001;
/** The estimate's recent highest is forgotten at this share per window (about a hundred windows' memory). */
const RECENT_FORGET = 0.01;

/** Share of the way the measured p95 noise moves per window: about ten windows' memory. */
const NOISE_GAIN = 0.1;

/** @typedef {{ p95Ms: number, rps: number, requests: number }} BaseWindow  a healthy window, as the base point's evidence */

/**
 * The window whose p95 is the median of the windows' p95, each weighted by its requests.
 * @param {BaseWindow[]} windows  at least one
 * @returns {BaseWindow}
 */
function weightedMedian(windows) {
  const half = requestsOf(windows) / 2;
  const sorted = [...windows].sort((a, b) => a.p95Ms - b.p95Ms);
  let below = 0;
  return /** @type {BaseWindow} */ (sorted.find((w) => (below += w.requests) >= half));
}

/** @param {BaseWindow[]} windows */
function requestsOf(windows) {
  return windows.reduce((sum, w) => sum + w.requests, 0);
}

/** @typedef {ReturnType<typeof createCapacityEstimator>} CapacityEstimator */
