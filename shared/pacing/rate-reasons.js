// Every reason the pacing controller gives for a rate (controller.js RateReason), in words a
// campaign's owner can read: the one place that says what a code means. The dashboard page
// imports this file as it is (served as /assets/rate-reasons.js), so it imports nothing.
// docs/pacing.md "Guards" has the exact conditions behind each one.

/** @type {Readonly<Record<import('./controller.js').RateReason, string>>} */
export const RATE_REASON_WORDS = Object.freeze({
  plan: 'Following the plan: the rate the gateway\'s measured headroom allows.',
  'plan-latency-only': 'Following the plan, with the gateway load read off its latency (the probe cannot see its request rate).',
  'cold-start': 'Cold start: no gateway readings yet, and the whole campaign is small enough to go out at once.',
  'whole-campaign': 'Whole campaign at once: it has not started, and its whole predicted wake-up load fits under the gateway\'s capacity at the SLO.',
  'short-campaign': 'Short campaign: its whole predicted wake-up load fits under the gateway\'s capacity at the SLO when it is sent evenly within PACING_SHORT_CAMPAIGN_MS of its first send.',
  'max-rate': 'At the configured maximum rate (PACING_MAX_RATE): the gateway could take more.',
  'min-rate': 'At the configured minimum rate (PACING_MIN_RATE): the plan asked for less.',
  'error-cut': 'Cut: the gateway returned too many errors, so the rate was reduced at once.',
  'latency-cut': 'Cut: the gateway\'s p99 latency went over its limit, so the rate was reduced at once.',
  'cut-hold': 'Holding after a cut while the load already sent reaches the gateway.',
  stale: 'No recent gateway readings: the rate eases down towards the safe rate.'
});

/**
 * The reason in words; an unknown code (a newer governor than this page) is shown as itself.
 * @param {string | null | undefined} code
 */
export function reasonInWords(code) {
  if (!code) return 'No governor decision: the rate is set by hand (pushctl rate).';
  return Object.hasOwn(RATE_REASON_WORDS, code) ? RATE_REASON_WORDS[/** @type {keyof typeof RATE_REASON_WORDS} */ (code)] : `Reason "${code}".`;
}
