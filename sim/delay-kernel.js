// The simulated world's request-time kernel: the share of one send's requests that arrive in
// each second after it. Open delays are a mixture of components of three kinds:
//
//   lognormal    median m, shape σ (the controller's own family; shared/pacing/wake-up-model.js)
//   exponential  median m: P(D > t) = 2^(-t/m), memoryless, no early peak
//   pareto       median m, tail index α: a Lomax, P(D > t) = (1 + t/λ)^-α with
//                λ = m / (2^(1/α) - 1); a power-law tail, most opens early, some hours later
//
// Each open's requests then spread exponentially over its session. A kernel made only of
// log-normal components comes from the shared wake-up model, so the shipped scenarios give
// the same runs as before; the others are built here the same way: the delay's mass per
// second convolved with the session's, cut where less than 0.1% of the mass remains, and
// renormalised. `maxDelaySeconds` cuts the kernel there too: a Pareto tail can reach days,
// and a campaign's evaluation would wait for all of it.
import { normalCdf, requestTimeMassPerSecond } from '../shared/pacing/wake-up-model.js';

/** The share of the kernel's mass that may be cut from its tail (as in the shared model). */
const TAIL_MASS = 1e-3;

/**
 * Mass per second of one send's requests, for the scenario's wake-up behaviour.
 * @param {import('./scenario.js').WakeUp} wakeUp
 * @returns {Float64Array}
 */
export function requestMassPerSecond(wakeUp) {
  const sessionMeanMs = wakeUp.sessionMeanSeconds * 1000;
  const mass = wakeUp.openDelay.every((c) => (c.kind ?? 'lognormal') === 'lognormal')
    ? requestTimeMassPerSecond({
      openDelay: wakeUp.openDelay.map((c) => ({ share: c.share, medianMs: c.medianSeconds * 1000, sigma: /** @type {number} */ (c.sigma) })),
      session: { kind: 'exponential', meanMs: sessionMeanMs }
    })
    : mixtureMass(wakeUp.openDelay, sessionMeanMs, wakeUp.maxDelaySeconds);
  return wakeUp.maxDelaySeconds === null ? mass : cut(mass, wakeUp.maxDelaySeconds);
}

/**
 * P(open delay ≤ t seconds) for a mixture of components.
 * @param {import('./scenario.js').DelayComponent[]} components
 * @param {number} t
 */
export function delayCdf(components, t) {
  if (t <= 0) return 0;
  let total = 0;
  let weight = 0;
  for (const c of components) {
    total += c.share * componentCdf(c, t);
    weight += c.share;
  }
  return total / weight;
}

/** @param {import('./scenario.js').DelayComponent} c @param {number} t seconds */
function componentCdf(c, t) {
  const m = c.medianSeconds;
  switch (c.kind ?? 'lognormal') {
    case 'exponential': return 1 - 2 ** (-t / m);
    case 'pareto': {
      const alpha = /** @type {number} */ (c.alpha);
      const scale = m / (2 ** (1 / alpha) - 1);
      return 1 - (1 + t / scale) ** -alpha;
    }
    default: return normalCdf(Math.log(t / m) / /** @type {number} */ (c.sigma));
  }
}

/**
 * The delay, in seconds, by which a share q of the users who open have opened (bisection on
 * the CDF, between 10 ms and 1e6 s).
 * @param {import('./scenario.js').DelayComponent[]} components
 * @param {number} q
 */
export function delayQuantileSeconds(components, q) {
  let lo = 0.01;
  let hi = 1e6;
  for (let i = 0; i < 80; i++) {
    const mid = Math.sqrt(lo * hi);
    if (delayCdf(components, mid) < q) lo = mid; else hi = mid;
  }
  return lo;
}

/**
 * @param {import('./scenario.js').DelayComponent[]} components
 * @param {number} sessionMeanMs
 * @param {number | null} maxDelaySeconds
 */
function mixtureMass(components, sessionMeanMs, maxDelaySeconds) {
  // The delay per second up to its (1 - TAIL_MASS/2) quantile (doubling, then bisection),
  // or the cut if that comes first.
  const target = 1 - TAIL_MASS / 2;
  let hi = Math.max(...components.map((c) => c.medianSeconds));
  const limit = maxDelaySeconds ?? 30 * 86_400;
  while (delayCdf(components, hi) < target && hi < limit) hi *= 2;
  let lo = 0;
  hi = Math.min(hi, limit);
  for (let i = 0; i < 60 && hi - lo > 0.5; i++) {
    const mid = (lo + hi) / 2;
    if (delayCdf(components, mid) < target) lo = mid; else hi = mid;
  }
  const delayEnd = Math.ceil(hi) + 1;
  const delay = new Float64Array(delayEnd);
  let prev = 0;
  for (let i = 0; i < delayEnd; i++) {
    const c = delayCdf(components, i + 1);
    delay[i] = c - prev;
    prev = c;
  }
  const sessionEnd = Math.max(1, Math.ceil((-Math.log(TAIL_MASS / 2) * sessionMeanMs) / 1000));
  const session = new Float64Array(sessionEnd);
  for (let i = 0; i < sessionEnd; i++) session[i] = Math.exp(-(i * 1000) / sessionMeanMs) - Math.exp(-((i + 1) * 1000) / sessionMeanMs);
  const full = new Float64Array(delayEnd + sessionEnd);
  for (let i = 0; i < delayEnd; i++) {
    const d = delay[i];
    if (d === 0) continue;
    for (let j = 0; j < sessionEnd; j++) full[i + j] += d * session[j];
  }
  return truncate(full);
}

/** Cuts the tail where less than TAIL_MASS remains and renormalises. @param {Float64Array} mass */
function truncate(mass) {
  let total = 0;
  for (const m of mass) total += m;
  let kept = mass.length;
  let tail = 0;
  while (kept > 1 && tail + mass[kept - 1] < TAIL_MASS * total) tail += mass[--kept];
  return normalise(mass.slice(0, kept));
}

/** The kernel up to `seconds`, renormalised: later opens are not modelled. @param {Float64Array} mass @param {number} seconds */
function cut(mass, seconds) {
  return mass.length <= seconds ? mass : normalise(mass.slice(0, Math.max(1, Math.ceil(seconds))));
}

/** @param {Float64Array} mass */
function normalise(mass) {
  let total = 0;
  for (const m of mass) total += m;
  for (let i = 0; i < mass.length; i++) mass[i] /= total;
  return mass;
}
