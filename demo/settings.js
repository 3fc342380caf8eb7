// The demo's world and the governor's configuration, in one place. docs/demo.md explains
// the choices.
//
// Time is compressed about 30×: users open the app a median 3 s after the push instead of
// 90 s, and an open's requests spread over about 2 s instead of a minute. Latencies are not
// compressed: the gateway answers in real milliseconds and the SLO is the usual 400 ms p95.
// The governor decides every 2 s (a 10-s metrics window elsewhere).

export const DEMO = Object.freeze({
  audience: 15_000,
  sloP95Ms: 400,
  /** The p95 the governor aims at, as a share of the SLO (PACING_SETPOINT_RATIO; see governorEnv). */
  setpointRatio: 0.7,
  /**
   * 16 processes × 20 ms: 800 requests/s at full CPU. The stationary p95 is
   * 50 + 20·ln 20/(1 − ρ) ms: 280 ms (the governor's setpoint) at about 590 requests/s,
   * the 400 ms SLO at about 660.
   */
  gateway: Object.freeze({ processes: 16, serviceMs: 20, downstreamMs: 50, timeoutMs: 5000 }),
  /** Requests/s from users nobody pushed: a third of the gateway's capacity, as in the simulator. */
  baselineRps: 267,
  /** The truth the devices follow: 0.25 × 6 = 1.5 gateway requests per send. */
  wakeUp: Object.freeze({ openProbability: 0.25, requestsPerOpen: 6, openDelayMedianMs: 3000, openDelaySigma: 0.7, sessionMeanMs: 2000 }),
  /** Governor decisions to watch (baseline only) before the campaign starts. */
  warmupTicks: 4,
  /** Windows in which the gateway's p95 is judged against the SLO. */
  evaluationWindowMs: 5000,
  workers: 2,
  /** Done-when: the whole demo, start to exit. */
  maxWallMs: 180_000,
  minShareWithinSlo: 0.95
});

/**
 * The governor's environment (config/index.js validates it): where the gateway's metrics
 * are and what the controller may assume. Its priors are close to the truth but not equal:
 * its open delays have the default shape (σ = 1 against the devices' 0.7) and uniform
 * 3-s sessions against exponential ones, and its capacity prior (480 requests/s at the
 * setpoint) is a cautious load test's figure, about 20% under what the gateway gives.
 * It aims the p95 at 70% of the SLO, not the default 80%: a real queue's p95 jumps from
 * window to window (docs/demo.md), and at 80% about one 5-s window in ten is over the SLO
 * even when the average load is right.
 * @param {string} gatewayUrl
 */
export function governorEnv(gatewayUrl) {
  return {
    GATEWAY_METRICS: 'metrics-scrape',
    GATEWAY_METRICS_URL: `${gatewayUrl}/metrics`,
    PACING_SLO_P95_MS: String(DEMO.sloP95Ms),
    PACING_SETPOINT_RATIO: String(DEMO.setpointRatio),
    PACING_CAPACITY_RPS: '480',
    PACING_OPEN_PROBABILITY: String(DEMO.wakeUp.openProbability),
    PACING_REQUESTS_PER_OPEN: String(DEMO.wakeUp.requestsPerOpen),
    PACING_OPEN_DELAY_MEDIAN_MS: String(DEMO.wakeUp.openDelayMedianMs),
    PACING_SESSION_MS: '3000',
    PACING_MIN_RATE: '1',
    PACING_MAX_RATE: '2000',
    PACING_METRICS_WINDOW_MS: '2000',
    PACING_METRICS_LAG_MS: '0'
  };
}
