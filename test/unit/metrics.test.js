// The metrics module without servers: the strict format check rejects what Prometheus
// would, a registry's output passes it, controller decisions become gauges and a
// governor series point, readiness checks time out instead of hanging, and the Grafana
// dashboard and the docs stay in step with the metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMetricsRegistry, bucketMetrics, campaignMetrics, controllerMetrics, dependencyMetrics, eventMetrics, exposition, queueMetrics, schedulerMetrics, sendMetrics } from '../../shared/metrics/registry.js';
import { observeController } from '../../shared/metrics/controller-metrics.js';
import { createReadiness } from '../../shared/metrics/readiness.js';
import { validateExposition, sampleValue } from '../support/exposition-format.js';

test('the format check rejects what a Prometheus server would', () => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 2\n';
  assert.equal(validateExposition(ok).get('a_total')?.type, 'counter');
  const bad = {
    'no final line feed': 'a 1',
    'a malformed sample': 'a{x=1} 2\n',
    'a duplicate series': 'a{x="1"} 1\na{x="1"} 2\n',
    'a family split in two': 'a 1\nb 1\na{x="2"} 1\n',
    'TYPE after samples': 'a 1\n# TYPE a gauge\n',
    'an unknown type': '# TYPE a meter\na 1\n',
    'a negative counter': '# TYPE a_total counter\na_total -1\n',
    'a histogram without +Inf': '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
    'a histogram whose count is not its +Inf bucket': '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n',
    'buckets that are not cumulative': '# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="2"} 2\nh_bucket{le="+Inf"} 3\nh_sum 1\nh_count 3\n',
    'a reserved label name': 'a{__name__="x"} 1\n'
  };
  for (const [what, text] of Object.entries(bad)) assert.throws(() => validateExposition(text), Error, what);
});

test('a registry with every send series passes the check', async () => {
  const registry = createMetricsRegistry('worker');
  const { sends, publishDuration } = sendMetrics(registry);
  sends.inc({ kind: 'campaign', outcome: 'delivered' }, 3);
  publishDuration.observe({ kind: 'campaign' }, 0.02);
  publishDuration.observe({ kind: 'campaign' }, 7);
  const families = validateExposition(exposition(await registry.metrics()));
  assert.equal(families.get('pushpace_sns_publish_duration_seconds')?.type, 'histogram');
  assert.equal(sampleValue(families, 'pushpace_sns_publish_duration_seconds_count', { kind: 'campaign' }), 2);
  assert.equal(sampleValue(families, 'pushpace_process_info', { process_type: 'worker' }), 1);
  assert.ok(families.has('nodejs_eventloop_lag_seconds'), 'Node.js process metrics are included');
});

test('controller decisions become gauges and a governor series point', async () => {
  const registry = createMetricsRegistry('governor');
  /** @type {any[]} */
  const points = [];
  const controller = observeController({
    update: () => ({ rate: 120, reason: /** @type {const} */ ('plan') }),
    snapshot: () => ({ capacity: 900, capacityTrial: 450, baseline: 300, requestsPerSend: 1.5, maxUnitLoad: 200, planned: 130 })
  }, { registry, sloMs: 400, series: { appendGovernor: async (point) => { points.push(point); } } });
  const before = validateExposition(exposition(await registry.metrics()));
  assert.ok(Number.isNaN(sampleValue(before, 'pushpace_controller_rate_per_second')), 'no decision yet: NaN, not 0');

  assert.deepEqual(controller.update({ now: 0, sent: 5, gateway: { p95Ms: 250, p99Ms: 400, errorRatio: 0.001, rps: 700 }, remaining: 4321 }), { rate: 120, reason: 'plan' });
  const families = validateExposition(exposition(await registry.metrics()));
  assert.equal(sampleValue(families, 'pushpace_controller_remaining_devices'), 4321);
  assert.equal(sampleValue(families, 'pushpace_controller_rate_per_second'), 120);
  assert.equal(sampleValue(families, 'pushpace_controller_capacity_requests_per_second'), 900);
  assert.equal(sampleValue(families, 'pushpace_controller_capacity_trial_requests_per_second'), 450);
  assert.equal(sampleValue(families, 'pushpace_controller_predicted_load_requests_per_second'), 600);
  assert.equal(sampleValue(families, 'pushpace_controller_reason', { reason: 'plan' }), 1);
  assert.equal(sampleValue(families, 'pushpace_controller_reason', { reason: 'stale' }), 0);
  assert.equal(sampleValue(families, 'pushpace_gateway_latency_p95_seconds'), 0.25);
  assert.equal(sampleValue(families, 'pushpace_gateway_slo_p95_seconds'), 0.4);
  assert.deepEqual(points, [{ p95Ms: 250, sloMs: 400, rate: 120, reason: 'plan' }]);
  controller.update({ now: 10_000, sent: 0, gateway: null });
  const unknown = validateExposition(exposition(await registry.metrics()));
  assert.ok(Number.isNaN(sampleValue(unknown, 'pushpace_controller_remaining_devices')), 'remaining unknown: NaN, not 0');
  assert.equal(typeof controllerMetrics(registry).watchLeadership, 'function');
});

test('a readiness check that hangs fails after its timeout, and one stuck probe is not joined by more', async () => {
  let probes = 0;
  const readiness = createReadiness([
    { name: 'hangs', timeoutMs: 50, cacheMs: 0, check: () => { probes++; return new Promise(() => {}); } },
    { name: 'fine', check: async () => {} }
  ]);
  const first = await readiness.evaluate();
  assert.equal(first.ok, false);
  assert.deepEqual(first.checks.map((c) => [c.name, c.ok]), [['hangs', false], ['fine', true]]);
  assert.match(String(first.checks[0].error), /no answer within 50 ms/);
  await sleep(5);
  await readiness.evaluate();
  assert.equal(probes, 1);
});

test('the Grafana dashboard and docs/observability.md name only metrics that exist, and the docs list them all', async () => {
  const registry = createMetricsRegistry('any');
  for (const group of [sendMetrics, bucketMetrics, queueMetrics, campaignMetrics, eventMetrics, schedulerMetrics, controllerMetrics, dependencyMetrics]) group(registry);
  const defined = new Set(registry.getMetricsAsArray().map((m) => m.name).filter((name) => name.startsWith('pushpace_')));
  const root = new URL('../../', import.meta.url);
  const grafana = readFileSync(new URL('docs/grafana-dashboard.json', root), 'utf8');
  const docs = readFileSync(new URL('docs/observability.md', root), 'utf8');
  const named = (/** @type {string} */ text) => new Set([...text.matchAll(/pushpace_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, '')));
  for (const name of named(grafana)) assert.ok(defined.has(name), `the dashboard uses ${name}, which no process exports`);
  for (const name of named(docs)) assert.ok(defined.has(name), `docs/observability.md names ${name}, which no process exports`);
  for (const name of defined) assert.ok(docs.includes(name), `docs/observability.md does not describe ${name}`);
  JSON.parse(grafana);
});
