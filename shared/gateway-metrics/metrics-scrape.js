// Gateway metrics from a direct scrape of the gateway's own Prometheus `/metrics`: no
// Prometheus server needed. Each read scrapes once; the window is the time since the
// previous good scrape, and every figure comes from the counters' growth over it:
//   quantiles from the bucket deltas (the histogram of just this window's requests),
//   rps = Δcount / Δt, errorRatio = Δerrors / Δrequests.
// That is what `histogram_quantile(q, sum(rate(x_bucket[w])) by (le))` computes too, with
// the window set by how often the governor reads.
import { createHttpGet } from './http-get.js';
import { parseExposition, readHistogram, readCounter, histogramQuantile } from './exposition.js';
import { unavailable, finiteOrNull, messageOf, positive } from './reading.js';

/** @typedef {import('./reading.js').GatewayMetricSource} GatewayMetricSource */
/** @typedef {import('./exposition.js').HistogramTotals} HistogramTotals */

/**
 * @typedef {object} MetricsScrapeOptions
 * @property {string} url               the gateway's metrics URL, e.g. http://gateway:9464/metrics
 * @property {string} [histogram]       latency histogram family (default 'http_request_duration_seconds')
 * @property {number} [latencyScaleMs]  ms per unit of its buckets (default 1000: seconds)
 * @property {string} [errorCounter]    counter for the error ratio (default `${histogram}_count`)
 * @property {Record<string, string>} [errorMatch]  label → regex that marks a failed request,
 *   anchored like PromQL's =~ (default { status: '5..' })
 * @property {number} [staleAfterMs]    a window whose last good scrape is older is stale (default 30000)
 * @property {number} [timeoutMs]       per scrape (default 5000)
 * @property {Record<string, string>} [headers]
 * @property {() => number} [now]       clock in ms; the windows' lengths are measured with it
 */

/**
 * @typedef {object} Scrape
 * @property {number} at
 * @property {HistogramTotals} latency
 * @property {{ total: number, matching: number }} errors
 */

/**
 * The figures of the window between two scrapes, or why there are none.
 * @param {Scrape} prev
 * @param {Scrape} cur
 * @param {number} latencyScaleMs
 * @returns {{ gateway: import('./reading.js').GatewayMeasurement } | { error: string }}
 */
export function windowBetween(prev, cur, latencyScaleMs) {
  const seconds = (cur.at - prev.at) / 1000;
  if (!(seconds > 0)) return { error: 'no time has passed since the previous scrape' };
  /** @type {Map<number, number>} */
  const deltas = new Map();
  for (const [le, count] of cur.latency.buckets) {
    const before = prev.latency.buckets.get(le);
    // A bucket that was not there before means a new layout, most likely a restart.
    if (before === undefined) return { error: 'counter reset: the histogram buckets changed; window skipped' };
    deltas.set(le, count - before);
  }
  const requests = cur.latency.count - prev.latency.count;
  const errorTotal = cur.errors.total - prev.errors.total;
  const errorMatching = cur.errors.matching - prev.errors.matching;
  // Counters only grow, so a drop means the gateway restarted (or one of its instances did)
  // and the window mixes two lives: skip it and start over from this scrape.
  if (requests < 0 || errorTotal < 0 || errorMatching < 0 || [...deltas.values()].some((d) => d < 0)) {
    return { error: 'counter reset: a counter went down (gateway restarted?); window skipped' };
  }
  const ms = (/** @type {number} */ q) => {
    const v = finiteOrNull(histogramQuantile(q, deltas));
    return v === null ? null : v * latencyScaleMs;
  };
  return {
    gateway: {
      p95Ms: ms(0.95),
      p99Ms: ms(0.99),
      errorRatio: errorTotal > 0 ? Math.min(1, errorMatching / errorTotal) : null,
      rps: requests / seconds
    }
  };
}

/**
 * A gateway metric source that scrapes the gateway's exposition text. The first read only
 * primes (it answers no gateway and says so); every later one answers the window since the
 * previous good scrape.
 * @param {MetricsScrapeOptions} options
 * @returns {GatewayMetricSource}
 */
export function createMetricsScrapeSource(options) {
  const url = new URL(options.url);
  const histogram = options.histogram ?? 'http_request_duration_seconds';
  const errorCounter = options.errorCounter ?? `${histogram}_count`;
  /** @type {Record<string, RegExp>} */
  const errorMatch = Object.fromEntries(Object.entries(options.errorMatch ?? { status: '5..' })
    .map(([label, pattern]) => [label, new RegExp(`^(?:${pattern})$`)]));
  const latencyScaleMs = positive('latencyScaleMs', options.latencyScaleMs ?? 1000);
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs ?? 30_000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 5000);
  const now = options.now ?? Date.now;
  const http = createHttpGet({ timeoutMs });
  /** @type {Scrape | null} the last good scrape: the start of the next window */
  let prev = null;

  /** @returns {Promise<Scrape>} */
  async function scrape() {
    const answer = await http.get(url, { accept: 'text/plain;version=0.0.4', ...options.headers });
    const at = now();
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status} from ${url.origin}${url.pathname}`);
    const samples = parseExposition(answer.body);
    return { at, latency: readHistogram(samples, histogram), errors: readCounter(samples, errorCounter, errorMatch) };
  }

  return {
    async read() {
      /** @type {Scrape} */
      let cur;
      try {
        cur = await scrape();
      } catch (err) {
        return unavailable(now() - (prev?.at ?? -Infinity), staleAfterMs, `scrape: ${messageOf(err)}`);
      }
      const start = prev;
      prev = cur;
      // A window reaching back past the staleness limit (scrapes failed in between) is an
      // average over too long a time to steer by: start a fresh one.
      if (start === null || cur.at - start.at > staleAfterMs) {
        return { gateway: null, stale: false, ageMs: 0, error: 'scrape: first scrape of a window; the next read has figures' };
      }
      const window = windowBetween(start, cur, latencyScaleMs);
      if ('error' in window) return { gateway: null, stale: false, ageMs: 0, error: `scrape: ${window.error}` };
      return { gateway: window.gateway, stale: false, ageMs: 0 };
    },
    async close() {
      http.close();
    }
  };
}
