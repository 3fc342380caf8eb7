// The three gateway metric sources against real local HTTP servers: a Prometheus API, a
// gateway's /metrics exposition, and a probe target. Values, malformed answers, staleness.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPrometheusApiSource, defaultPrometheusQueries } from '../../shared/gateway-metrics/prometheus-api.js';
import { createMetricsScrapeSource } from '../../shared/gateway-metrics/metrics-scrape.js';
import { createActiveProbeSource } from '../../shared/gateway-metrics/active-probe.js';
import { createGatewayMetrics } from '../../shared/gateway-metrics/gateway-metrics.js';
import { histogramQuantile } from '../../shared/gateway-metrics/exposition.js';

/** @typedef {(req: http.IncomingMessage, res: http.ServerResponse) => void} Handler */
/** @type {http.Server[]} */
const servers = [];
/** @type {{ close(): Promise<void> }[]} */
const sources = [];
after(async () => {
  await Promise.all(sources.map((s) => s.close()));
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

/**
 * A server on port 0 whose behaviour the test changes by assigning `box.handler`.
 * @param {Handler} handler
 */
async function serve(handler) {
  const box = { handler };
  const server = http.createServer((req, res) => box.handler(req, res));
  servers.push(server);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}`, box };
}

/** @template {{ close(): Promise<void> }} S @param {S} source @returns {S} */
function track(source) {
  sources.push(source);
  return source;
}

/** @param {http.ServerResponse} res @param {number} status @param {string} type @param {string} body */
function reply(res, status, type, body) {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

/** Never answers: the server "stops answering". */
const hang = () => {};

// ---------------------------------------------------------------- Prometheus HTTP API

const T = 1_700_000_000_000;

/**
 * A Prometheus API answering each default query with `values[field]` stamped `atMs`.
 * @param {{ p95: string | null, p99: string | null, errorRatio: string | null, rps: string | null }} values
 * @param {number} atMs
 * @param {string[]} [seen]  queries received
 * @param {import('../../shared/gateway-metrics/prometheus-api.js').PrometheusQueries} [queries]  the queries it knows
 * @returns {Handler}
 */
function prometheus(values, atMs, seen = [], queries = defaultPrometheusQueries()) {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const query = url.searchParams.get('query') ?? '';
    seen.push(`${url.pathname} ${query}`);
    const field = /** @type {(keyof typeof values)[]} */ (Object.keys(queries)).find((k) => queries[k] === query);
    const value = field ? values[field] : null;
    const result = value === null ? [] : [{ metric: {}, value: [atMs / 1000, value] }];
    reply(res, 200, 'application/json', JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  };
}

test('prometheus-api: reads the four queries, seconds to ms, with the sample age', async () => {
  /** @type {string[]} */
  const seen = [];
  const { url } = await serve(prometheus({ p95: '0.25', p99: '0.6', errorRatio: '0.01', rps: '1234.5' }, T - 2000, seen));
  const source = track(createPrometheusApiSource({ url, now: () => T }));
  const reading = await source.read();
  assert.deepEqual(reading, { gateway: { p95Ms: 250, p99Ms: 600, errorRatio: 0.01, rps: 1234.5 }, stale: false, ageMs: 2000 });
  assert.equal(seen.length, 4);
  assert.ok(seen.includes('/api/v1/query histogram_quantile(0.95, sum(rate(http_request_duration_seconds_bucket[1m])) by (le))'));
});

test('prometheus-api: a label selector, another status label and a histogram in ms (one job of many on the server)', async () => {
  /** @type {string[]} */
  const seen = [];
  // The server knows only the narrowed queries: the unnarrowed ones (every job summed) answer nothing.
  const narrowed = defaultPrometheusQueries('api_latency_ms', '30s', { selector: 'job="api",route!="/healthz"', statusLabel: 'code' });
  const { url } = await serve(prometheus({ p95: '250', p99: '600', errorRatio: '0.02', rps: '80' }, T - 1000, seen, narrowed));
  const source = track(createPrometheusApiSource({
    url, now: () => T, metric: 'api_latency_ms', range: '30s', selector: '{job="api",route!="/healthz"}', statusLabel: 'code', latencyScaleMs: 1
  }));
  assert.deepEqual(await source.read(), { gateway: { p95Ms: 250, p99Ms: 600, errorRatio: 0.02, rps: 80 }, stale: false, ageMs: 1000 });
  assert.ok(seen.includes('/api/v1/query (sum(rate(api_latency_ms_count{job="api",route!="/healthz",code=~"5.."}[30s])) or vector(0)) / sum(rate(api_latency_ms_count{job="api",route!="/healthz"}[30s]))'), seen.join('\n'));
  assert.ok(seen.includes('/api/v1/query histogram_quantile(0.95, sum(rate(api_latency_ms_bucket{job="api",route!="/healthz"}[30s])) by (le))'));
});

test('prometheus-api: queries.rps null asks for no request rate (a latency-only source)', async () => {
  /** @type {string[]} */
  const seen = [];
  const { url } = await serve(prometheus({ p95: '0.25', p99: '0.6', errorRatio: '0.01', rps: '1234.5' }, T - 2000, seen));
  const source = track(createPrometheusApiSource({ url, now: () => T, queries: { rps: null } }));
  const reading = await source.read();
  assert.deepEqual(reading, { gateway: { p95Ms: 250, p99Ms: 600, errorRatio: 0.01, rps: null }, stale: false, ageMs: 2000 });
  assert.equal(seen.length, 3);
});

test('prometheus-api: NaN and an empty vector make that field null', async () => {
  const { url } = await serve(prometheus({ p95: 'NaN', p99: null, errorRatio: '0', rps: '0' }, T));
  const source = track(createPrometheusApiSource({ url, now: () => T }));
  const reading = await source.read();
  assert.deepEqual(reading.gateway, { p95Ms: null, p99Ms: null, errorRatio: 0, rps: 0 });
  assert.equal(reading.stale, false);

  // Nothing at all (a wrong metric name, or Prometheus lost the target): no data, no throw.
  const { url: emptyUrl } = await serve(prometheus({ p95: null, p99: null, errorRatio: null, rps: null }, T));
  const empty = await track(createPrometheusApiSource({ url: emptyUrl, now: () => T })).read();
  assert.equal(empty.gateway, null);
  assert.match(empty.error ?? '', /empty vector/);
});

test('prometheus-api: bad JSON, an HTML error page and a query error are reported, not thrown', async () => {
  const { url, box } = await serve((req, res) => reply(res, 200, 'application/json', '{"status":"succ'));
  const source = track(createPrometheusApiSource({ url, now: () => T }));
  let reading = await source.read();
  assert.equal(reading.gateway, null);
  assert.match(reading.error ?? '', /not JSON/);

  box.handler = (req, res) => reply(res, 502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>');
  reading = await source.read();
  assert.equal(reading.gateway, null);
  assert.match(reading.error ?? '', /HTTP 502/);

  box.handler = (req, res) => reply(res, 400, 'application/json', JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }));
  reading = await source.read();
  assert.equal(reading.gateway, null);
  assert.match(reading.error ?? '', /bad_data: parse error/);

  box.handler = (req, res) => reply(res, 200, 'application/json', JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ value: 'x' }] } }));
  reading = await source.read();
  assert.equal(reading.gateway, null);
  assert.match(reading.error ?? '', /malformed sample/);
  // Never had good data: as stale as it gets.
  assert.equal(reading.stale, true);
  assert.equal(reading.ageMs, Infinity);
});

test('prometheus-api: an old sample timestamp is stale', async () => {
  const { url } = await serve(prometheus({ p95: '0.25', p99: '0.6', errorRatio: '0.01', rps: '100' }, T - 60_000));
  const source = track(createPrometheusApiSource({ url, now: () => T, staleAfterMs: 30_000 }));
  const reading = await source.read();
  assert.deepEqual(reading, { gateway: null, stale: true, ageMs: 60_000 });
});

test('prometheus-api: a server that stops answering times out, then goes stale', async () => {
  let clock = T;
  const { url, box } = await serve(prometheus({ p95: '0.25', p99: '0.6', errorRatio: '0.01', rps: '100' }, T));
  const source = track(createPrometheusApiSource({ url, now: () => clock, staleAfterMs: 30_000, timeoutMs: 150 }));
  assert.equal((await source.read()).stale, false);

  box.handler = hang;
  clock = T + 5000;
  let reading = await source.read();
  assert.equal(reading.gateway, null);
  assert.equal(reading.stale, false);
  assert.match(reading.error ?? '', /timed out after 150 ms/);

  clock = T + 40_000;
  reading = await source.read();
  assert.deepEqual([reading.gateway, reading.stale, reading.ageMs], [null, true, 40_000]);
});

// ---------------------------------------------------------------- /metrics scrape

const BOUNDS = ['0.1', '0.25', '0.5', '1', '+Inf'];

/**
 * Exposition text of a gateway with one histogram per status, cumulative bucket counts.
 * @param {Record<string, number[]>} byStatus  status → cumulative counts per BOUNDS
 */
function exposition(byStatus) {
  const lines = [
    '# HELP process_cpu_seconds_total CPU time.',
    '# TYPE process_cpu_seconds_total counter',
    'process_cpu_seconds_total 12.5',
    '# HELP http_request_duration_seconds Request latency.',
    '# TYPE http_request_duration_seconds histogram'
  ];
  for (const [status, counts] of Object.entries(byStatus)) {
    counts.forEach((c, i) => lines.push(`http_request_duration_seconds_bucket{route="/a\\"b",status="${status}",le="${BOUNDS[i]}"} ${c}`));
    lines.push(`http_request_duration_seconds_sum{route="/a\\"b",status="${status}"} ${counts[4] * 0.1}`);
    lines.push(`http_request_duration_seconds_count{route="/a\\"b",status="${status}"} ${counts[4]} 1700000000000`);
  }
  lines.push('http_requests_in_flight NaN', '');
  return lines.join('\n');
}

/** @param {number[]} a @param {number[]} b */
const plus = (a, b) => a.map((x, i) => x + b[i]);

// The window's requests, cumulative per bucket: 200s (50 ≤ 0.1 s, 28 in (0.1, 0.25], 14 in
// (0.25, 0.5], 1 in (0.5, 1], 1 over) and 500s. Together: 50, 80, 96, 98, 100 of 100.
const DELTA_200 = [50, 78, 92, 93, 94];
const DELTA_500 = [0, 2, 4, 5, 6];
const BASE_200 = [1000, 1500, 1800, 1900, 2000];
const BASE_500 = [10, 20, 30, 40, 50];

test('metrics-scrape: quantiles from bucket deltas match the hand-computed values', async () => {
  let clock = T;
  const { url, box } = await serve((req, res) => reply(res, 200, 'text/plain; version=0.0.4', exposition({ 200: BASE_200, 500: BASE_500 })));
  const source = track(createMetricsScrapeSource({ url: `${url}/metrics`, now: () => clock }));
  const first = await source.read();
  assert.equal(first.gateway, null);
  assert.equal(first.stale, false);
  assert.match(first.error ?? '', /first scrape/);

  box.handler = (req, res) => reply(res, 200, 'text/plain', exposition({ 200: plus(BASE_200, DELTA_200), 500: plus(BASE_500, DELTA_500) }));
  clock += 10_000;
  const reading = await source.read();
  // p95: rank 95 of 100 falls in (0.25, 0.5], which holds ranks 81..96: 0.25 + 0.25 × (95 − 80) / 16.
  // p99: rank 99 falls in the +Inf bucket, so the highest finite bound, 1 s (as Prometheus).
  assert.deepEqual(reading, {
    gateway: { p95Ms: (0.25 + 0.25 * 15 / 16) * 1000, p99Ms: 1000, errorRatio: 6 / 100, rps: 100 / 10 },
    stale: false,
    ageMs: 0
  });
});

test('histogramQuantile: interpolates within the bucket, from 0 in the lowest', () => {
  const buckets = new Map([[0.1, 50], [0.25, 80], [0.5, 96], [1, 98], [Infinity, 100]]);
  assert.equal(histogramQuantile(0.5, buckets), 0.1);
  assert.equal(histogramQuantile(0.25, buckets), 0.05);
  assert.equal(histogramQuantile(0.9, buckets), 0.25 + 0.25 * 10 / 16);
  assert.ok(Number.isNaN(histogramQuantile(0.95, new Map([[0.1, 0], [Infinity, 0]]))));
});

test('metrics-scrape: a counter reset skips that window, the next one is good', async () => {
  let clock = T;
  let counts = { 200: BASE_200, 500: BASE_500 };
  const { url } = await serve((req, res) => reply(res, 200, 'text/plain', exposition(counts)));
  const source = track(createMetricsScrapeSource({ url, now: () => clock }));
  await source.read();

  // The gateway restarted: its counters start again from the window's own counts.
  counts = { 200: [5, 5, 5, 5, 5], 500: [0, 0, 0, 0, 0] };
  clock += 10_000;
  const reset = await source.read();
  assert.equal(reset.gateway, null);
  assert.equal(reset.stale, false);
  assert.match(reset.error ?? '', /counter reset/);

  counts = { 200: plus([5, 5, 5, 5, 5], DELTA_200), 500: DELTA_500 };
  clock += 5000;
  const next = await source.read();
  assert.deepEqual(next.gateway, { p95Ms: (0.25 + 0.25 * 15 / 16) * 1000, p99Ms: 1000, errorRatio: 0.06, rps: 20 });
});

test('metrics-scrape: garbage lines, missing buckets and HTML are reported, not thrown', async () => {
  let clock = T;
  const good = exposition({ 200: BASE_200, 500: BASE_500 });
  const { url, box } = await serve((req, res) => reply(res, 200, 'text/plain', good));
  const source = track(createMetricsScrapeSource({ url, now: () => clock }));
  await source.read();

  /** @type {[string, number, string, RegExp][]} */
  const cases = [
    ['a garbage line', 200, good.replace('process_cpu_seconds_total 12.5', 'process_cpu_seconds_total twelve'), /line 3: "twelve" is not a number/],
    ['an unterminated label', 200, good.replace('status="200",le="0.1"', 'status="200,le="0.1"'), /malformed labels|not a number/],
    ['binary noise', 200, '\u0000\u0001 }{ ==', /line 1 is not a sample/],
    ['no +Inf bucket', 200, good.split('\n').filter((l) => !l.includes('le="+Inf"')).join('\n'), /no le="\+Inf" bucket/],
    ['no buckets at all', 200, good.split('\n').filter((l) => !l.includes('_bucket')).join('\n'), /no http_request_duration_seconds_bucket samples/],
    ['an HTML page', 200, '<html><body>Application error</body></html>', /line 1 is not a sample/],
    ['an HTTP error', 503, '<html>503 Service Unavailable</html>', /HTTP 503/]
  ];
  for (const [name, status, body, error] of cases) {
    box.handler = (req, res) => reply(res, status, 'text/html', body);
    clock += 1000;
    const reading = await source.read();
    assert.equal(reading.gateway, null, name);
    assert.equal(reading.stale, false, name);
    assert.match(reading.error ?? '', error, name);
  }
});

test('metrics-scrape: a gateway that stops answering goes stale', async () => {
  let clock = T;
  const { url, box } = await serve((req, res) => reply(res, 200, 'text/plain', exposition({ 200: BASE_200, 500: BASE_500 })));
  const source = track(createMetricsScrapeSource({ url, now: () => clock, staleAfterMs: 30_000, timeoutMs: 150 }));
  await source.read();
  box.handler = hang;
  clock += 31_000;
  const reading = await source.read();
  assert.deepEqual([reading.gateway, reading.stale, reading.ageMs], [null, true, 31_000]);
  assert.match(reading.error ?? '', /timed out/);

  // Answering again after a stale gap: the first scrape starts a new window, not one 40 s long.
  box.handler = (req, res) => reply(res, 200, 'text/plain', exposition({ 200: plus(BASE_200, DELTA_200), 500: plus(BASE_500, DELTA_500) }));
  clock += 9000;
  const back = await source.read();
  assert.equal(back.gateway, null);
  assert.match(back.error ?? '', /first scrape/);
});

// ---------------------------------------------------------------- active probe

test('active-probe: latency quantiles and error ratio; no request rate, since the probe cannot see the gateway\'s', async () => {
  let n = 0;
  const { url } = await serve((req, res) => {
    const status = n++ % 2 === 0 ? 200 : 503;
    setTimeout(() => reply(res, status, 'text/plain', 'ok'), 20);
  });
  const source = track(createActiveProbeSource({ url, intervalMs: 25, timeoutMs: 1000, windowMs: 2000 }));
  await sleep(500);
  const reading = await source.read();
  assert.equal(reading.stale, false);
  const g = /** @type {NonNullable<typeof reading.gateway>} */ (reading.gateway);
  assert.ok(g.p95Ms !== null && g.p95Ms >= 20 && g.p95Ms < 400, `p95 ${g.p95Ms}`);
  assert.ok(g.p99Ms !== null && g.p99Ms >= g.p95Ms, `p99 ${g.p99Ms}`);
  assert.ok(g.errorRatio !== null && Math.abs(g.errorRatio - 0.5) <= 0.1, `errorRatio ${g.errorRatio}`);
  // Its own probes are not the gateway's load: a controller that read them so once planned 746/s.
  assert.equal(g.rps, null);
  // One probe every 25 ms over 500 ms: about 20 results behind the answer.
  assert.ok(reading.probes !== undefined && reading.probes >= 10 && reading.probes <= 21, `probes ${reading.probes}`);
});

test('active-probe: a target that hangs gives timeouts, errors, and bounded concurrency', async () => {
  let open = 0;
  let maxOpen = 0;
  const { url } = await serve((req) => {
    maxOpen = Math.max(maxOpen, ++open);
    req.socket.on('close', () => open--);
  });
  const source = track(createActiveProbeSource({ url, intervalMs: 20, timeoutMs: 100, concurrency: 2 }));
  await sleep(450);
  const reading = await source.read();
  assert.equal(reading.stale, false);
  assert.deepEqual(reading.gateway && [reading.gateway.errorRatio, reading.gateway.p95Ms], [1, 100]);
  assert.ok(maxOpen <= 2, `at most 2 probes at once, saw ${maxOpen}`);
});

test('active-probe: no new results for longer than staleAfterMs is stale', async () => {
  let clock = T;
  const { url } = await serve((req, res) => reply(res, 200, 'text/plain', 'ok'));
  const source = track(createActiveProbeSource({ url, intervalMs: 20, timeoutMs: 200, staleAfterMs: 5000, now: () => clock }));
  await sleep(100);
  assert.equal((await source.read()).stale, false);
  await source.close();
  clock += 6000;
  const reading = await source.read();
  assert.deepEqual([reading.gateway, reading.stale], [null, true]);
});

// ---------------------------------------------------------------- factory

test('createGatewayMetrics: chooses by kind, rejects an unknown one', async () => {
  const { url } = await serve((req, res) => reply(res, 200, 'text/plain', exposition({ 200: BASE_200 })));
  const source = track(createGatewayMetrics({ kind: 'metrics-scrape', url }));
  assert.match((await source.read()).error ?? '', /first scrape/);
  assert.throws(() => createGatewayMetrics(/** @type {any} */ ({ kind: 'statsd', url })), { code: 'PUSH_ERR_INPUT' });
});
