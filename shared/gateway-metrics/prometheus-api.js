// Gateway metrics from a Prometheus server's HTTP API: four instant PromQL queries (p95 and
// p99 latency, error ratio, request rate) per read.
//
// Staleness: an instant query's value carries the timestamp it was evaluated at. A server
// that answers from a cache, a lagging replica or a skewed clock shows up there, and that is
// what `staleAfterMs` is checked against. Prometheus itself hides series whose last scrape
// is older than its lookback (5 min), which gives an empty vector (a null field) rather than
// an old value. For a tighter bound on scrape age, set `ageQuery` to a query answering the
// data's age in seconds, such as `time() - max(timestamp(http_request_duration_seconds_count))`.
import { createHttpGet } from './http-get.js';
import { unavailable, finiteOrNull, messageOf, positive } from './reading.js';

/** @typedef {import('./reading.js').GatewayReading} GatewayReading */
/** @typedef {import('./reading.js').GatewayMeasurement} GatewayMeasurement */
/** @typedef {import('./reading.js').GatewayMetricSource} GatewayMetricSource */

/**
 * @typedef {object} PrometheusQueries  PromQL for each field; latency queries answer seconds
 * @property {string} p95
 * @property {string} p99
 * @property {string} errorRatio
 * @property {string} rps
 */

/**
 * @typedef {object} PrometheusApiOptions
 * @property {string} url             base URL of the Prometheus server, e.g. http://prometheus:9090
 * @property {Partial<Omit<PrometheusQueries, 'rps'>> & { rps?: string | null }} [queries]  overrides of the
 *   default queries; `rps: null` asks for no request rate (the reading's rps is then null, and the
 *   controller reads the load off the latency)
 * @property {string} [range]         range of the default queries' rate() windows (default '1m')
 * @property {string} [metric]        histogram the default queries use (default 'http_request_duration_seconds')
 * @property {string} [selector]      label matchers the default queries add, e.g. `job="api"` (default none:
 *   every series of the histogram on the server, whichever job exposes it)
 * @property {string} [statusLabel]   the label holding the HTTP status in the default error query (default 'status')
 * @property {number} [latencyScaleMs]  ms per unit of the latency queries' answer (default 1000: seconds)
 * @property {string | null} [ageQuery]  optional query answering the data's age in seconds
 * @property {number} [staleAfterMs]  data older than this is stale (default 30000)
 * @property {number} [timeoutMs]     per request (default 5000)
 * @property {Record<string, string>} [headers]  e.g. an Authorization header
 * @property {() => number} [now]     clock in ms since the epoch, comparable with Prometheus timestamps
 */

/**
 * The default PromQL: one histogram family, optionally narrowed by label matchers, whose
 * `statusLabel` says a request failed (5xx).
 * @param {string} metric
 * @param {string} range
 * @param {{ selector?: string, statusLabel?: string }} [labels]
 * @returns {PrometheusQueries}
 */
export function defaultPrometheusQueries(metric = 'http_request_duration_seconds', range = '1m', { selector = '', statusLabel = 'status' } = {}) {
  const matchers = selector.trim().replace(/^\{([\s\S]*)\}$/, '$1').trim().replace(/,$/, '');
  const only = matchers ? `{${matchers}}` : '';
  const errors = `{${matchers ? `${matchers},` : ''}${statusLabel}=~"5.."}`;
  const quantile = (/** @type {number} */ q) => `histogram_quantile(${q}, sum(rate(${metric}_bucket${only}[${range}])) by (le))`;
  return {
    p95: quantile(0.95),
    p99: quantile(0.99),
    // `or vector(0)`: with no 5xx at all the numerator would be an empty vector, and the
    // ratio with it, which would read as "no data" instead of 0.
    errorRatio: `(sum(rate(${metric}_count${errors}[${range}])) or vector(0)) / sum(rate(${metric}_count${only}[${range}]))`,
    rps: `sum(rate(${metric}_count${only}[${range}]))`
  };
}

/**
 * Parses an instant-query answer into its first sample: the value (null for NaN, ±Inf or an
 * empty vector) and its timestamp in ms. Throws on anything that is not a Prometheus answer.
 * @param {string} body
 * @returns {{ value: number | null, atMs: number | null }}
 */
export function parseInstantQuery(body) {
  /** @type {any} */
  let answer;
  try {
    answer = JSON.parse(body);
  } catch {
    throw new Error(`answer is not JSON: ${JSON.stringify(body.slice(0, 60))}`);
  }
  if (answer?.status !== 'success') {
    throw new Error(`query failed: ${answer?.errorType ?? 'unknown'}: ${answer?.error ?? JSON.stringify(answer).slice(0, 100)}`);
  }
  const { resultType, result } = answer.data ?? {};
  if (resultType === 'scalar') return sample(result);
  if (resultType !== 'vector' || !Array.isArray(result)) {
    throw new Error(`expected a vector, got resultType ${JSON.stringify(resultType)}`);
  }
  if (result.length === 0) return { value: null, atMs: null };
  // A query that should have been aggregated (`sum(...)`) but was not answers one series per
  // label set; taking any one of them would be silently wrong.
  if (result.length > 1) throw new Error(`expected one series, got ${result.length}: aggregate the query with sum()`);
  return sample(result[0]?.value);
}

/** @param {unknown} pair  [unixSeconds, "value"] */
function sample(pair) {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number' || typeof pair[1] !== 'string') {
    throw new Error(`malformed sample ${JSON.stringify(pair)?.slice(0, 60)}`);
  }
  // Prometheus writes NaN and infinities as "NaN", "+Inf", "-Inf"; Number() reads all three.
  return { value: finiteOrNull(Number(pair[1])), atMs: pair[0] * 1000 };
}

/**
 * A gateway metric source over the Prometheus HTTP API (`GET /api/v1/query`).
 * @param {PrometheusApiOptions} options
 * @returns {GatewayMetricSource}
 */
export function createPrometheusApiSource(options) {
  const base = new URL(options.url);
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs ?? 30_000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 5000);
  const latencyScaleMs = positive('latencyScaleMs', options.latencyScaleMs ?? 1000);
  const queries = {
    ...defaultPrometheusQueries(options.metric, options.range, { selector: options.selector, statusLabel: options.statusLabel }),
    ...options.queries
  };
  const ageQuery = options.ageQuery ?? null;
  const now = options.now ?? Date.now;
  const http = createHttpGet({ timeoutMs });
  /** @type {number} when the data behind the last good reading was current */
  let lastGoodAt = -Infinity;

  /** @param {string} query */
  async function instant(query) {
    const url = new URL('api/v1/query', base.href.endsWith('/') ? base : `${base.href}/`);
    url.searchParams.set('query', query);
    const answer = await http.get(url, { accept: 'application/json', ...options.headers });
    // Prometheus answers errors (400 bad query, 422, 503) as JSON too; parse those for the
    // message. Anything else (a proxy's HTML page) is reported by status.
    if (answer.status !== 200 && !answer.contentType.includes('json')) {
      throw new Error(`HTTP ${answer.status} from ${url.origin}${url.pathname} (${answer.contentType || 'no content type'})`);
    }
    return parseInstantQuery(answer.body);
  }

  return {
    async read() {
      let results;
      try {
        results = await Promise.all([
          instant(queries.p95), instant(queries.p99), instant(queries.errorRatio),
          queries.rps === null ? Promise.resolve({ value: null, atMs: null }) : instant(queries.rps),
          ageQuery ? instant(ageQuery) : Promise.resolve(null)
        ]);
      } catch (err) {
        return unavailable(now() - lastGoodAt, staleAfterMs, `prometheus: ${messageOf(err)}`);
      }
      const [p95, p99, errorRatio, rps, age] = results;
      const fields = [p95, p99, errorRatio, rps];
      const stamps = fields.map((f) => f.atMs).filter((t) => t !== null);
      if (stamps.length === 0) {
        return unavailable(now() - lastGoodAt, staleAfterMs, 'prometheus: every query answered an empty vector');
      }
      // The oldest of the four decides: the reading is only as fresh as its stalest part.
      const dataAt = Math.min(...stamps) - (age?.value ?? 0) * 1000;
      const ageMs = Math.max(0, now() - dataAt);
      if (ageMs > staleAfterMs) return unavailable(ageMs, staleAfterMs);
      lastGoodAt = dataAt;
      /** @param {number | null} v */
      const ms = (v) => (v === null ? null : v * latencyScaleMs);
      return {
        gateway: { p95Ms: ms(p95.value), p99Ms: ms(p99.value), errorRatio: errorRatio.value, rps: rps.value },
        stale: false,
        ageMs
      };
    },
    async close() {
      http.close();
    }
  };
}
