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
  assert.deepEqual(scrape, { kind: 'metrics-scrape', url, histogram: 'gw_seconds' });
});
