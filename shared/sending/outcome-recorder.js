// Buffers a segment's send outcomes and writes them to Redis in batches, in the
// background, one write at a time (a group commit): the first outcome starts a write, and
// those that arrive while it runs go in the next, which starts as soon as it ends.
//
// add() answers when the write carrying the outcome has settled. The sender holds the
// send's slot until then, so a send counts as in flight until its outcome is in Redis, and
// a crash resends at most the sends in flight (PUBLISH_CONCURRENCY per worker). A failed
// write settles too (the slot must not wait for Redis to come back); its outcomes stay
// buffered for the next write or drain(), which retries.
/** @typedef {import('../types.js').SendOutcome} SendOutcome */
/** @typedef {import('../campaign/campaign-store.js').CampaignStore} CampaignStore */

const DRAIN_RETRY_FIRST_MS = 100;
const DRAIN_RETRY_MAX_MS = 2000;

/**
 * @param {CampaignStore} store
 * @param {string} campaignId
 * @param {import('pino').Logger} log
 * @param {{ drainBudgetMs?: number }} [options] how long drain() keeps retrying a failing Redis
 */
export function createOutcomeRecorder(store, campaignId, log, { drainBudgetMs = 15_000 } = {}) {
  /** @type {SendOutcome[]} */
  let buffered = [];
  /** The running write; it never rejects. @type {Promise<void> | null} */
  let writing = null;
  /** Settles with the write after the running one: for outcomes added meanwhile. @type {ReturnType<typeof settleable> | null} */
  let next = null;

  const write = () => {
    const batch = buffered;
    buffered = [];
    const carried = next ?? settleable();
    next = null;
    writing = store.recordOutcomes(campaignId, batch).then(
      () => true,
      (error) => {
        // Keep them for the next write; drain() retries and finally reports the failure.
        buffered = batch.concat(buffered);
        log.warn({ err: error, outcomes: batch.length }, 'recording outcomes failed; will retry');
        return false;
      }
    ).then((written) => {
      writing = null;
      carried.settle();
      if (written && buffered.length > 0) {
        write();
      } else {
        // Failed: no retry at once (Redis may be down); those waiting go on, their outcomes kept.
        next?.settle();
        next = null;
      }
    });
    return carried.promise;
  };

  return {
    /**
     * Buffers an outcome; the answer settles once the write carrying it has (written, or
     * failed and kept for the next).
     * @param {SendOutcome} outcome
     * @returns {Promise<void>}
     */
    add(outcome) {
      buffered.push(outcome);
      if (!writing) return write();
      next ??= settleable();
      return next.promise;
    },
    /**
     * Writes everything buffered, retrying with backoff for up to the budget;
     * throws if Redis stays unavailable (the segment is then retried).
     */
    async drain() {
      const deadline = Date.now() + drainBudgetMs;
      let pause = DRAIN_RETRY_FIRST_MS;
      while (true) {
        while (writing) await writing;
        if (buffered.length === 0) return;
        write();
        while (writing) await writing;
        if (buffered.length === 0) return;
        if (Date.now() + pause > deadline) throw new Error(`could not record ${buffered.length} send outcomes in Redis`);
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(DRAIN_RETRY_MAX_MS, pause * 2);
      }
    }
  };
}

/** A promise and the function that settles it. */
function settleable() {
  /** @type {() => void} */
  let settle = () => {};
  const promise = new Promise((resolve) => { settle = () => resolve(undefined); });
  return { promise: /** @type {Promise<void>} */ (promise), settle };
}
