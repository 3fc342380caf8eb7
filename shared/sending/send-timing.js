// Waiting and backing off, for the loops that send paced publishes (campaign
// segments and transactional events alike).

// No sleep is longer than this, so a raised rate or a stop is noticed quickly.
export const MAX_SLEEP_MS = 250;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 5000;

/**
 * A sleep that a completing send (or a stop) can cut short: `sleep(ms)` resolves
 * after at most min(ms, MAX_SLEEP_MS), or as soon as `wake()` is called.
 * Infinity waits for wake() alone.
 */
export function createWakeableSleep() {
  let wake = () => {};
  return {
    /** @param {number} ms */
    sleep: (ms) => new Promise((resolve) => {
      const timer = ms === Infinity ? undefined : setTimeout(resolve, Math.max(1, Math.min(ms, MAX_SLEEP_MS)));
      wake = () => { clearTimeout(timer); resolve(undefined); };
    }).finally(() => { wake = () => {}; }),
    wake: () => wake()
  };
}

/**
 * Delay before retry `attempt` (1-based): 250 ms doubling to 5 s, with jitter
 * that spreads the retries of many devices apart.
 * @param {number} attempt
 */
export function backoff(attempt) {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * ceiling / 2;
}
