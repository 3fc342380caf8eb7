// Buffers a segment's send outcomes and writes them to Redis in batches, in the
// background, one write at a time. What is buffered but not yet written is
// exactly what a crash could resend, so writes start as soon as outcomes arrive.
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
  /** @type {Promise<void> | null} */
  let writing = null;

  const write = () => {
    const batch = buffered;
    buffered = [];
    writing = store.recordOutcomes(campaignId, batch).then(
      () => {},
      (error) => {
        // Keep them for the next write; drain() retries and finally reports the failure.
        buffered = batch.concat(buffered);
        log.warn({ err: error, outcomes: batch.length }, 'recording outcomes failed; will retry');
      }
    ).finally(() => { writing = null; });
  };

  return {
    /** @param {SendOutcome} outcome */
    add(outcome) {
      buffered.push(outcome);
    },
    /** Starts a background write of what is buffered, unless one is running. */
    flushSoon() {
      if (!writing && buffered.length > 0) write();
    },
    /**
     * Writes everything buffered, retrying with backoff for up to the budget;
     * throws if Redis stays unavailable (the segment is then retried).
     */
    async drain() {
      const deadline = Date.now() + drainBudgetMs;
      let pause = DRAIN_RETRY_FIRST_MS;
      while (true) {
        if (writing) await writing;
        if (buffered.length === 0) return;
        write();
        await writing;
        if (buffered.length === 0) return;
        if (Date.now() + pause > deadline) throw new Error(`could not record ${buffered.length} send outcomes in Redis`);
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(DRAIN_RETRY_MAX_MS, pause * 2);
      }
    }
  };
}
