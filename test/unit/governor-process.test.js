import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/index.js';
import { gatewaySourceOptions, gatewaySample } from '../../shared/governor/governor-process.js';

const url = 'http://127.0.0.1:9090';

test('each metric source reads over the controller\'s window (Prometheus: never under two 15-s scrapes)', () => {
  const config = (/** @type {Record<string, string>} */ env) => loadConfig({ GATEWAY_METRICS_URL: url, ...env });
  assert.deepEqual(gatewaySourceOptions(config({ GATEWAY_METRICS: 'active-probe', PACING_METRICS_WINDOW_MS: '4000' })),
    { kind: 'active-probe', url, windowMs: 4000, intervalMs: 200 });
  assert.equal(/** @type {any} */ (gatewaySourceOptions(config({ GATEWAY_METRICS: 'active-probe' }))).intervalMs, 500);
  assert.equal(/** @type {any} */ (gatewaySourceOptions(config({ GATEWAY_METRICS: 'prometheus-api' }))).range, '30s');
  assert.equal(/** @type {any} */ (gatewaySourceOptions(config({ GATEWAY_METRICS: 'prometheus-api', PACING_METRICS_WINDOW_MS: '60000' }))).range, '60s');
  const scrape = gatewaySourceOptions(config({ GATEWAY_METRICS: 'metrics-scrape', GATEWAY_HISTOGRAM: 'gw_seconds' }));
  assert.deepEqual(scrape, { kind: 'metrics-scrape', url, histogram: 'gw_seconds', latencyScaleMs: 1000, errorMatch: { status: '5..' } });
});

test('GATEWAY_PROMETHEUS_SELECTOR, GATEWAY_STATUS_LABEL and GATEWAY_HISTOGRAM_UNIT reach the Prometheus and scrape sources', () => {
  const env = { GATEWAY_METRICS_URL: url, GATEWAY_PROMETHEUS_SELECTOR: 'job="api"', GATEWAY_STATUS_LABEL: 'code', GATEWAY_HISTOGRAM_UNIT: 'milliseconds' };
  const prometheus = /** @type {any} */ (gatewaySourceOptions(loadConfig({ ...env, GATEWAY_METRICS: 'prometheus-api' })));
  assert.deepEqual([prometheus.selector, prometheus.statusLabel, prometheus.latencyScaleMs], ['job="api"', 'code', 1]);
  const scrape = /** @type {any} */ (gatewaySourceOptions(loadConfig({ ...env, GATEWAY_METRICS: 'metrics-scrape' })));
  assert.deepEqual([scrape.errorMatch, scrape.latencyScaleMs], [{ code: '5..' }, 1]);
});

test('cloudwatch: its options come from CLOUDWATCH_* and AWS_REGION; GATEWAY_METRICS_URL, when set, is the endpoint', () => {
  const env = { GATEWAY_METRICS: 'cloudwatch', AWS_REGION: 'eu-west-1', CLOUDWATCH_NAMESPACE: 'AWS/ApplicationELB', CLOUDWATCH_DIMENSIONS: 'LoadBalancer=app/shop/50dc6c495c0c9188' };
  assert.deepEqual(gatewaySourceOptions(loadConfig(env)), {
    kind: 'cloudwatch', region: 'eu-west-1', namespace: 'AWS/ApplicationELB', dimensions: { LoadBalancer: 'app/shop/50dc6c495c0c9188' }, periodSeconds: 60
  });
  assert.equal(/** @type {any} */ (gatewaySourceOptions(loadConfig({ ...env, GATEWAY_METRICS_URL: url }))).endpoint, url);
});

test('a reading older than PACING_METRICS_LAG_MS plus a window is used, and the governor says to raise the lag', () => {
  /** @type {Array<[Record<string, unknown>, string]>} */
  const warnings = [];
  const logger = { warn: (/** @type {any} */ fields, /** @type {string} */ message) => { warnings.push([fields, message]); } };
  const context = { kind: 'cloudwatch', requestRate: /** @type {const} */ ('measured'), metricsLagMs: 120_000, metricsWindowMs: 60_000, logger };
  const gateway = { p95Ms: 240, p99Ms: null, errorRatio: null, rps: 200 };
  assert.deepEqual(gatewaySample({ gateway, stale: false, ageMs: 180_000 }, context), { p95Ms: 240, p99Ms: 240, errorRatio: 0, rps: 200 });
  assert.equal(warnings.length, 0, 'within the lag and one window: no warning');
  assert.deepEqual(gatewaySample({ gateway, stale: false, ageMs: 180_001 }, context), { p95Ms: 240, p99Ms: 240, errorRatio: 0, rps: 200 });
  assert.equal(warnings.length, 1);
  assert.deepEqual(warnings[0], [{ source: 'cloudwatch', ageMs: 180_001, metricsLagMs: 120_000 }, 'gateway metrics older than PACING_METRICS_LAG_MS allows for; raise it']);
  assert.equal(gatewaySample({ gateway: null, stale: true, ageMs: 400_000, error: 'cloudwatch: AccessDenied' }, context), null);
  assert.equal(warnings.at(-1)?.[1], 'gateway metrics unreadable');
  assert.equal(gatewaySample({ gateway, stale: false, ageMs: 0 }, { ...context, requestRate: 'none' })?.rps, null);
});
