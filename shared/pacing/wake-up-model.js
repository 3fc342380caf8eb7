// The wake-up model: how the requests a push causes are spread over time after it is sent.
//
// A delivered push makes a user open the app with probability p after a delay D, and each
// open sends k requests through the gateway over a short session S after the open. So one
// send causes a·g(τ) requests per second τ seconds later, with a = p·k requests per send
// and g the density of D + S. Open delays are log-normal ("most react within minutes, a
// long tail after"): a median and a shape σ, optionally a mixture of such components.
// The session spreads an open's requests uniformly over a fixed length or exponentially
// with a mean (a burst at the open, then a trickle).
//
// Everything here is pure: the controller (shared/pacing) and the simulator (sim/) build
// their kernels with these functions, the controller from its priors, the simulator from
// the scenario's true world.

/**
 * @typedef {object} DelayComponent  one log-normal component of the open-delay distribution
 * @property {number} share     weight of this component (the shares are normalised)
 * @property {number} medianMs  median open delay
 * @property {number} sigma     log-normal shape: the 95th percentile is median·e^(1.645σ)
 */

/**
 * @typedef {object} WakeUpShape
 * @property {DelayComponent[]} openDelay
 * @property {{ kind: 'uniform', lengthMs: number } | { kind: 'exponential', meanMs: number }} session
 *   how an open's requests are spread after it
 */

/** Standard normal CDF, from erf (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7). @param {number} z */
export function normalCdf(z) {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/**
 * The standard normal quantile: z with normalCdf(z) = p (bisection, to 1e-9 in z). The
 * model bank turns a tail probability into standard deviations with it.
 * @param {number} p  0 < p < 1
 */
export function normalQuantile(p) {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs 0 < p < 1, got ${p}`);
  let lo = -9;
  let hi = 9;
  while (hi - lo > 1e-9) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid) < p) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * P(open delay ≤ tMs) for a log-normal mixture.
 * @param {DelayComponent[]} components
 * @param {number} tMs
 */
export function openDelayCdf(components, tMs) {
  if (tMs <= 0) return 0;
  let total = 0;
  let weight = 0;
  for (const c of components) {
    total += c.share * normalCdf(Math.log(tMs / c.medianMs) / c.sigma);
    weight += c.share;
  }
  return total / weight;
}

/**
 * The q-quantile of the open delay (bisection on the CDF), in ms.
 * @param {DelayComponent[]} components
 * @param {number} q
 */
export function openDelayQuantile(components, q) {
  let lo = 0;
  let hi = Math.max(...components.map((c) => c.medianMs * Math.exp(6 * c.sigma)));
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (openDelayCdf(components, mid) < q) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The request-time distribution of one send (open delay plus position in the session) as
 * probability mass per second: mass[i] = P(i ≤ T < i + 1) in seconds after the send, cut
 * where the remaining mass is below `tailMass` and renormalised to sum to 1.
 * @param {WakeUpShape} shape
 * @param {{ tailMass?: number }} [options]
 * @returns {Float64Array}
 */
export function requestTimeMassPerSecond(shape, { tailMass = 1e-3 } = {}) {
  // The open delay per second, up to its (1 - tailMass/2) quantile.
  const delayEnd = Math.ceil(openDelayQuantile(shape.openDelay, 1 - tailMass / 2) / 1000) + 1;
  const delay = new Float64Array(delayEnd);
  let prev = 0;
  for (let i = 0; i < delayEnd; i++) {
    const c = openDelayCdf(shape.openDelay, (i + 1) * 1000);
    delay[i] = c - prev;
    prev = c;
  }
  // The session offset per second.
  const s = shape.session;
  const sessionEnd = s.kind === 'uniform' ? Math.max(1, Math.ceil(s.lengthMs / 1000))
    : Math.max(1, Math.ceil((-Math.log(tailMass / 2) * s.meanMs) / 1000));
  const session = new Float64Array(sessionEnd);
  for (let i = 0; i < sessionEnd; i++) {
    session[i] = s.kind === 'uniform' ? Math.min(1, s.lengthMs / 1000 - i) / (s.lengthMs / 1000)
      : Math.exp(-(i * 1000) / s.meanMs) - Math.exp(-((i + 1) * 1000) / s.meanMs);
  }
  // Their sum's distribution is the convolution.
  const full = new Float64Array(delayEnd + sessionEnd);
  for (let i = 0; i < delayEnd; i++) {
    const d = delay[i];
    if (d === 0) continue;
    for (let j = 0; j < sessionEnd; j++) full[i + j] += d * session[j];
  }
  return truncate(full, tailMass);
}

/**
 * Cuts a mass vector where the remaining tail is below `tailMass` and renormalises it.
 * @param {Float64Array} mass
 * @param {number} tailMass
 */
function truncate(mass, tailMass) {
  let total = 0;
  for (const m of mass) total += m;
  let kept = mass.length;
  let tail = 0;
  while (kept > 1 && tail + mass[kept - 1] < tailMass * total) tail += mass[--kept];
  const out = mass.slice(0, kept);
  const scale = 1 / (total - tail);
  for (let i = 0; i < out.length; i++) out[i] *= scale;
  return out;
}

/**
 * The kernel on a coarser grid: kernel[j] = the share of a send's requests that arrive in
 * the j-th bin of `binSeconds` after the bin it was sent in, for sends spread uniformly over
 * their bin (so kernel[0] holds what arrives in the send's own bin).
 * @param {Float64Array} massPerSecond  from requestTimeMassPerSecond
 * @param {number} binSeconds  a whole number of seconds
 * @returns {Float64Array}
 */
export function binKernel(massPerSecond, binSeconds) {
  const n = massPerSecond.length;
  const bins = Math.ceil((n + binSeconds) / binSeconds);
  const kernel = new Float64Array(bins);
  // A send at second u of its bin (u = 0..binSeconds-1, equally likely) puts massPerSecond[i]
  // into second u + i, which lies in bin floor((u + i) / binSeconds).
  for (let u = 0; u < binSeconds; u++) {
    for (let i = 0; i < n; i++) kernel[Math.floor((u + i) / binSeconds)] += massPerSecond[i] / binSeconds;
  }
  let end = bins;
  while (end > 1 && kernel[end - 1] === 0) end--;
  return kernel.slice(0, end);
}

/** Running sums: cumulative[j] = kernel[0] + ... + kernel[j]. @param {Float64Array} kernel */
export function cumulativeKernel(kernel) {
  const out = new Float64Array(kernel.length);
  let sum = 0;
  for (let j = 0; j < kernel.length; j++) out[j] = (sum += kernel[j]);
  return out;
}

/**
 * The time by which half of a send's requests have arrived, in ms: the "one open delay" the
 * controller waits after a cut before it may cut again.
 * @param {Float64Array} massPerSecond
 */
export function medianRequestDelayMs(massPerSecond) {
  let sum = 0;
  for (let i = 0; i < massPerSecond.length; i++) {
    sum += massPerSecond[i];
    if (sum >= 0.5) return (i + 1) * 1000;
  }
  return massPerSecond.length * 1000;
}

/**
 * Predicted push-induced load, in requests per second, for each second 0..length-1, from
 * a per-second send history (sends[t] sends in second t) and a per-second kernel:
 * load[t] = a · Σ_s sends[s] · mass[t - s]. The sums the controller and the simulator keep
 * incrementally; this one is for tests and small studies.
 * @param {ArrayLike<number>} sends
 * @param {Float64Array} massPerSecond
 * @param {number} requestsPerSend  a = open probability × requests per open
 * @param {number} length
 */
export function predictLoad(sends, massPerSecond, requestsPerSend, length) {
  const load = new Float64Array(length);
  for (let s = 0; s < sends.length && s < length; s++) {
    const n = sends[s];
    if (!n) continue;
    const end = Math.min(massPerSecond.length, length - s);
    for (let i = 0; i < end; i++) load[s + i] += requestsPerSend * n * massPerSecond[i];
  }
  return load;
}
