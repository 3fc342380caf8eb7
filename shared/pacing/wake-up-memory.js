// What the governor learned about a campaign's wake-up traffic, kept for the next one.
// When a campaign ends, the controller's estimate of requests per send (its mean and standard
// deviation) and of the open delay's shape (the likeliest member of the model bank, as factors
// of the configured median and σ) become one memory entry. The next campaign's prior on
// requests per send is the
// entries' average, each weighted by its precision and by its age (halved every
// `halfLifeMs`), with the configured PACING_* prior as one more entry of fixed weight: the
// prior of last resort, and the one that wins when the memory is old or thin. Entries of the
// same message kind count fully; other kinds count a quarter. The remembered open-delay shape
// (the entries' weighted geometric mean of the median and σ factors) makes the model bank's
// members near it start likelier, as far as the memory outweighs the configured prior. Pure: the governor keeps the
// entries in Redis (governor/model-memory.js), the simulator in an array (sim/second-campaign.js).
import { priorGain as configuredGain } from './bank-members.js';

/**
 * @typedef {object} MemoryEntry
 * @property {number} at                 ms since the epoch, when the campaign ended
 * @property {string | null} kind        the campaign's message kind, when it names one
 * @property {number} sends              sends the estimate was learned from
 * @property {number} requestsPerSend    learned mean
 * @property {number} requestsPerSendSd  and its standard deviation
 * @property {number} medianFactor       the likeliest open-delay median, as a factor of the configured one
 * @property {number} sigmaFactor        the likeliest open-delay σ, as a factor of the configured one
 * @property {number | null} [seconds]   how long its sends took, first to last; with the two below, what
 *   the forecast checks itself against (shared/forecast/campaign-forecast.js); absent in older entries
 * @property {number | null} [baselineRps]  the baseline it was sent at
 * @property {number | null} [capacityRps]  the capacity estimate then
 * @property {{ requestsPerSend: number, requestsPerSendSd: number } | null} [startPrior]  the prior on
 *   requests per send it started from (a campaign from a vague prior is slower than one from memory)
 */

/** Entries of another kind count this much. */
const OTHER_KIND_WEIGHT = 0.25;
/** The configured prior's weight, in the units of a fresh entry exactly as sharp as it. */
const CONFIGURED_PRIOR_WEIGHT = 1;
/** A learned standard deviation is never taken below this share of its mean: one campaign is one campaign. */
const MIN_RELATIVE_SD = 0.1;

/**
 * A memory entry from the controller's snapshot at a campaign's end, or null when it learned
 * nothing worth keeping (too few sends, or estimates that are not numbers).
 * @param {{ requestsPerSend: number, requestsPerSendSd: number, medianFactor: number, sigmaFactor: number }} snapshot
 * @param {{ at: number, kind?: string | null, sends: number, minSends?: number, seconds?: number | null,
 *   baselineRps?: number | null, capacityRps?: number | null, startPrior?: MemoryEntry['startPrior'] }} campaign
 *   seconds, baselineRps, capacityRps, startPrior: how long it took and in what conditions, when known
 * @returns {MemoryEntry | null}
 */
export function memoryEntryOf(snapshot, { at, kind = null, sends, minSends = 1000, seconds = null, baselineRps = null, capacityRps = null, startPrior = null }) {
  const { requestsPerSend, requestsPerSendSd, medianFactor, sigmaFactor } = snapshot;
  const finite = [requestsPerSend, requestsPerSendSd, medianFactor, sigmaFactor].every(Number.isFinite);
  if (!finite || !(requestsPerSend > 0) || sends < minSends) return null;
  const known = (/** @type {number | null} */ x) => (x !== null && Number.isFinite(x) && x >= 0 ? x : null);
  return {
    at, kind, sends, requestsPerSend, requestsPerSendSd, medianFactor, sigmaFactor,
    seconds: known(seconds), baselineRps: known(baselineRps), capacityRps: known(capacityRps),
    startPrior: startPrior && startPrior.requestsPerSend > 0 && startPrior.requestsPerSendSd >= 0
      ? { requestsPerSend: startPrior.requestsPerSend, requestsPerSendSd: startPrior.requestsPerSendSd } : null
  };
}

/**
 * The prior for the next campaign's requests per send (as controller options and as a gain
 * prior), the remembered open-delay shape, and how much of it came from memory.
 * @param {MemoryEntry[]} entries
 * @param {{ now: number, kind?: string | null, halfLifeMs?: number }} context
 * @param {Pick<import('./controller-options.js').ControllerOptions, 'openProbability' | 'requestsPerOpen' | 'priorUncertainty' | 'confidence' | 'openDelayMedianMs' | 'openDelaySigma'>} configured
 */
export function priorFromMemory(entries, { now, kind = null, halfLifeMs = 7 * 86_400_000 }, configured) {
  const { requestsPerSend: priorGain, requestsPerSendSd: priorSd } = configuredGain(configured);
  let weightSum = CONFIGURED_PRIOR_WEIGHT;
  let memoryWeight = 0;
  let gainSum = CONFIGURED_PRIOR_WEIGHT * priorGain;
  let logMedianSum = 0;
  let logSigmaSum = 0;
  /** @type {Array<{ gain: number, sd: number, weight: number }>} */
  const used = [];
  for (const entry of entries) {
    const age = Math.max(0, now - entry.at);
    const sameKind = kind === null || entry.kind === null || entry.kind === kind;
    const sd = Math.max(entry.requestsPerSendSd, MIN_RELATIVE_SD * entry.requestsPerSend);
    // Precision relative to the configured prior's, so a sharp estimate outweighs a vague prior.
    const precision = Math.min(100, (priorSd / sd) ** 2);
    const weight = 0.5 ** (age / halfLifeMs) * (sameKind ? 1 : OTHER_KIND_WEIGHT) * precision;
    if (!(weight > 1e-6)) continue;
    used.push({ gain: entry.requestsPerSend, sd, weight });
    weightSum += weight;
    memoryWeight += weight;
    gainSum += weight * entry.requestsPerSend;
    logMedianSum += weight * Math.log(entry.medianFactor);
    logSigmaSum += weight * Math.log(entry.sigmaFactor);
  }
  const gain = gainSum / weightSum;
  // Spread: the entries' own uncertainty and their disagreement, and the configured prior's
  // share of it; never sharper than one campaign's estimate.
  let variance = CONFIGURED_PRIOR_WEIGHT * (priorSd ** 2 + (priorGain - gain) ** 2);
  for (const u of used) variance += u.weight * (u.sd ** 2 + (u.gain - gain) ** 2);
  const sd = Math.max(Math.sqrt(variance / weightSum), MIN_RELATIVE_SD * gain);
  const fromMemory = memoryWeight / weightSum;
  // The open delay's shape: the entries' weighted geometric mean, trusted as far as the memory
  // outweighs the configured prior. The model bank starts its members near it likelier
  // (model-bank.js, shapeLogPrior); the data still decide.
  const shape = {
    medianFactor: memoryWeight > 0 ? Math.exp(logMedianSum / memoryWeight) : 1,
    sigmaFactor: memoryWeight > 0 ? Math.exp(logSigmaSum / memoryWeight) : 1,
    weight: fromMemory
  };
  return {
    /** As controller options, for a controller created for the campaign (the simulator). */
    options: {
      openProbability: gain / configured.requestsPerOpen,
      // configuredGain's rule, inverted: the upper bound at `confidence` σ as a factor of the mean.
      priorUncertainty: 1 + Math.max(configured.confidence, 1) * sd / gain,
      shapePriorMedianFactor: shape.medianFactor,
      shapePriorSigmaFactor: shape.sigmaFactor,
      shapePriorWeight: shape.weight
    },
    /** As the governor's controller takes it between campaigns (setGainPrior). */
    gainPrior: { requestsPerSend: gain, requestsPerSendSd: sd, shape },
    shape,
    fromMemory,
    entries: used.length
  };
}
