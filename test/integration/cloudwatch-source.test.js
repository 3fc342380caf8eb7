// The cloudwatch gateway metric source through the real @aws-sdk/client-cloudwatch, against a
// local responder speaking CloudWatch's GetMetricData protocol (test/support/cloudwatch-responder.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startCloudWatchResponder } from '../support/cloudwatch-responder.js';
import { createCloudWatchSource } from '../../shared/gateway-metrics/cloudwatch.js';
import { createGatewayMetrics } from '../../shared/gateway-metrics/gateway-metrics.js';
import { gatewaySourceOptions } from '../../shared/governor/governor-process.js';
import { loadConfig } from '../../config/index.js';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const API = { ApiName: 'shop', Stage: 'prod' };
const MINUTE = 60_000;
// A period boundary, and "now" 95 s after it: the period that ended then is complete, the
// one in progress is not.
const BOUNDARY = 1_700_000_040_000 - (1_700_000_040_000 % MINUTE);
const NOW = BOUNDARY + 35_000;

/** @type {Awaited<ReturnType<typeof startCloudWatchResponder>>} */
let cw;
/** @type {{ close(): Promise<void> }[]} */
const sources = [];
before(async () => { cw = await startCloudWatchResponder(); });
after(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await cw.close();
});

/** @param {Partial<import('../../shared/gateway-metrics/cloudwatch.js').CloudWatchOptions>} [options] */
function source(options = {}) {
  const s = createCloudWatchSource({
    region: 'us-east-1', namespace: 'AWS/ApiGateway', dimensions: API, endpoint: cw.url, credentials, now: () => NOW, ...options
  });
  sources.push(s);
  return s;
}

/**
 * Puts one API Gateway period (by its start).
 * @param {number} atMs @param {{ p95?: number, p99?: number, count?: number, errors?: number }} values
 */
function putApiPeriod(atMs, { p95, p99, count, errors }) {
  const put = (/** @type {string} */ metric, /** @type {string} */ stat, /** @type {number | undefined} */ value) => {
    if (value !== undefined) cw.put({ namespace: 'AWS/ApiGateway', metric, dimensions: API, stat }, [{ atMs, value }]);
  };
  put('Latency', 'p95', p95);
  put('Latency', 'p99', p99);
  put('Count', 'Sum', count);
  put('5XXError', 'Sum', errors);
}

test('API Gateway: the newest complete period, its age, rps from Count and the 5xx share; the period in progress is not read', async () => {
  cw.clear();
  putApiPeriod(BOUNDARY - 2 * MINUTE, { p95: 180, p99: 400, count: 9000, errors: 9 });
  putApiPeriod(BOUNDARY - MINUTE, { p95: 240, p99: 610, count: 12_000, errors: 60 });
  // Data for the minute still running (a partial one CloudWatch would also show): never used.
  putApiPeriod(BOUNDARY, { p95: 999, p99: 999, count: 10, errors: 10 });
  const asked = cw.requests.length;
  const reading = await source().read();
  assert.deepEqual(reading, {
    gateway: { p95Ms: 240, p99Ms: 610, errorRatio: 60 / 12_000, rps: 12_000 / 60 },
    stale: false,
    ageMs: 35_000 // the period ended at BOUNDARY
  });
  const request = cw.requests[asked];
  assert.equal(request.EndTime * 1000, BOUNDARY, 'the query ends at the last period boundary');
  assert.ok(request.StartTime * 1000 < BOUNDARY - 4 * MINUTE, 'it looks back far enough for late periods');
  assert.deepEqual(request.MetricDataQueries.map((q) => [q.Id, q.MetricStat.Metric.MetricName, q.MetricStat.Stat, q.MetricStat.Period]),
    [['p95', 'Latency', 'p95', 60], ['p99', 'Latency', 'p99', 60], ['requests', 'Count', 'Sum', 60], ['errors', '5XXError', 'Sum', 60]]);
  assert.deepEqual(request.MetricDataQueries[0].MetricStat.Metric.Dimensions, [{ Name: 'ApiName', Value: 'shop' }, { Name: 'Stage', Value: 'prod' }]);
  assert.match(String(cw.headers.at(-1)?.authorization), /^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/us-east-1\/monitoring\/aws4_request/, 'signed as CloudWatch');
});

test('an HTTP API (ApiId) has its 5xx count as 5xx, not 5XXError', async () => {
  cw.clear();
  const api = { ApiId: 'a1b2c3d4e5', Stage: '$default' };
  const atMs = BOUNDARY - MINUTE;
  cw.put({ namespace: 'AWS/ApiGateway', metric: 'Latency', dimensions: api, stat: 'p95' }, [{ atMs, value: 90 }]);
  cw.put({ namespace: 'AWS/ApiGateway', metric: 'Count', dimensions: api, stat: 'Sum' }, [{ atMs, value: 600 }]);
  cw.put({ namespace: 'AWS/ApiGateway', metric: '5xx', dimensions: api, stat: 'Sum' }, [{ atMs, value: 30 }]);
  const reading = await source({ dimensions: api }).read();
  assert.deepEqual(reading.gateway, { p95Ms: 90, p99Ms: null, errorRatio: 0.05, rps: 10 });
});

test('CloudWatch running late: the newest period it has is read, and its age says how late', async () => {
  cw.clear();
  putApiPeriod(BOUNDARY - 3 * MINUTE, { p95: 200, p99: 300, count: 6000, errors: 0 });
  const reading = await source().read();
  assert.equal(reading.gateway?.p95Ms, 200);
  assert.equal(reading.ageMs, 2 * MINUTE + 35_000);
  assert.equal(reading.stale, false);
});

test('data older than staleAfterMs is stale; no data at all says what was asked for', async () => {
  cw.clear();
  putApiPeriod(BOUNDARY - 3 * MINUTE, { p95: 200, p99: 300, count: 6000, errors: 0 });
  const stale = await source({ staleAfterMs: 2 * MINUTE }).read();
  assert.deepEqual(stale, { gateway: null, stale: true, ageMs: 2 * MINUTE + 35_000 });
  cw.clear();
  const empty = await source().read();
  assert.equal(empty.gateway, null);
  assert.equal(empty.stale, true, 'never had data: stale');
  assert.match(String(empty.error), /^cloudwatch: no AWS\/ApiGateway datapoints for ApiName=shop,Stage=prod since /);
});

test('Application Load Balancer: TargetResponseTime in seconds read as ms; no 5xx series means none', async () => {
  cw.clear();
  const lb = { LoadBalancer: 'app/shop/50dc6c495c0c9188' };
  const atMs = BOUNDARY - MINUTE;
  cw.put({ namespace: 'AWS/ApplicationELB', metric: 'TargetResponseTime', dimensions: lb, stat: 'p95' }, [{ atMs, value: 0.35 }]);
  cw.put({ namespace: 'AWS/ApplicationELB', metric: 'TargetResponseTime', dimensions: lb, stat: 'p99' }, [{ atMs, value: 0.9 }]);
  cw.put({ namespace: 'AWS/ApplicationELB', metric: 'RequestCount', dimensions: lb, stat: 'Sum' }, [{ atMs, value: 3000 }]);
  const reading = await source({ namespace: 'AWS/ApplicationELB', dimensions: lb }).read();
  assert.deepEqual(reading.gateway, { p95Ms: 350, p99Ms: 900, errorRatio: 0, rps: 50 });
  assert.equal(cw.requests.at(-1)?.MetricDataQueries[3].MetricStat.Metric.MetricName, 'HTTPCode_Target_5XX_Count');
});

test('errors from CloudWatch and a server that never answers become an unavailable reading with the reason', async () => {
  cw.clear();
  putApiPeriod(BOUNDARY - MINUTE, { p95: 240, p99: 610, count: 12_000, errors: 0 });
  const s = source({ timeoutMs: 300 });
  assert.equal((await s.read()).gateway?.p95Ms, 240);
  cw.failNext('AccessDenied', 403);
  const denied = await s.read();
  assert.equal(denied.gateway, null);
  assert.equal(denied.stale, false, 'the last good period is still recent');
  assert.match(String(denied.error), /^cloudwatch: AccessDenied/);
  cw.hang(true);
  try {
    const started = performance.now();
    const hung = await s.read();
    assert.equal(hung.gateway, null);
    assert.match(String(hung.error), /^cloudwatch: /);
    assert.ok(performance.now() - started < 3000, 'the read gives up after its timeout');
  } finally {
    cw.hang(false);
  }
});

test('from the environment: GATEWAY_METRICS=cloudwatch with GATEWAY_METRICS_URL as the endpoint builds a working source', async () => {
  cw.clear();
  const now = Date.now();
  const periodStart = Math.floor(now / MINUTE) * MINUTE - 2 * MINUTE;
  putApiPeriod(periodStart, { p95: 120, p99: 250, count: 1200, errors: 12 });
  // The governor uses the SDK's credential chain; the responder only needs some.
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
  const config = loadConfig({ GATEWAY_METRICS: 'cloudwatch', CLOUDWATCH_DIMENSIONS: 'ApiName=shop,Stage=prod', GATEWAY_METRICS_URL: cw.url });
  const s = createGatewayMetrics(gatewaySourceOptions(config));
  sources.push(s);
  const reading = await s.read();
  assert.deepEqual(reading.gateway, { p95Ms: 120, p99Ms: 250, errorRatio: 0.01, rps: 20 });
  assert.ok(reading.ageMs >= MINUTE && reading.ageMs < 2 * MINUTE + 1000, `age ${reading.ageMs}`);
});
