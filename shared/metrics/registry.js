// Every Prometheus metric pushpace exports, defined in one place: names, help, labels and
// buckets. A process registers only the groups it updates (a worker has no controller), so a
// scrape never shows a zero that means "not measured here". README "Metrics" and
// docs/observability.md list them; docs/grafana-dashboard.json charts them.
//
// Conventions (https://prometheus.io/docs/practices/naming/): base units in the name
// (_seconds, _per_second, _ratio), _total only on counters, and bounded label values:
// outcome, kind, lane, state, reason and dependency are fixed enumerations; `campaign`
// carries only the ids of active or just-finished campaigns (at most
// MAX_CAMPAIGN_SERIES at once), never endpoint ARNs, user ids or campaign names.
import { createRequire } from 'node:module';
import { Registry, Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';

const version = /** @type {{ version: string }} */ (createRequire(import.meta.url)('../../package.json')).version;

/** Campaigns with their own series in a scrape, newest first: a bound on the label's cardinality. */
export const MAX_CAMPAIGN_SERIES = 20;

/** Results of one SNS publish, as sns-client.js classifies them. */
export const SEND_OUTCOMES = /** @type {const} */ (['delivered', 'disabled', 'failed', 'throttled', 'retryable']);
/** Every reason the pacing controller gives (shared/pacing/controller.js RateReason). */
export const CONTROLLER_REASONS = /** @type {const} */ (['plan', 'plan-latency-only', 'cold-start', 'whole-campaign', 'short-campaign', 'max-rate', 'min-rate', 'error-cut', 'latency-cut', 'cut-hold', 'stale']);
/** Campaign states (shared/types.d.ts CampaignState). */
export const CAMPAIGN_STATES = /** @type {const} */ (['running', 'paused', 'completed', 'expired', 'cancelled', 'failed']);

// SNS answers in 20-100 ms from AWS; the tail (throttling, TLS set-up, a slow region) reaches
// seconds, and the client gives up at 15 s.
const PUBLISH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

/** @typedef {import('prom-client').Registry} MetricsRegistry */

/**
 * A fresh registry for one process: Node.js and process metrics (CPU, memory, event-loop
 * lag, GC) and pushpace_process_info. The groups below are added by the parts that use them.
 * @param {string} processType the Procfile process type
 */
export function createMetricsRegistry(processType) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'pushpace_process_info', help: 'Always 1; labels say which process type and version this is.',
    labelNames: ['process_type', 'version'], registers: [registry], aggregator: 'max'
  }).set({ process_type: processType, version }, 1);
  return registry;
}

/**
 * Exposition text as the format defines it. prom-client 15 writes NaN as "Nan"; Prometheus
 * itself reads that, but the format says "NaN" and stricter parsers refuse anything else.
 * @param {string} text
 */
export const exposition = (text) => text.replace(/ Nan$/gm, ' NaN');

/** @type {WeakMap<MetricsRegistry, Map<string, any>>} */
const groups = new WeakMap();

/**
 * Creates a group of metrics on a registry once; later calls return the same objects.
 * @template T
 * @param {MetricsRegistry} registry
 * @param {string} name
 * @param {(registers: MetricsRegistry[]) => T} make
 * @returns {T}
 */
function group(registry, name, make) {
  let byName = groups.get(registry);
  if (!byName) groups.set(registry, (byName = new Map()));
  if (!byName.has(name)) byName.set(name, make([registry]));
  return byName.get(name);
}

/**
 * SNS publishes from this process (worker: kind campaign; ingest: kind transactional).
 * @param {MetricsRegistry} registry
 */
export function sendMetrics(registry) {
  return group(registry, 'sends', (registers) => ({
    sends: new Counter({
      name: 'pushpace_sends_total',
      help: 'SNS publishes by result: delivered; disabled (EndpointDisabled); failed (a permanent error); ' +
        'throttled and retryable (5xx, network, timeout), both retried. kind is campaign or transactional.',
      labelNames: ['kind', 'outcome'], registers
    }),
    publishDuration: new Histogram({
      name: 'pushpace_sns_publish_duration_seconds',
      help: 'Time from starting an SNS Publish to its answer or error, per attempt.',
      labelNames: ['kind'], buckets: PUBLISH_BUCKETS, registers
    })
  }));
}

/**
 * The shared token bucket, read from Redis at scrape time: the same values from every
 * process that exports them (aggregate with max, not sum).
 * @param {MetricsRegistry} registry
 * @param {() => Promise<void>} [collect] refreshes the group's values before a scrape reads them (first call only)
 */
export function bucketMetrics(registry, collect) {
  return group(registry, 'bucket', (registers) => ({
    rate: new Gauge({ name: 'pushpace_token_bucket_rate_per_second', help: 'Sends per second all workers together may take (the shared rate).', registers, collect, aggregator: 'max' }),
    burst: new Gauge({ name: 'pushpace_token_bucket_burst_tokens', help: 'Tokens the bucket holds at most: sends that may go out at once after an idle moment.', registers, collect, aggregator: 'max' }),
    granted: new Counter({
      name: 'pushpace_token_bucket_granted_tokens_total',
      help: 'Tokens granted since the bucket was created, by lane (campaign or transactional): one per SNS publish.',
      labelNames: ['lane'], registers, collect, aggregator: 'max'
    })
  }));
}

/**
 * The segment queue, read at scrape time.
 * @param {MetricsRegistry} registry
 * @param {() => Promise<void>} [collect] refreshes the group's values before a scrape reads them (first call only)
 */
export function queueMetrics(registry, collect) {
  return group(registry, 'queue', (registers) => ({
    depth: new Gauge({ name: 'pushpace_segment_queue_depth', help: 'Segments on the queue by state: waiting, active (being sent) or delayed (retries, paused campaigns).', labelNames: ['state'], registers, collect, aggregator: 'max' }),
    dead: new Gauge({ name: 'pushpace_segment_queue_dead_letters', help: 'Segments in the dead-letter queue (their unsent devices were failed with the reason).', registers, collect, aggregator: 'max' })
  }));
}

/**
 * Campaign progress, read at scrape time from the same numbers pushctl shows
 * (shared/campaign/campaign-progress.js). Per-campaign series only for active campaigns and
 * those finished in the last minutes, at most MAX_CAMPAIGN_SERIES.
 * @param {MetricsRegistry} registry
 * @param {() => Promise<void>} [collect] refreshes the group's values before a scrape reads them (first call only)
 */
export function campaignMetrics(registry, collect) {
  return group(registry, 'campaigns', (registers) => ({
    active: new Gauge({ name: 'pushpace_active_campaigns', help: 'Campaigns running or paused.', labelNames: ['state'], registers, collect, aggregator: 'max' }),
    devices: new Gauge({
      name: 'pushpace_campaign_devices',
      help: 'Devices of a campaign by status: delivered, disabled, failed, expired, cancelled (dropped unsent) or remaining.',
      labelNames: ['campaign', 'status'], registers, collect, aggregator: 'max'
    }),
    audience: new Gauge({ name: 'pushpace_campaign_audience_devices', help: 'Devices enqueued for a campaign (its total).', labelNames: ['campaign'], registers, collect, aggregator: 'max' }),
    progress: new Gauge({ name: 'pushpace_campaign_progress_ratio', help: 'Share of a campaign\'s devices with an outcome, 0 to 1.', labelNames: ['campaign'], registers, collect, aggregator: 'max' }),
    eta: new Gauge({ name: 'pushpace_campaign_eta_seconds', help: 'Estimated seconds until a running campaign finishes, at its current pace.', labelNames: ['campaign'], registers, collect, aggregator: 'max' }),
    state: new Gauge({ name: 'pushpace_campaign_state', help: '1 for the campaign\'s current state, 0 for the others.', labelNames: ['campaign', 'state'], registers, collect, aggregator: 'max' })
  }));
}

/**
 * Notification events consumed by ingest, by what became of them.
 * @param {MetricsRegistry} registry
 */
export function eventMetrics(registry) {
  return group(registry, 'events', (registers) => ({
    events: new Counter({
      name: 'pushpace_events_total',
      help: 'Notification events handled, by disposition: ack (sent or nothing to do), retry (later, through the retry queue), dead (dead-lettered: poison), requeue.',
      labelNames: ['disposition'], registers
    })
  }));
}

/**
 * Scheduled fires this scheduler process recorded, by outcome (skipped includes fires
 * missed under the skip policy and catch-up's superseded ones).
 * @param {MetricsRegistry} registry
 */
export function schedulerMetrics(registry) {
  return group(registry, 'scheduler', (registers) => ({
    fires: new Counter({
      name: 'pushpace_schedule_fires_total',
      help: 'Scheduled fires recorded by this scheduler, by outcome: launched (a campaign was created), skipped (missed or superseded), failed.',
      labelNames: ['outcome'], registers
    })
  }));
}

/**
 * The governor's pacing controller and the gateway reading it decided on. NaN until the
 * first decision (and gateway values NaN while metrics are unavailable).
 * @param {MetricsRegistry} registry
 */
export function controllerMetrics(registry) {
  return group(registry, 'controller', (registers) => {
    const leadership = { leading: () => NaN };
    /** @param {string} name @param {string} help */
    const gauge = (name, help) => {
      const g = new Gauge({ name, help, registers, aggregator: 'max' });
      g.set(NaN);
      return g;
    };
    return {
      rate: gauge('pushpace_controller_rate_per_second', 'The send rate the controller chose at its last decision.'),
      planned: gauge('pushpace_controller_planned_rate_per_second', 'The wake-up model\'s planned rate before guards and bounds.'),
      capacity: gauge('pushpace_controller_capacity_requests_per_second', 'Estimated gateway capacity: requests/s at the latency setpoint, all traffic.'),
      capacityTrial: gauge('pushpace_controller_capacity_trial_requests_per_second', 'While the operator\'s capacity prior is on trial, the most of it the plan fills (requests/s); NaN once the gateway has shown it.'),
      missTrim: gauge('pushpace_controller_miss_trim', 'Share of the capacity estimate the plan fills: below 1 while the gateway\'s p95 goes over the SLO more often than PACING_MISS_SHARE of the windows.'),
      predictedLoad: gauge('pushpace_controller_predicted_load_requests_per_second', 'Gateway load the controller predicts for its plan: baseline + requests per send × planned wake-up load.'),
      baseline: gauge('pushpace_controller_baseline_requests_per_second', 'Estimated gateway traffic that is not caused by pushes.'),
      requestsPerSend: gauge('pushpace_controller_requests_per_send', 'Estimated gateway requests each send causes (open probability × requests per open).'),
      remaining: gauge('pushpace_controller_remaining_devices', 'Devices the running campaigns still had to send at the last decision; NaN when unknown.'),
      lastDecision: gauge('pushpace_controller_last_decision_timestamp_seconds', 'Unix time of the last decision.'),
      reason: new Gauge({ name: 'pushpace_controller_reason', help: '1 for the reason of the last decision, 0 for the others.', labelNames: ['reason'], registers, aggregator: 'max' }),
      decisions: new Counter({ name: 'pushpace_controller_decisions_total', help: 'Controller decisions by reason.', labelNames: ['reason'], registers }),
      gatewayP95: gauge('pushpace_gateway_latency_p95_seconds', 'The gateway\'s p95 latency in the last metrics window the governor read.'),
      gatewayP99: gauge('pushpace_gateway_latency_p99_seconds', 'The gateway\'s p99 latency in the last metrics window.'),
      gatewayRps: gauge('pushpace_gateway_requests_per_second', 'The gateway\'s request rate in the last metrics window.'),
      gatewayErrors: gauge('pushpace_gateway_error_ratio', 'Share of failed gateway requests in the last metrics window, 0 to 1.'),
      slo: gauge('pushpace_gateway_slo_p95_seconds', 'The p95 latency objective the controller keeps the gateway under (PACING_SLO_P95_MS).'),
      leader: new Gauge({
        name: 'pushpace_governor_leader', help: '1 while this governor holds the lease and steers the rate.', registers, aggregator: 'max',
        // The lease can change at any time between decisions: read it when scraped.
        collect() { this.set(leadership.leading()); }
      }),
      /** Where the leader gauge reads the lease. @param {() => boolean} leading */
      watchLeadership(leading) { leadership.leading = () => (leading() ? 1 : 0); }
    };
  });
}

/**
 * Whether this process reaches its dependencies, from the same checks as /readyz.
 * @param {MetricsRegistry} registry
 * @param {() => Promise<void>} [collect] refreshes the group's values before a scrape reads them (first call only)
 */
export function dependencyMetrics(registry, collect) {
  return group(registry, 'dependencies', (registers) => ({
    up: new Gauge({ name: 'pushpace_dependency_up', help: '1 when the dependency answered its readiness check, else 0.', labelNames: ['dependency'], registers, collect })
  }));
}
