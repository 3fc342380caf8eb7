// The one place that reads environment variables (12-factor). loadConfig is pure:
// it takes an env object, validates every variable, applies the defaults kept in
// DEFAULTS and returns a frozen object. Every error names the variable.
import { ConfigError } from '../shared/errors.js';

/** Defaults for local runs; each is documented in the README's configuration table. */
export const DEFAULTS = Object.freeze({
  REDIS_URL: 'redis://127.0.0.1:6379',
  KEY_PREFIX: 'push',
  QUEUE_BACKEND: 'bullmq',
  AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
  AWS_REGION: 'us-east-1',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
  SEND_RATE: 200,
  SEGMENT_SIZE: 500,
  WORKER_CONCURRENCY: 4,
  PUBLISH_CONCURRENCY: 64,
  WEB_CONCURRENCY: 1,
  LOG_LEVEL: 'info',
  SEND_ATTEMPTS: 4,
  SEGMENT_ATTEMPTS: 5,
  SEGMENT_LOCK_MS: 30_000,
  CONFIRM_THRESHOLD: 10_000,
  SNS_EMULATOR_PORT: 9911,
  SHUTDOWN_TIMEOUT_MS: 25_000,
  TRANSACTIONAL_SHARE: 0.1,
  EVENTS_EXCHANGE: 'pushpace.events',
  EVENTS_ROUTING_KEYS: 'notification.#',
  EVENTS_QUEUE: 'pushpace.ingest',
  INGEST_CONCURRENCY: 16,
  EVENT_DEDUPE_HOURS: 168,
  TEMPLATES_DIR: 'templates',
  GATEWAY_METRICS: 'none',
  GATEWAY_HISTOGRAM: 'http_request_duration_seconds'
});

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const QUEUE_BACKENDS = ['bullmq', 'rabbitmq'];
const GATEWAY_METRIC_KINDS = ['none', 'prometheus-api', 'metrics-scrape', 'active-probe'];
// Any of these means the operator has given the SDK a way to real AWS credentials.
const AWS_CREDENTIAL_VARS = [
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

  return Object.freeze({
    redisUrl: read.url('REDIS_URL', ['redis:', 'rediss:']),
    keyPrefix: read.string('KEY_PREFIX', /^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, "_", "." or "-"'),
    queueBackend: read.oneOf('QUEUE_BACKEND', QUEUE_BACKENDS),
    amqpUrl: read.url('AMQP_URL', ['amqp:', 'amqps:']),
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    sns: Object.freeze(snsConfig(env, read, emulatorPort)),
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
    shutdownTimeoutMs: read.integer('SHUTDOWN_TIMEOUT_MS', { min: 1000, max: 3_600_000 }),
    emulatorPort,
    logLevel: /** @type {import('pino').LevelWithSilent} */ (logLevel),
    // Share of the bucket's burst kept for transactional sends, which also get first claim on the rest.
    transactionalShare: read.number('TRANSACTIONAL_SHARE', { min: 0, max: 1 }),
    gatewayMetrics: Object.freeze(gatewayMetricsConfig(env, read)),
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
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 * @param {number} emulatorPort
 */
function snsConfig(env, read, emulatorPort) {
  const region = read.string('AWS_REGION', /^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as us-east-1');
  const raw = env.SNS_ENDPOINT?.trim();
  const hasAwsCredentials = AWS_CREDENTIAL_VARS.some((name) => env[name]);
  if (raw === 'aws' || (!raw && hasAwsCredentials)) {
    return { region, endpoint: undefined, emulator: false };
  }
  // No endpoint and no credentials: a local run, so the bundled emulator.
  const endpoint = raw ? read.url('SNS_ENDPOINT', ['http:', 'https:']) : `http://127.0.0.1:${emulatorPort}`;
  return { region, endpoint, emulator: !hasAwsCredentials };
}

/**
 * Where the governor reads the gateway's latency: GATEWAY_METRICS names the kind of
 * source, GATEWAY_METRICS_URL where it is (required for every kind but none).
 * @param {Record<string, string | undefined>} env
 * @param {ReturnType<typeof reader>} read
 */
function gatewayMetricsConfig(env, read) {
  const kind = /** @type {'none' | 'prometheus-api' | 'metrics-scrape' | 'active-probe'} */ (read.oneOf('GATEWAY_METRICS', GATEWAY_METRIC_KINDS));
  const histogram = read.string('GATEWAY_HISTOGRAM', /^[a-zA-Z_:][a-zA-Z0-9_:]*$/, 'a Prometheus metric name');
  if (kind === 'none') return { kind, url: null, histogram };
  if (!env.GATEWAY_METRICS_URL?.trim()) throw new ConfigError(`GATEWAY_METRICS_URL is required when GATEWAY_METRICS is ${kind}`);
  return { kind, url: read.url('GATEWAY_METRICS_URL', ['http:', 'https:']), histogram };
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
 * A URL with its password replaced, safe for logs and error messages.
 * @param {string} value
 */
export function redactUrl(value) {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString().replace(/\/$/, value.endsWith('/') ? '/' : '');
  } catch {
    return value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  }
}
