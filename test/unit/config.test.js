import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, DEFAULTS } from '../../config/index.js';
import { redactUrl } from '../../shared/redact-url.js';
import { CONTROLLER_DEFAULTS, resolveControllerOptions } from '../../shared/pacing/controller-options.js';

/**
 * Each variable, set alone to its bad value, is rejected with a ConfigError whose message starts with its name.
 * @param {Record<string, string>} cases
 */
function assertEachNamed(cases) {
  for (const [name, value] of Object.entries(cases)) {
    assert.throws(() => loadConfig({ [name]: value }), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_CONFIG');
      assert.match(/** @type {Error} */ (error).message, new RegExp(`^${name} `));
      return true;
    }, name);
  }
}

test('defaults give a local setup on the bundled emulator', () => {
  const config = loadConfig({});
  assert.equal(config.redis.url, DEFAULTS.REDIS_URL);
  assert.equal(config.redis.tlsRejectUnauthorized, true);
  assert.equal(config.sendRate, 200);
  assert.equal(config.sendBurst, 10, 'burst defaults to 5% of the rate');
  assert.deepEqual({ ...config.sns }, { region: 'us-east-1', endpoint: 'http://127.0.0.1:9911', emulator: true, client: 'lean' });
  assert.ok(Object.isFrozen(config));
});

test('AWS credentials and no SNS_ENDPOINT send to AWS', () => {
  assert.deepEqual({ ...loadConfig({ AWS_ACCESS_KEY_ID: 'AKIA', AWS_REGION: 'eu-west-1' }).sns },
    { region: 'eu-west-1', endpoint: undefined, emulator: false, client: 'lean' });
  assert.equal(loadConfig({ SNS_ENDPOINT: 'aws' }).sns.endpoint, undefined);
  assert.equal(loadConfig({ SNS_ENDPOINT: 'http://sns:9911' }).sns.endpoint, 'http://sns:9911');
});

test('SNS_CLIENT: lean by default, sdk one setting away, anything else refused by name', () => {
  assert.equal(loadConfig({}).sns.client, 'lean');
  assert.equal(loadConfig({ SNS_CLIENT: 'sdk' }).sns.client, 'sdk');
  assert.equal(loadConfig({ SNS_CLIENT: 'sdk', AWS_ACCESS_KEY_ID: 'AKIA' }).sns.client, 'sdk');
  for (const bad of ['SDK', 'fast', 'aws-sdk']) assertEachNamed({ SNS_CLIENT: bad });
});

test('each bad variable is named in the error', () => {
  const cases = {
    REDIS_URL: 'redis//x', SEND_RATE: 'fast', SEND_BURST: '1.5', SEGMENT_SIZE: '0', WORKER_CONCURRENCY: '-1',
    PUBLISH_CONCURRENCY: 'x', WEB_CONCURRENCY: '100', LOG_LEVEL: 'loud', QUEUE_BACKEND: 'kafka', AWS_REGION: 'mars',
    DATABASE_URL: 'mysql://x', SNS_ENDPOINT: 'ftp://x', KEY_PREFIX: 'a b', AMQP_URL: 'http://x',
    GATEWAY_METRICS: 'graphite', TRANSACTIONAL_SHARE: '1.5', INGEST_CONCURRENCY: '0', EVENTS_ROUTING_KEYS: 'a b', SNS_CLIENT: 'v2'
  };
  assertEachNamed(cases);
});

test('CAMPAIGN_RETENTION_DAYS: 30 by default, 0 keeps campaigns forever, anything else is refused by name', () => {
  assert.equal(loadConfig({}).campaignRetentionDays, 30);
  assert.equal(loadConfig({ CAMPAIGN_RETENTION_DAYS: '0' }).campaignRetentionDays, 0);
  assert.equal(loadConfig({ CAMPAIGN_RETENTION_DAYS: '7' }).campaignRetentionDays, 7);
  for (const bad of ['-1', '1.5', 'forever', '3651']) assertEachNamed({ CAMPAIGN_RETENTION_DAYS: bad });
});

test('REDIS_URL: a database number or none, a host, no query but family; anything else is refused by name', () => {
  for (const url of ['redis://h:6379', 'redis://h:6379/', 'redis://h:6379/0', 'redis://h:6379/99', 'rediss://:pw@h:6380/15', 'redis://h/2?family=6']) {
    assert.equal(loadConfig({ REDIS_URL: url }).redis.url, url);
  }
  for (const url of ['redis://h:6379/-1', 'redis://h:6379/abc', 'redis://h:6379/01', 'redis://h:6379/1/2', 'redis://h:6379/1.5',
    'redis://h:6379/2?db=3', 'redis:///0', 'redis://h:6379/0#x']) {
    assert.throws(() => loadConfig({ REDIS_URL: url }), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_CONFIG');
      assert.match(/** @type {Error} */ (error).message, /^REDIS_URL /, url);
      return true;
    }, url);
  }
  assert.throws(() => loadConfig({ REDIS_URL: 'redis://:hunter2@h:6379/abc' }), (error) => !/** @type {Error} */ (error).message.includes('hunter2'));
});

test('passwords never appear in messages', () => {
  assert.equal(redactUrl('redis://user:secret@host:6379'), 'redis://user:***@host:6379');
  assert.throws(() => loadConfig({ REDIS_URL: 'http://user:secret@host' }), (error) => !/** @type {Error} */ (error).message.includes('secret'));
});

test('a gateway metric source needs its URL', () => {
  assert.throws(() => loadConfig({ GATEWAY_METRICS: 'metrics-scrape' }), /^ConfigError: GATEWAY_METRICS_URL is required when GATEWAY_METRICS is metrics-scrape$/);
  assert.deepEqual({ ...loadConfig({ GATEWAY_METRICS: 'active-probe', GATEWAY_METRICS_URL: 'http://gw:8080/healthz' }).gatewayMetrics },
    { kind: 'active-probe', url: 'http://gw:8080/healthz', histogram: 'http_request_duration_seconds', histogramUnit: 'seconds', selector: '', statusLabel: 'status', requestRate: 'measured', cloudwatch: null });
});

test('GATEWAY_METRICS=cloudwatch: dimensions required, the period is the window, the lag two minutes; each bad variable named', () => {
  const cw = { GATEWAY_METRICS: 'cloudwatch', CLOUDWATCH_DIMENSIONS: 'ApiName=shop, Stage=prod' };
  const c = loadConfig(cw);
  assert.deepEqual({ ...c.gatewayMetrics.cloudwatch, dimensions: { ...c.gatewayMetrics.cloudwatch?.dimensions } },
    { region: 'us-east-1', namespace: 'AWS/ApiGateway', dimensions: { ApiName: 'shop', Stage: 'prod' }, periodSeconds: 60 });
  assert.equal(c.gatewayMetrics.url, null, 'no URL needed: the SDK finds the regional endpoint');
  assert.deepEqual([c.pacing.controller.metricsWindowMs, c.pacing.controller.metricsLagMs], [60_000, 120_000]);
  const longer = loadConfig({ ...cw, CLOUDWATCH_PERIOD_SECONDS: '300', PACING_METRICS_LAG_MS: '90000' }).pacing.controller;
  assert.deepEqual([longer.metricsWindowMs, longer.metricsLagMs], [300_000, 90_000]);
  assert.throws(() => loadConfig({ GATEWAY_METRICS: 'cloudwatch' }), /^ConfigError: CLOUDWATCH_DIMENSIONS is required when GATEWAY_METRICS is cloudwatch/);
  assert.throws(() => loadConfig({ ...cw, CLOUDWATCH_DIMENSIONS: 'ApiName' }), /^ConfigError: CLOUDWATCH_DIMENSIONS: "ApiName" is not Name=value/);
  assert.throws(() => loadConfig({ ...cw, CLOUDWATCH_DIMENSIONS: 'a=1,a=2' }), /^ConfigError: CLOUDWATCH_DIMENSIONS: dimension a is given twice/);
  assert.throws(() => loadConfig({ ...cw, CLOUDWATCH_NAMESPACE: 'AWS/ELB' }), /^ConfigError: CLOUDWATCH_NAMESPACE must be one of AWS\/ApiGateway, AWS\/ApplicationELB/);
  assert.throws(() => loadConfig({ ...cw, CLOUDWATCH_PERIOD_SECONDS: '90' }), /^ConfigError: CLOUDWATCH_PERIOD_SECONDS must be a whole number of minutes/);
  assert.throws(() => loadConfig({ ...cw, CLOUDWATCH_PERIOD_SECONDS: '30' }), /^ConfigError: CLOUDWATCH_PERIOD_SECONDS must be a whole number from 60/);
  assert.throws(() => loadConfig({ ...cw, PACING_METRICS_WINDOW_MS: '10000' }), /^ConfigError: PACING_METRICS_WINDOW_MS must equal CLOUDWATCH_PERIOD_SECONDS \(60000 ms\)/);
  assert.throws(() => loadConfig({ ...cw, GATEWAY_METRICS_URL: 'monitoring' }), /^ConfigError: GATEWAY_METRICS_URL is not a valid URL/);
});

test('GATEWAY_PROMETHEUS_SELECTOR takes PromQL label matchers, braces optional; GATEWAY_STATUS_LABEL a label name; GATEWAY_HISTOGRAM_UNIT seconds or milliseconds', () => {
  for (const selector of ['job="api"', '{job="api", route!="/healthz"}', 'job=~"api|web",code!~"4..",']) {
    assert.equal(loadConfig({ GATEWAY_PROMETHEUS_SELECTOR: selector }).gatewayMetrics.selector, selector);
  }
  for (const selector of ['job=api', 'job="api"}{', 'job="a" or 1', '"api"']) {
    assert.throws(() => loadConfig({ GATEWAY_PROMETHEUS_SELECTOR: selector }), /^ConfigError: GATEWAY_PROMETHEUS_SELECTOR must be PromQL label matchers/, selector);
  }
  assert.equal(loadConfig({ GATEWAY_STATUS_LABEL: 'status_code' }).gatewayMetrics.statusLabel, 'status_code');
  assert.throws(() => loadConfig({ GATEWAY_STATUS_LABEL: 'status-code' }), /^ConfigError: GATEWAY_STATUS_LABEL must be a Prometheus label name/);
  assert.equal(loadConfig({ GATEWAY_HISTOGRAM_UNIT: 'milliseconds' }).gatewayMetrics.histogramUnit, 'milliseconds');
  assert.throws(() => loadConfig({ GATEWAY_HISTOGRAM_UNIT: 'ms' }), /^ConfigError: GATEWAY_HISTOGRAM_UNIT must be one of seconds, milliseconds/);
});

test('the governor\'s controller options come from PACING_*, the controller\'s defaults otherwise', () => {
  assert.deepEqual({ ...loadConfig({}).pacing.controller }, { ...resolveControllerOptions() });
  const scrape = { GATEWAY_METRICS: 'metrics-scrape', GATEWAY_METRICS_URL: 'http://gw:9464/metrics' };
  assert.equal(loadConfig(scrape).pacing.controller.metricsLagMs, 0, 'a scrape measures up to the moment it is read');
  const c = loadConfig({
    ...scrape, PACING_SLO_P95_MS: '250', PACING_SETPOINT_RATIO: '0.7', PACING_CAPACITY_RPS: '320', PACING_SATURATION_RATIO: '1.5', PACING_SLO_CAPACITY_RATIO: '1.4', PACING_BASE_LOAD_RPS: '120', PACING_SHORT_CAMPAIGN_MS: '90000', PACING_MISS_SHARE: '0.05', PACING_CAPACITY_TRIAL_SHARE: '0.6', PACING_CAPACITY_ENVELOPE_MS: '120000', PACING_OPEN_PROBABILITY: '0.2', PACING_REQUESTS_PER_OPEN: '4',
    PACING_OPEN_DELAY_MEDIAN_MS: '3000', PACING_SESSION_MS: '3000', PACING_TIMING_ERROR_MS: '2000', PACING_MIN_RATE: '2', PACING_MAX_RATE: '2000',
    PACING_METRICS_WINDOW_MS: '2000', PACING_METRICS_LAG_MS: '500'
  }).pacing.controller;
  assert.deepEqual(
    [c.sloP95Ms, c.setpointRatio, c.capacityRps, c.saturationRatio, c.sloCapacityRatio, c.baseLoadRps, c.shortCampaignMs, c.missShare, c.capacityTrialShare, c.capacityEnvelopeMs, c.openProbability, c.requestsPerOpen, c.openDelayMedianMs, c.sessionMs, c.timingErrorMs, c.minRate, c.maxRate, c.metricsWindowMs, c.binMs, c.metricsLagMs],
    [250, 0.7, 320, 1.5, 1.4, 120, 90000, 0.05, 0.6, 120000, 0.2, 4, 3000, 3000, 2000, 2, 2000, 2000, 2000, 500]);
  assert.equal(c.cutFactor, CONTROLLER_DEFAULTS.cutFactor, 'the rest keep their defaults');
  assert.ok(Object.isFrozen(c));
});

test('each bad PACING_* variable is named in the error', () => {
  const cases = {
    PACING_SLO_P95_MS: '0', PACING_SETPOINT_RATIO: '1.2', PACING_CAPACITY_RPS: 'lots', PACING_SATURATION_RATIO: '0.9', PACING_SLO_CAPACITY_RATIO: '0.5', PACING_BASE_LOAD_RPS: '-1', PACING_SHORT_CAMPAIGN_MS: '1.5', PACING_MISS_SHARE: '0.6', PACING_CAPACITY_TRIAL_SHARE: '0', PACING_CAPACITY_ENVELOPE_MS: '-1', PACING_OPEN_PROBABILITY: '1.5', PACING_REQUESTS_PER_OPEN: '-1',
    PACING_OPEN_DELAY_MEDIAN_MS: '1.5', PACING_SESSION_MS: '0', PACING_TIMING_ERROR_MS: '1.5', PACING_MIN_RATE: '-1', PACING_MAX_RATE: '0',
    PACING_METRICS_WINDOW_MS: '1500', PACING_METRICS_LAG_MS: '-5'
  };
  assertEachNamed(cases);
  assert.throws(() => loadConfig({ PACING_MIN_RATE: '50', PACING_MAX_RATE: '10' }), /^ConfigError: PACING_MIN_RATE must not be above PACING_MAX_RATE/);
});

test('GATEWAY_REQUEST_RATE: measured by default, none reads the load off the latency, anything else names the variable', () => {
  const base = { GATEWAY_METRICS: 'metrics-scrape', GATEWAY_METRICS_URL: 'http://gateway:9090/metrics' };
  assert.equal(loadConfig(base).gatewayMetrics.requestRate, 'measured');
  assert.equal(loadConfig({ ...base, GATEWAY_REQUEST_RATE: 'none' }).gatewayMetrics.requestRate, 'none');
  assert.throws(() => loadConfig({ ...base, GATEWAY_REQUEST_RATE: 'probe' }), /GATEWAY_REQUEST_RATE/);
});
