import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/index.js';
import { gatewaySourceOptions } from '../../shared/governor/governor-process.js';

const url = 'http://127.0.0.1:9090';

test('each metric source reads over the controller\'s window (Prometheus: never under two 15-s scrapes)', () => {
  const config = (/** @type {Record<string, string>} */ env) => loadConfig({ GATEWAY_METRICS_URL: url, ...env });
  assert.deepEqual(gatewaySourceOptions(config({ GATEWAY_METRICS: 'active-probe', PACING_METRICS_WINDOW_MS: '4000' })),
    { kind: 'active-probe', url, windowMs: 4000, intervalMs: 800 });
  assert.equal(/** @type {any} */ (gatewaySourceOptions(config({ GATEWAY_METRICS: 'active-probe' }))).intervalMs, 1000);
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
