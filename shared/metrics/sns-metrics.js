// Counts and times every SNS Publish at the SNS client (either path, sns-client.js), as
// an observer: the senders (segment-sender.js, transactional-sender.js) need no metrics
// code, and every attempt is seen, retries included, classified as the senders see it.
import { sendMetrics } from './registry.js';

/** @typedef {import('../sns/sns-client.js').SnsClient} SnsClient */

/** sns-client.js PublishKind → the outcome label. */
const OUTCOME = /** @type {const} */ ({
  delivered: 'delivered', disabled: 'disabled', permanent: 'failed', throttled: 'throttled', transient: 'retryable'
});

/**
 * Adds the metrics middleware to an SNS client. Returns when SNS last answered (any HTTP
 * status, errors included): proof it is reachable, which /readyz uses before probing.
 * @param {SnsClient} client
 * @param {{ kind: 'campaign' | 'transactional', registry: import('./registry.js').MetricsRegistry }} options
 */
export function instrumentSnsClient(client, { kind, registry }) {
  const { sends, publishDuration } = sendMetrics(registry);
  // Every series exists from the start, so rate() and alerts see 0 rather than nothing.
  for (const outcome of Object.values(OUTCOME)) sends.inc({ kind, outcome }, 0);
  publishDuration.zero({ kind });
  /** @type {number | null} */
  let lastAnswerAt = null;
  client.observe((result, seconds, answered) => {
    publishDuration.observe({ kind }, seconds);
    sends.inc({ kind, outcome: OUTCOME[result.kind] });
    if (answered) lastAnswerAt = Date.now();
  });

  return {
    /** ms since the epoch of SNS's last answer to this process, or null. */
    lastAnswerAt: () => lastAnswerAt
  };
}
