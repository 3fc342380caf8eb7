// The demo gateways' Prometheus latency histogram, the one thing the governor's
// metrics-scrape source reads: `http_request_duration_seconds` per route and status, as a
// client library's HTTP middleware exports it. Both gateways (gateway.js, real-gateway.js)
// keep one.

/** Buckets in seconds: fine around the SLOs a demo uses, coarse beyond. */
export const LATENCY_BUCKETS = Object.freeze([0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25, 0.275, 0.3,
  0.325, 0.35, 0.375, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 1, 1.5, 2, 3, 5, 10]);

const NAME = 'http_request_duration_seconds';

/**
 * An empty histogram; `routes` are exported from the start with status 200 and zero counts,
 * as a client library does for label sets it knows: a scrape before the first request then
 * reads an empty histogram, not none.
 * @param {string[]} routes
 */
export function createLatencyHistogram(routes) {
  /** `route|status` → cumulative counts per le (the last slot is +Inf), sum, count */
  /** @type {Map<string, { route: string, status: number, buckets: Float64Array, sum: number, count: number }>} */
  const series = new Map();

  /** @param {string} route @param {number} status */
  function seriesOf(route, status) {
    const key = `${route}|${status}`;
    let s = series.get(key);
    if (!s) {
      s = { route, status, buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
      series.set(key, s);
    }
    return s;
  }
  for (const route of routes) seriesOf(route, 200);

  return {
    /**
     * One request answered.
     * @param {string} route
     * @param {number} status
     * @param {number} seconds  arrival to response end
     */
    observe(route, status, seconds) {
      const s = seriesOf(route, status);
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (seconds <= LATENCY_BUCKETS[i]) s.buckets[i]++;
      s.buckets[LATENCY_BUCKETS.length]++;
      s.sum += seconds;
      s.count++;
    },

    /** The Prometheus text exposition. */
    exposition() {
      const lines = [`# HELP ${NAME} API request latency, arrival to response end.`, `# TYPE ${NAME} histogram`];
      const sorted = [...series.values()].sort((a, b) => a.route.localeCompare(b.route) || a.status - b.status);
      for (const s of sorted) {
        const labels = `route="${s.route}",status="${s.status}"`;
        LATENCY_BUCKETS.forEach((le, i) => lines.push(`${NAME}_bucket{${labels},le="${le}"} ${s.buckets[i]}`));
        lines.push(`${NAME}_bucket{${labels},le="+Inf"} ${s.buckets[LATENCY_BUCKETS.length]}`);
        lines.push(`${NAME}_sum{${labels}} ${s.sum}`, `${NAME}_count{${labels}} ${s.count}`);
      }
      return lines.join('\n') + '\n';
    }
  };
}

/**
 * Answers a small body with its length set (keep-alive needs it).
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} body
 * @param {string} [type]
 * @param {() => void} [done]  called once the response has been handed to the socket
 */
export function answer(res, status, body, type = 'application/json', done) {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body, done);
}
