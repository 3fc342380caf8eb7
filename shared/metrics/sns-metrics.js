// Counts and times every SNS Publish at the SDK client, as middleware: the senders
// (segment-sender.js, transactional-sender.js) need no metrics code, and every attempt is
// seen, retries included. The result is classified by the same function the senders use.
import { performance } from 'node:perf_hooks';
import { classifyPublishError } from '../sns/sns-client.js';
import { sendMetrics } from './registry.js';

/** @typedef {import('@aws-sdk/client-sns').SNSClient} SNSClient */

/** sns-client.js PublishKind → the outcome label. */
const OUTCOME = /** @type {const} */ ({
  delivered: 'delivered', disabled: 'disabled', permanent: 'failed', throttled: 'throttled', transient: 'retryable'
});

/**
 * Adds the metrics middleware to an SNS client. Returns when SNS last answered (any HTTP
 * status, errors included): proof it is reachable, which /readyz uses before probing.
 * @param {SNSClient} client
 * @param {{ kind: 'campaign' | 'transactional', registry: import('./registry.js').MetricsRegistry }} options
 */
export function instrumentSnsClient(client, { kind, registry }) {
  const { sends, publishDuration } = sendMetrics(registry);
  // Every series exists from the start, so rate() and alerts see 0 rather than nothing.
  for (const outcome of Object.values(OUTCOME)) sends.inc({ kind, outcome }, 0);
  publishDuration.zero({ kind });
  /** @type {number | null} */
  let lastAnswerAt = null;
  /** @param {keyof typeof OUTCOME} result @param {number} startedAt @param {boolean} answered */
  const record = (result, startedAt, answered) => {
    publishDuration.observe({ kind }, (performance.now() - startedAt) / 1000);
    sends.inc({ kind, outcome: OUTCOME[result] });
    if (answered) lastAnswerAt = Date.now();
  };

  client.middlewareStack.add((next, context) => async (args) => {
    if (context.commandName !== 'PublishCommand') return next(args);
    const startedAt = performance.now();
    try {
      const output = await next(args);
      record('delivered', startedAt, true);
      return output;
    } catch (error) {
      record(classifyPublishError(error).kind, startedAt, /** @type {any} */ (error)?.$metadata?.httpStatusCode !== undefined);
      throw error;
    }
  }, { step: 'initialize', name: 'pushpaceMetrics' });

  return {
    /** ms since the epoch of SNS's last answer to this process, or null. */
    lastAnswerAt: () => lastAnswerAt
  };
}
