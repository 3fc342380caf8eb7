// The one place that reads environment variables (12-factor). loadConfig is pure:
// it takes an env object, validates every variable, applies the defaults kept in
// DEFAULTS and returns a frozen object. Every error names the variable.
import { ConfigError } from '../shared/errors.js';
import { redactUrl } from '../shared/redact-url.js';
import { canonicalTimezone } from '../shared/zoned-time.js';
import { CONTROLLER_DEFAULTS, resolveControllerOptions } from '../shared/pacing/controller-options.js';
import { GATEWAY_METRIC_KINDS, GATEWAY_METRIC_SOURCES } from '../shared/gateway-metrics/gateway-metrics.js';
import { CLOUDWATCH_NAMESPACES, parseDimensions } from '../shared/gateway-metrics/cloudwatch.js';

/** Defaults for local runs; each is documented in the README's configuration table. */
export const DEFAULTS = Object.freeze({
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_TLS_REJECT_UNAUTHORIZED: 'true',
  REDIS_CLUSTER: 'false',
  KEY_PREFIX: 'push',
  QUEUE_BACKEND: 'bullmq',
  AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
  AWS_REGION: 'us-east-1',
  // lean: Publish built, signed and sent by shared/sns/lean-publisher.js; sdk: @aws-sdk/client-sns (docs/sns-publish.md).
  SNS_CLIENT: 'lean',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
  SEND_RATE: 200,
  SEGMENT_SIZE: 500,
  WORKER_CONCURRENCY: 4,
  PUBLISH_CONCURRENCY: 64,
  WEB_CONCURRENCY: 1,
  LOG_LEVEL: 'info',
  SEND_ATTEMPTS: 4,
  SEGMENT_ATTEMPTS: 5,
  SEGMENT_LOCK_MS: 10_000,
  CONFIRM_THRESHOLD: 10_000,
  CAMPAIGN_RETENTION_DAYS: 30,
  SNS_EMULATOR_PORT: 9911,
  SHUTDOWN_TIMEOUT_MS: 25_000,
  TRANSACTIONAL_SHARE: 0.1,
  EVENTS_EXCHANGE: 'pushpace.events',
  EVENTS_ROUTING_KEYS: 'notification.#',
  EVENTS_QUEUE: 'pushpace.ingest',
  INGEST_CONCURRENCY: 16,
  EVENT_DEDUPE_HOURS: 168,
  TEMPLATES_DIR: 'templates',
  DEFAULT_TIMEZONE: 'UTC',
  SCHEDULER_TOLERANCE_SECONDS: 60,
  SCHEDULER_LEASE_MS: 30_000,
  SCHEDULE_MIN_INTERVAL_SECONDS: 60,
  SCHEDULE_GRACE_MINUTES: 60,
  PORT: 8080,
  DASHBOARD_PUBLIC: 'true',
  GATEWAY_METRICS: 'none',
  GATEWAY_HISTOGRAM: 'http_request_duration_seconds',
  GATEWAY_HISTOGRAM_UNIT: 'seconds',
  GATEWAY_PROMETHEUS_SELECTOR: '',
  GATEWAY_STATUS_LABEL: 'status',
  CLOUDWATCH_NAMESPACE: 'AWS/ApiGateway',
  CLOUDWATCH_PERIOD_SECONDS: 60,
  GATEWAY_REQUEST_RATE: 'measured',
  // The governor's pacing controller: the operator-facing options, defaulting to the
  // controller's own (shared/pacing/controller-options.js, explained in docs/pacing.md).
  PACING_SLO_P95_MS: CONTROLLER_DEFAULTS.sloP95Ms,
  PACING_SETPOINT_RATIO: CONTROLLER_DEFAULTS.setpointRatio,
  PACING_CAPACITY_RPS: CONTROLLER_DEFAULTS.capacityRps,
  PACING_SATURATION_RATIO: CONTROLLER_DEFAULTS.saturationRatio,
  PACING_SLO_CAPACITY_RATIO: CONTROLLER_DEFAULTS.sloCapacityRatio,
  PACING_BASE_LOAD_RPS: CONTROLLER_DEFAULTS.baseLoadRps,
  PACING_SHORT_CAMPAIGN_MS: CONTROLLER_DEFAULTS.shortCampaignMs,
  PACING_MISS_SHARE: CONTROLLER_DEFAULTS.missShare,
  PACING_CAPACITY_TRIAL_SHARE: CONTROLLER_DEFAULTS.capacityTrialShare,
  PACING_CAPACITY_ENVELOPE_MS: CONTROLLER_DEFAULTS.capacityEnvelopeMs,
  PACING_OPEN_PROBABILITY: CONTROLLER_DEFAULTS.openProbability,
  PACING_REQUESTS_PER_OPEN: CONTROLLER_DEFAULTS.requestsPerOpen,
  PACING_OPEN_DELAY_MEDIAN_MS: CONTROLLER_DEFAULTS.openDelayMedianMs,
  PACING_SESSION_MS: CONTROLLER_DEFAULTS.sessionMs,
  PACING_TIMING_ERROR_MS: CONTROLLER_DEFAULTS.timingErrorMs,
  PACING_MIN_RATE: CONTROLLER_DEFAULTS.minRate,
  PACING_MAX_RATE: CONTROLLER_DEFAULTS.maxRate,
  PACING_METRICS_WINDOW_MS: CONTROLLER_DEFAULTS.metricsWindowMs
});

/**
 * Variables loadConfig reads that have no entry in DEFAULTS: unset means off, or a value
 * computed from others. With DEFAULTS, every variable of the app (app.json is checked
 * against both).
 */
export const OPTIONAL_VARIABLES = Object.freeze(['SNS_ENDPOINT', 'SEND_BURST', 'GATEWAY_METRICS_URL', 'METRICS_PORT',
  'DASHBOARD_TOKEN', 'DATABASE_SSL', 'PACING_METRICS_LAG_MS']);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const QUEUE_BACKENDS = ['bullmq', 'rabbitmq'];
const SNS_CLIENTS = ['lean', 'sdk'];
const GATEWAY_REQUEST_RATES = ['measured', 'none'];
// Any of these means the operator has given the SDK a way to real AWS credentials.
export const AWS_CREDENTIAL_VARS = [
  'AWS_ACCESS_KEY_ID', 'AWS_PROFILE', 'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI'
];

/**
 * @typedef {ReturnType<typeof loadConfig>} Config
 */

/**
 * Validates the environment and returns the frozen configuration.
 * @param {Record<string, string | undefined>} env usually process.env
 */
export function loadConfig(env) {
  const read = reader(env);
  const sendRate = read.number('SEND_RATE', { min: 0.01, max: 1_000_000 });
  // A small bucket keeps sends smooth: the burst is what may go out at once after a
  // pause, so 5% of a second's sends (at least one) by default.
  const sendBurst = read.integer('SEND_BURST', { min: 1, max: 10_000_000, fallback: Math.max(1, Math.ceil(sendRate * 0.05)) });
  const emulatorPort = read.integer('SNS_EMULATOR_PORT', { min: 0, max: 65535 });
  const logLevel = read.oneOf('LOG_LEVEL', LOG_LEVELS);
  const sns = snsConfig(env, read, emulatorPort);
  const gatewayMetrics = gatewayMetricsConfig(env, read, sns.region);

  return Object.freeze({
    redis: Object.freeze(redisConfig(read)),
    keyPrefix: read.string('KEY_PREFIX', /^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, "_", "." or "-"'),
    queueBackend: read.oneOf('QUEUE_BACKEND', QUEUE_BACKENDS),
    amqpUrl: read.url('AMQP_URL', ['amqp:', 'amqps:']),
    ...databaseConfig(env, read),
    sns: Object.freeze(sns),
    sendRate,
    sendBurst,
    segmentSize: read.integer('SEGMENT_SIZE', { min: 1, max: 10_000 }),
    workerConcurrency: read.integer('WORKER_CONCURRENCY', { min: 1, max: 1000 }),
    publishConcurrency: read.integer('PUBLISH_CONCURRENCY', { min: 1, max: 4096 }),
    webConcurrency: read.integer('WEB_CONCURRENCY', { min: 1, max: 64 }),
    sendAttempts: read.integer('SEND_ATTEMPTS', { min: 1, max: 20 }),
    segmentAttempts: read.integer('SEGMENT_ATTEMPTS', { min: 1, max: 100 }),
    segmentLockMs: read.integer('SEGMENT_LOCK_MS', { min: 1000, max: 600_000 }),
    confirmThreshold: read.integer('CONFIRM_THRESHOLD', { min: 0, max: 1_000_000_000 }),
    // Days a finished campaign's keys stay in Redis (its outcome bitfield is 375 KB per million
    // devices); 0 keeps them forever. Ten years at most: beyond that, say 0.
    campaignRetentionDays: read.integer('CAMPAIGN_RETENTION_DAYS', { min: 0, max: 3650 }),
    shutdownTimeoutMs: read.integer('SHUTDOWN_TIMEOUT_MS', { min: 1000, max: 3_600_000 }),
    emulatorPort,
    logLevel: /** @type {import('pino').LevelWithSilent} */ (logLevel),
    // Share of the bucket's burst kept for transactional sends, which also get first claim on the rest.
    transactionalShare: read.number('TRANSACTIONAL_SHARE', { min: 0, max: 1 }),
    // Local-time delivery: the zone of audience devices that name none (pushctl send --default-timezone overrides it).
    defaultTimezone: timezone(read.string('DEFAULT_TIMEZONE', /^.{1,64}$/, 'an IANA time zone such as Europe/Helsinki or UTC')),
    scheduler: Object.freeze(schedulerConfig(read)),
    // The web process listens on PORT (Heroku sets it). METRICS_PORT, when set, serves
    // /metrics, /healthz and /readyz from every process type (0: any free port).
    port: read.integer('PORT', { min: 0, max: 65535 }),
    metricsPort: env.METRICS_PORT?.trim() ? read.integer('METRICS_PORT', { min: 0, max: 65535 }) : null,
    dashboard: Object.freeze(dashboardConfig(env, read)),
    gatewayMetrics: Object.freeze(gatewayMetrics),
    pacing: Object.freeze(pacingConfig(read, gatewayMetrics)),
    events: Object.freeze({
      exchange: read.string('EVENTS_EXCHANGE', /^[A-Za-z0-9_.:-]{1,255}$/, 'an exchange name (letters, digits, "_", ".", ":" or "-")'),
      routingKeys: read.string('EVENTS_ROUTING_KEYS', /^[A-Za-z0-9_.*#-]+(,[A-Za-z0-9_.*#-]+)*$/, 'comma-separated routing key patterns such as notification.#')
        .split(','),
      queue: read.string('EVENTS_QUEUE', /^[A-Za-z0-9_.:-]{1,255}$/, 'a queue name (letters, digits, "_", ".", ":" or "-")'),
      concurrency: read.integer('INGEST_CONCURRENCY', { min: 1, max: 1000 }),
      dedupeHours: read.integer('EVENT_DEDUPE_HOURS', { min: 1, max: 24 * 365 }),
      templatesDir: read.string('TEMPLATES_DIR', /^.{1,4096}$/, 'a directory path')
    })
  });
}

/**
 * Where Redis is and whether its TLS certificate must verify (shared/redis.js RedisTarget).
 * Heroku Key-Value Store and other managed Redis speak TLS (rediss://) with a self-signed
 * certificate: REDIS_TLS_REJECT_UNAUTHORIZED=false skips the check for Redis connections
 * only, where the global NODE_TLS_REJECT_UNAUTHORIZED=0 would also drop it for SNS.
 * It has no effect on a redis:// URL (no TLS). REDIS_CLUSTER=true makes every connection an
 * ioredis Cluster with REDIS_URL as its startup node.
 * @param {ReturnType<typeof reader>} read
 */
function redisConfig(read) {
  const url = read.redisUrl('REDIS_URL');
  // Managed Redis in cluster mode (ElastiCache, MemoryDB, Redis Cloud's OSS Cluster API):
  // REDIS_URL is one startup node, the client finds the others (shared/redis.js).
  const cluster = read.oneOf('REDIS_CLUSTER', ['true', 'false']) === 'true';
  const database = new URL(url).pathname.slice(1);
  if (cluster && database !== '' && database !== '0') {
    // ioredis's Cluster ignores a database and would run everything on database 0, where
    // the operator did not ask for it: refused instead.
    throw new ConfigError(`REDIS_URL names database ${database}, but a Redis Cluster has only database 0 (REDIS_CLUSTER=true): ` +
      `remove "/${database}" from it, or use KEY_PREFIX to keep environments apart`);
  }
  return {
    url,
    tlsRejectUnauthorized: read.oneOf('REDIS_TLS_REJECT_UNAUTHORIZED', ['true', 'false']) === 'true',
    cluster
  };
}

// sslmode values pg 8 understands (pg-connection-string): disable; no-verify (TLS, no
// certificate check); verify-full; and prefer, require, verify-ca, which pg 8 treats as
// verify-full with a warning that pg 9 will give them libpq's weaker meaning. Any other
// value pg silently reads as verify-full, so it is refused here.
const PG_SSLMODES = ['disable', 'no-verify', 'verify-full', 'prefer', 'require', 'verify-ca'];
const DATABASE_SSL_MODES = ['disable', 'no-verify', 'verify-full'];

/**
 * DATABASE_URL, with the TLS mode DATABASE_SSL asks for written into it as pg's sslmode,
 * and whether DATABASE_URL was set at all (the release phase's `pushctl db migrate` has
 * nothing to do without it). Heroku Postgres requires TLS and manages DATABASE_URL itself,
 * so the mode is a variable of its own (no-verify there: its certificates do not verify
 * against public CAs); a URL that already has sslmode keeps it.
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 */
function databaseConfig(env, read) {
  const value = read.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const url = new URL(value);
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !PG_SSLMODES.includes(sslmode)) {
    throw new ConfigError(`DATABASE_URL has sslmode=${sslmode}; use one of ${PG_SSLMODES.join(', ')} (or DATABASE_SSL)`);
  }
  const ssl = env.DATABASE_SSL?.trim() ? read.oneOf('DATABASE_SSL', DATABASE_SSL_MODES) : null;
  if (ssl !== null && sslmode !== null && ssl !== sslmode) {
    throw new ConfigError(`DATABASE_SSL=${ssl} and DATABASE_URL's sslmode=${sslmode} disagree: set one of them`);
  }
  if (ssl !== null) url.searchParams.set('sslmode', ssl);
  return {
    databaseUrl: ssl === null ? value : url.href,
    databaseUrlSet: Boolean(env.DATABASE_URL?.trim())
  };
}

/**
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 * @param {number} emulatorPort
 */
function snsConfig(env, read, emulatorPort) {
  const region = read.string('AWS_REGION', /^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as us-east-1');
  const raw = env.SNS_ENDPOINT?.trim();
  const client = /** @type {'lean' | 'sdk'} */ (read.oneOf('SNS_CLIENT', SNS_CLIENTS));
  const hasAwsCredentials = AWS_CREDENTIAL_VARS.some((name) => env[name]);
  if (raw === 'aws' || (!raw && hasAwsCredentials)) {
    return { region, endpoint: undefined, emulator: false, client };
  }
  // No endpoint and no credentials: a local run, so the bundled emulator.
  const endpoint = raw ? read.url('SNS_ENDPOINT', ['http:', 'https:']) : `http://127.0.0.1:${emulatorPort}`;
  return { region, endpoint, emulator: !hasAwsCredentials, client };
}

// Label matchers as PromQL writes them inside braces: name, operator, double-quoted value.
const MATCHER = String.raw`\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*`;
const SELECTOR = new RegExp(`^\\{?(?:${MATCHER}(?:,${MATCHER})*,?\\s*)?\\}?$`);

/**
 * Where the governor reads the gateway's latency: GATEWAY_METRICS names the kind of
 * source, GATEWAY_METRICS_URL where it is (required for every kind but none and cloudwatch,
 * for which it replaces AWS's endpoint), the rest how to read it.
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 * @param {string} region  AWS_REGION
 */
function gatewayMetricsConfig(env, read, region) {
  const kind = /** @type {'none' | import('../shared/gateway-metrics/gateway-metrics.js').GatewayMetricKind} */ (
    read.oneOf('GATEWAY_METRICS', ['none', ...GATEWAY_METRIC_KINDS]));
  const histogram = read.string('GATEWAY_HISTOGRAM', /^[a-zA-Z_:][a-zA-Z0-9_:]*$/, 'a Prometheus metric name');
  // A histogram in ms (some exporters) would otherwise read as 1000 times too slow.
  const histogramUnit = /** @type {'seconds' | 'milliseconds'} */ (read.oneOf('GATEWAY_HISTOGRAM_UNIT', ['seconds', 'milliseconds']));
  // Without a selector the queries sum every job on the Prometheus server that has the histogram.
  const selector = read.string('GATEWAY_PROMETHEUS_SELECTOR', SELECTOR, 'PromQL label matchers such as job="api",route!="/healthz"');
  const statusLabel = read.string('GATEWAY_STATUS_LABEL', /^[a-zA-Z_][a-zA-Z0-9_]*$/, 'a Prometheus label name such as status or code');
  // none: the source's request rate is not the gateway's whole load (a histogram of one
  // route, a sampled exporter), so the controller reads the load off the latency, as it
  // always does for the active probe, which sees no request rate at all.
  const requestRate = /** @type {'measured' | 'none'} */ (read.oneOf('GATEWAY_REQUEST_RATE', GATEWAY_REQUEST_RATES));
  const common = { histogram, histogramUnit, selector, statusLabel, requestRate, cloudwatch: null };
  if (kind === 'none') return { kind, url: null, ...common };
  if (kind === 'cloudwatch') {
    const url = env.GATEWAY_METRICS_URL?.trim() ? read.url('GATEWAY_METRICS_URL', ['http:', 'https:']) : null;
    return { kind, url, ...common, cloudwatch: Object.freeze(cloudwatchConfig(env, read, region)) };
  }
  if (!env.GATEWAY_METRICS_URL?.trim()) throw new ConfigError(`GATEWAY_METRICS_URL is required when GATEWAY_METRICS is ${kind}`);
  return { kind, url: read.url('GATEWAY_METRICS_URL', ['http:', 'https:']), ...common };
}

/**
 * CLOUDWATCH_*: which API or load balancer, and the period its metrics are read in.
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 * @param {string} region
 */
function cloudwatchConfig(env, read, region) {
  const namespace = /** @type {import('../shared/gateway-metrics/cloudwatch.js').CloudWatchNamespace} */ (
    read.oneOf('CLOUDWATCH_NAMESPACE', Object.keys(CLOUDWATCH_NAMESPACES)));
  const text = env.CLOUDWATCH_DIMENSIONS?.trim();
  const example = namespace === 'AWS/ApiGateway' ? 'ApiName=shop,Stage=prod' : 'LoadBalancer=app/shop/50dc6c495c0c9188';
  if (!text) throw new ConfigError(`CLOUDWATCH_DIMENSIONS is required when GATEWAY_METRICS is cloudwatch (such as ${example})`);
  let dimensions;
  try {
    dimensions = parseDimensions(text);
  } catch (error) {
    throw new ConfigError(`CLOUDWATCH_DIMENSIONS: ${/** @type {Error} */ (error).message}`, { cause: error });
  }
  // API Gateway and load balancers publish one-minute periods; shorter ones do not exist there.
  const periodSeconds = read.integer('CLOUDWATCH_PERIOD_SECONDS', { min: 60, max: 3600 });
  if (periodSeconds % 60 !== 0) throw new ConfigError(`CLOUDWATCH_PERIOD_SECONDS must be a whole number of minutes (60, 120...), got ${periodSeconds}`);
  return { region, namespace, dimensions: Object.freeze(dimensions), periodSeconds };
}

/**
 * The governor's controller options from PACING_* (docs/pacing.md): the SLO, the priors
 * an operator knows from a load test and past campaigns, the rate bounds and the metrics
 * timing. The rest keep the controller's defaults. The governor reads the gateway and
 * decides once per PACING_METRICS_WINDOW_MS, which is also the controller's time step.
 * @param {ReturnType<typeof reader>} read
 * @param {ReturnType<typeof gatewayMetricsConfig>} gatewayMetrics  its kind sets the default lag; CloudWatch's period the window
 */
function pacingConfig(read, gatewayMetrics) {
  const minRate = read.number('PACING_MIN_RATE', { min: 0, max: 1_000_000 });
  const maxRate = read.number('PACING_MAX_RATE', { min: 0.01, max: 1_000_000 });
  if (minRate > maxRate) throw new ConfigError(`PACING_MIN_RATE must not be above PACING_MAX_RATE, got ${minRate} > ${maxRate}`);
  // CloudWatch answers one value per period: a reading covers the period, so the decision
  // window is the period (a shorter one would observe the same period several times).
  const periodMs = gatewayMetrics.cloudwatch ? gatewayMetrics.cloudwatch.periodSeconds * 1000 : null;
  const windowMs = read.integer('PACING_METRICS_WINDOW_MS', { min: 1000, max: 3_600_000, fallback: periodMs ?? CONTROLLER_DEFAULTS.metricsWindowMs });
  // The window is also the controller's bin, which must be whole seconds.
  if (windowMs % 1000 !== 0) throw new ConfigError(`PACING_METRICS_WINDOW_MS must be a whole number of seconds in ms (such as 2000), got ${windowMs}`);
  if (periodMs !== null && windowMs !== periodMs) {
    throw new ConfigError(`PACING_METRICS_WINDOW_MS must equal CLOUDWATCH_PERIOD_SECONDS (${periodMs} ms) with GATEWAY_METRICS=cloudwatch, got ${windowMs}`);
  }
  // A scrape or a probe measures up to the moment it is read; a Prometheus server's answer
  // is about one scrape interval old, CloudWatch's a minute or two (each source's defaultLagMs).
  const lagFallback = gatewayMetrics.kind === 'none' ? CONTROLLER_DEFAULTS.metricsLagMs : GATEWAY_METRIC_SOURCES[gatewayMetrics.kind].defaultLagMs;
  const options = {
    sloP95Ms: read.number('PACING_SLO_P95_MS', { min: 1, max: 600_000 }),
    // Lower for a gateway whose p95 varies a lot from window to window (few processes).
    setpointRatio: read.number('PACING_SETPOINT_RATIO', { min: 0.1, max: 1 }),
    capacityRps: read.number('PACING_CAPACITY_RPS', { min: 0.01, max: 10_000_000 }),
    // The same load test's full-CPU throughput over PACING_CAPACITY_RPS: how a latency-only
    // source's p95 is read as load (and the loss guard's saturation).
    saturationRatio: read.number('PACING_SATURATION_RATIO', { min: 1, max: 100 }),
    // The same load test's rate at the SLO p95 over PACING_CAPACITY_RPS (1: not known): a
    // campaign whose whole wake-up load fits under the capacity at the SLO goes out at once.
    sloCapacityRatio: read.number('PACING_SLO_CAPACITY_RATIO', { min: 1, max: 100 }),
    // With a latency-only source, the least the users' own traffic sends through the gateway
    // (0: not known): the p95 at the gateway's floor then reads as that load, not as none.
    baseLoadRps: read.number('PACING_BASE_LOAD_RPS', { min: 0, max: 10_000_000 }),
    // With that ratio known, a campaign that fits under the capacity at the SLO when sent
    // evenly within this long of its first send goes out that fast (0: off): one peak.
    shortCampaignMs: read.integer('PACING_SHORT_CAMPAIGN_MS', { min: 0, max: 3_600_000 }),
    // The share of metrics windows over the SLO the governor lets pass before it fills less
    // of its capacity estimate (0: never): the margin a jumpy gateway needs, learnt.
    missShare: read.number('PACING_MISS_SHARE', { min: 0, max: 0.5 }),
    // The share of PACING_CAPACITY_RPS the plan fills before the gateway has shown it can take
    // it (1: all at once): the load test's figure is tried in steps, as TCP's slow start does.
    capacityTrialShare: read.number('PACING_CAPACITY_TRIAL_SHARE', { min: 0.05, max: 1 }),
    // On a gateway whose p95 jumps between windows, the plan fills the lowest capacity
    // estimate of this long (0: the latest): a slow phase of a shared host comes again.
    capacityEnvelopeMs: read.integer('PACING_CAPACITY_ENVELOPE_MS', { min: 0, max: 3_600_000 }),
    openProbability: read.number('PACING_OPEN_PROBABILITY', { min: 0.0001, max: 1 }),
    requestsPerOpen: read.number('PACING_REQUESTS_PER_OPEN', { min: 0.01, max: 100_000 }),
    openDelayMedianMs: read.integer('PACING_OPEN_DELAY_MEDIAN_MS', { min: 1, max: 86_400_000 }),
    sessionMs: read.integer('PACING_SESSION_MS', { min: 1, max: 86_400_000 }),
    // How far a wake-up's timing may be off (push delivery takes seconds): a window's load
    // that such a shift would change does not pin requests per send down (0: exact timing).
    timingErrorMs: read.integer('PACING_TIMING_ERROR_MS', { min: 0, max: 600_000 }),
    minRate,
    maxRate,
    metricsWindowMs: windowMs,
    binMs: windowMs,
    metricsLagMs: read.integer('PACING_METRICS_LAG_MS', { min: 0, max: 3_600_000, fallback: lagFallback })
  };
  try {
    return { controller: resolveControllerOptions(options) };
  } catch (error) {
    // Each variable is checked above; this catches rules across them the controller adds.
    throw new ConfigError(`PACING_* settings are inconsistent: ${/** @type {Error} */ (error).message}`, { cause: error });
  }
}

/**
 * Who may use the dashboard: DASHBOARD_TOKEN authorises control actions (none without it),
 * DASHBOARD_PUBLIC=false asks for it for reads too.
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 */
function dashboardConfig(env, read) {
  const token = env.DASHBOARD_TOKEN?.trim() || null;
  // Long enough that guessing is hopeless; printable ASCII so it fits an Authorization header.
  if (token !== null && !/^[\x21-\x7e]{16,256}$/.test(token)) {
    throw new ConfigError('DASHBOARD_TOKEN must be 16 to 256 printable characters without spaces (e.g. from `openssl rand -hex 24`)');
  }
  return { token, publicReads: read.oneOf('DASHBOARD_PUBLIC', ['true', 'false']) === 'true' };
}

/**
 * The scheduler's timing (docs/scheduling.md): how late a fire still counts as on time,
 * how long a claimed fire survives a scheduler that died, and catch-up's default grace.
 * A dead scheduler's fire is taken over once its claim lapses, so the claim must be
 * shorter than the on-time window or such a fire would always be missed.
 * @param {ReturnType<typeof reader>} read
 */
function schedulerConfig(read) {
  const toleranceMs = read.integer('SCHEDULER_TOLERANCE_SECONDS', { min: 2, max: 86_400 }) * 1000;
  const leaseMs = read.integer('SCHEDULER_LEASE_MS', { min: 1000, max: 600_000 });
  if (leaseMs >= toleranceMs) {
    throw new ConfigError(`SCHEDULER_LEASE_MS (${leaseMs}) must be shorter than SCHEDULER_TOLERANCE_SECONDS (${toleranceMs / 1000} s): ` +
      'a fire whose scheduler died is taken over only after its claim lapses');
  }
  return {
    toleranceMs,
    leaseMs,
    defaultGraceMs: read.integer('SCHEDULE_GRACE_MINUTES', { min: 1, max: 7 * 24 * 60 }) * 60_000,
    // A cron with a seconds field can fire every second: a campaign each time.
    minIntervalMs: read.integer('SCHEDULE_MIN_INTERVAL_SECONDS', { min: 1, max: 86_400 }) * 1000
  };
}

/**
 * Typed readers over env that throw ConfigError naming the variable.
 * @param {Record<string, string | undefined>} env
 */
function reader(env) {
  /** @param {string} name */
  const raw = (name) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  /** @param {string} name */
  const fallbackOf = (name) => /** @type {Record<string, any>} */ (DEFAULTS)[name];

  return {
    /** @param {string} name @param {{ min: number, max: number, fallback?: number }} range */
    number(name, { min, max, fallback = fallbackOf(name) }) {
      const value = raw(name);
      if (value === undefined) return /** @type {number} */ (fallback);
      const n = Number(value);
      if (!Number.isFinite(n) || n < min || n > max) {
        throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${value}"`);
      }
      return n;
    },
    /** @param {string} name @param {{ min: number, max: number, fallback?: number }} range */
    integer(name, { min, max, fallback = fallbackOf(name) }) {
      const value = raw(name);
      if (value === undefined) return /** @type {number} */ (fallback);
      const n = Number(value);
      if (!Number.isInteger(n) || n < min || n > max) {
        throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
      }
      return n;
    },
    /** @param {string} name @param {string[]} protocols */
    url(name, protocols) {
      const value = raw(name) ?? fallbackOf(name);
      let url;
      try {
        url = new URL(value);
      } catch {
        throw new ConfigError(`${name} is not a valid URL: "${value}"`);
      }
      if (!protocols.includes(url.protocol)) {
        throw new ConfigError(`${name} must start with ${protocols.map((p) => p + '//').join(' or ')}, got "${redactUrl(value)}"`);
      }
      return value;
    },
    /**
     * A Redis URL ioredis will read as we do: a host, a database number or none, and no
     * query but `family`. ioredis takes whatever follows the host as the database and
     * SELECTs it: "/abc" crashes it, "/-1" is refused by the server (shared/redis.js).
     * @param {string} name
     */
    redisUrl(name) {
      const value = this.url(name, ['redis:', 'rediss:']);
      const url = new URL(value);
      const shown = redactUrl(value);
      if (!url.hostname) throw new ConfigError(`${name} names no host, got "${shown}"`);
      if (url.pathname !== '' && url.pathname !== '/' && !/^\/(0|[1-9][0-9]{0,5})$/.test(url.pathname)) {
        throw new ConfigError(`${name} must give its database as a whole number after the host (/0 to /15 on a default server), got "${url.pathname}" in "${shown}"`);
      }
      for (const [key, option] of url.searchParams) {
        if (key !== 'family' || !['0', '4', '6'].includes(option)) {
          throw new ConfigError(`${name} takes no query option but family=4|6, got "${key}=${option}"; put the database in the path (/2)`);
        }
      }
      if (url.hash) throw new ConfigError(`${name} has a fragment ("${url.hash}"), got "${shown}"`);
      return value;
    },
    /** @param {string} name @param {string[]} choices */
    oneOf(name, choices) {
      const value = raw(name) ?? fallbackOf(name);
      if (!choices.includes(value)) {
        throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
      }
      return value;
    },
    /** @param {string} name @param {RegExp} pattern @param {string} expected */
    string(name, pattern, expected) {
      const value = raw(name) ?? fallbackOf(name);
      if (!pattern.test(value)) throw new ConfigError(`${name} must be ${expected}, got "${value}"`);
      return value;
    }
  };
}

/**
 * The canonical name of DEFAULT_TIMEZONE, or a ConfigError naming it.
 * @param {string} value
 */
function timezone(value) {
  const canonical = canonicalTimezone(value);
  if (canonical === null) throw new ConfigError(`DEFAULT_TIMEZONE must be an IANA time zone such as Europe/Helsinki or UTC, got "${value}"`);
  return canonical;
}
