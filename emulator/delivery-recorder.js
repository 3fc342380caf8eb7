// What "arrived at SNS", for tests and the demo: counts per target, errors per code,
// a 10-ms timeline for rates and a ring of the last deliveries.

/**
 * @typedef {import('./query-protocol.js').MessageAttribute} MessageAttribute
 * @typedef {object} Delivery one accepted Publish, as the ring buffer keeps it
 * @property {string} targetArn
 * @property {string} messageId
 * @property {unknown} message parsed when it is JSON, else the string
 * @property {string | null} messageStructure
 * @property {Record<string, MessageAttribute>} attributes
 * @property {number} at clock time in ms since the epoch
 */

const BIN_MS = 10;
const WINDOW_BINS = 1000 / BIN_MS;
// One hour of 10-ms bins (2.9 MB); older bins are dropped. maxPerSecond is kept
// incrementally, so it stays exact over any run length.
const MAX_BINS = 360_000;
/** How many recent deliveries the ring keeps, the most GET /_emulator/deliveries returns. */
export const RING_SIZE = 1000;
// About 200 MB of Map at worst; beyond it deliveries are still counted, but their
// targets are not, and stats say how many went untracked.
const MAX_TRACKED_TARGETS = 2_000_000;

/**
 * Counters, the 10-ms timeline and the ring of recent deliveries. Every update is
 * O(1) so recording never limits the throughput being measured.
 * @param {() => number} now
 */
export function createDeliveryRecorder(now) {
  let originMs = 0, published = 0, requests = 0, duplicateTargets = 0, untrackedDeliveries = 0;
  /** @type {number | null} */ let firstAt = null;
  /** @type {number | null} */ let lastAt = null;
  /** @type {Map<string, number>} */ let errors = new Map();
  /** @type {Map<string, number>} */ let actions = new Map();
  /** @type {Map<string, number>} */ let targets = new Map();
  // Timeline: counts[i] holds bin binOffset + i, bins counted from originMs.
  /** @type {number[]} */ let counts = [];
  let binOffset = 0, lastBin = 0, windowEnd = 0, windowSum = 0, maxPerSecond = 0;
  /** @type {(Delivery | undefined)[]} */ let ring = [];
  let ringNext = 0;

  function reset() {
    originMs = Math.floor(now());
    published = requests = duplicateTargets = untrackedDeliveries = 0;
    firstAt = lastAt = null;
    errors = new Map();
    actions = new Map();
    targets = new Map();
    counts = [];
    binOffset = lastBin = windowEnd = windowSum = maxPerSecond = 0;
    ring = new Array(RING_SIZE);
    ringNext = 0;
  }
  reset();

  /** @param {number} bin */
  const countAt = (bin) => (bin >= binOffset && bin - binOffset < counts.length ? counts[bin - binOffset] : 0);

  // Adds one delivery to the timeline and slides the 1-second window to end at its
  // bin. A window ending at an empty bin never holds more than the window ending at
  // the last non-empty bin before it, so checking here finds the true maximum.
  /** @param {number} at */
  function addToTimeline(at) {
    const bin = Math.max(lastBin, Math.floor((at - originMs) / BIN_MS));
    lastBin = bin;
    if (bin > windowEnd) {
      if (bin - windowEnd >= WINDOW_BINS) windowSum = 0;
      else for (let k = windowEnd + 1; k <= bin; k++) windowSum -= countAt(k - WINDOW_BINS);
      windowEnd = bin;
    }
    if (bin - binOffset >= MAX_BINS) {
      // Drop the oldest quarter-hour at once so the copy is rare.
      const keepFrom = bin - Math.floor((MAX_BINS * 3) / 4);
      counts = keepFrom - binOffset >= counts.length ? [] : counts.slice(keepFrom - binOffset);
      binOffset = keepFrom;
    }
    while (counts.length <= bin - binOffset) counts.push(0);
    counts[bin - binOffset]++;
    windowSum++;
    if (windowSum > maxPerSecond) maxPerSecond = windowSum;
  }

  /** @param {Delivery} entry */
  const present = (entry) => ({
    ...entry,
    message: entry.messageStructure === null ? maybeJson(entry.message) : entry.message,
    attributes: entry.attributes ?? {}
  });

  return {
    reset,
    /** @param {string} action @param {string | undefined} errorCode */
    countRequest(action, errorCode) {
      requests++;
      actions.set(action, (actions.get(action) ?? 0) + 1);
      if (errorCode !== undefined) errors.set(errorCode, (errors.get(errorCode) ?? 0) + 1);
    },
    /** @param {{ targetArn: string, messageId: string, message: unknown, messageStructure: string | null, attributes: Record<string, MessageAttribute> | null }} delivery */
    deliver({ targetArn, messageId, message, messageStructure, attributes }) {
      const at = now();
      published++;
      firstAt ??= at;
      lastAt = at;
      const seen = targets.get(targetArn);
      if (seen === undefined) {
        if (targets.size < MAX_TRACKED_TARGETS) targets.set(targetArn, 1);
        else untrackedDeliveries++;
      } else {
        targets.set(targetArn, seen + 1);
        if (seen === 1) duplicateTargets++;
      }
      addToTimeline(at);
      // Attributes stay null when absent; present() supplies {} only when read.
      ring[ringNext] = /** @type {Delivery} */ ({ targetArn, messageId, message, messageStructure, attributes, at });
      ringNext = (ringNext + 1) % RING_SIZE;
    },
    /** @param {string} arn */
    deliveryCount: (arn) => targets.get(arn) ?? 0,
    /** @param {string} [arn] @returns {Delivery[]} */
    deliveries(arn) {
      const ordered = [...ring.slice(ringNext), ...ring.slice(0, ringNext)];
      /** @type {Delivery[]} */
      const found = [];
      for (const entry of ordered) if (entry && (arn === undefined || entry.targetArn === arn)) found.push(present(entry));
      return found;
    },
    /** @param {{ bins?: boolean }} [options] */
    stats({ bins = false } = {}) {
      const spanMs = firstAt !== null && lastAt !== null ? lastAt - firstAt : 0;
      return {
        published,
        distinctTargets: targets.size,
        duplicateTargets,
        untrackedDeliveries,
        errors: Object.fromEntries(errors),
        requests,
        actions: Object.fromEntries(actions),
        firstAt,
        lastAt,
        maxPerSecond,
        // N deliveries evenly spaced at rate r span (N - 1) / r seconds.
        meanPerSecond: spanMs > 0 ? ((published - 1) * 1000) / spanMs : null,
        ...(bins ? { bins: { startMs: originMs + binOffset * BIN_MS, binMs: BIN_MS, counts: counts.slice() } } : {})
      };
    }
  };
}

/** @param {unknown} text */
function maybeJson(text) {
  if (typeof text !== 'string' || !(text.startsWith('{') || text.startsWith('['))) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
