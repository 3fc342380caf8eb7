// The gateway metric sources, one table: a new kind is one file in this folder plus one
// entry here. Each entry says how to build the source, how to derive its options from the
// operator's settings (GATEWAY_*, CLOUDWATCH_* and the controller's window), and how old
// its readings are when they arrive (the default lag). config/ validates GATEWAY_METRICS
// against this table and the governor builds its source from it.
import { InputError } from '../errors.js';
import { createPrometheusApiSource } from './prometheus-api.js';
import { createMetricsScrapeSource } from './metrics-scrape.js';
import { createActiveProbeSource } from './active-probe.js';
import { createCloudWatchSource } from './cloudwatch.js';
import { CONTROLLER_DEFAULTS } from '../pacing/controller-options.js';

/** @typedef {import('./reading.js').GatewayMetricSource} GatewayMetricSource */

/**
 * What an operator sets for any source (config.gatewayMetrics, and the controller's window).
 * @typedef {object} GatewaySourceSettings
 * @property {string | null} url          GATEWAY_METRICS_URL (cloudwatch: an endpoint override, else null)
 * @property {string} histogram           GATEWAY_HISTOGRAM
 * @property {'seconds' | 'milliseconds'} [histogramUnit]  GATEWAY_HISTOGRAM_UNIT (default seconds)
 * @property {string} [selector]          GATEWAY_PROMETHEUS_SELECTOR: label matchers for prometheus-api (default none)
 * @property {string} [statusLabel]       GATEWAY_STATUS_LABEL: the label holding the HTTP status (default status)
 * @property {'measured' | 'none'} requestRate  GATEWAY_REQUEST_RATE
 * @property {CloudWatchSettings | null} [cloudwatch]  CLOUDWATCH_* (cloudwatch only)
 * @property {number} windowMs            PACING_METRICS_WINDOW_MS: each reading must cover one decision window
 */

/**
 * @typedef {object} CloudWatchSettings
 * @property {string} region              AWS_REGION
 * @property {import('./cloudwatch.js').CloudWatchNamespace} namespace  CLOUDWATCH_NAMESPACE
 * @property {Record<string, string>} dimensions  CLOUDWATCH_DIMENSIONS
 * @property {number} periodSeconds       CLOUDWATCH_PERIOD_SECONDS
 */

/** Active probes started in each metrics window (see the active-probe entry below). */
const PROBES_PER_WINDOW = 20;

/** ms per unit of GATEWAY_HISTOGRAM_UNIT. @param {GatewaySourceSettings} settings */
const latencyScaleMs = ({ histogramUnit }) => (histogramUnit === 'milliseconds' ? 1 : 1000);

/** @param {string | null} url @param {string} kind */
function required(url, kind) {
  if (url === null) throw new InputError(`gateway metrics kind ${kind} needs a URL`);
  return url;
}

/**
 * @template O
 * @typedef {object} GatewaySourceKind
 * @property {(options: O) => GatewayMetricSource} create
 * @property {(settings: GatewaySourceSettings) => O} options
 * @property {number} defaultLagMs  how old its readings are when they arrive (PACING_METRICS_LAG_MS's
 *   default): 0 for a scrape or a probe, which measure up to the moment they are read; about one
 *   scrape interval for a Prometheus server; a minute or two for CloudWatch
 */

/**
 * Every source, by GATEWAY_METRICS kind.
 * @satisfies {Record<string, GatewaySourceKind<any>>}
 */
export const GATEWAY_METRIC_SOURCES = {
  'prometheus-api': /** @type {GatewaySourceKind<import('./prometheus-api.js').PrometheusApiOptions>} */ ({
    create: createPrometheusApiSource,
    // Prometheus's rate() needs two scrapes inside its range, so the PromQL range is never
    // shorter than 30 s (two 15-s scrapes); a longer range only smooths the reading
    // (PACING_METRICS_LAG_MS covers the extra age).
    options: (settings) => ({
      url: required(settings.url, 'prometheus-api'),
      metric: settings.histogram,
      range: `${Math.max(30, Math.round(settings.windowMs / 1000))}s`,
      selector: settings.selector ?? '',
      statusLabel: settings.statusLabel ?? 'status',
      latencyScaleMs: latencyScaleMs(settings),
      ...(settings.requestRate === 'none' ? { queries: { rps: null } } : {})
    }),
    defaultLagMs: CONTROLLER_DEFAULTS.metricsLagMs
  }),
  'metrics-scrape': /** @type {GatewaySourceKind<import('./metrics-scrape.js').MetricsScrapeOptions>} */ ({
    create: createMetricsScrapeSource,
    // Its window is the time between two reads: the governor reads once per decision window.
    options: (settings) => ({
      url: required(settings.url, 'metrics-scrape'),
      histogram: settings.histogram,
      latencyScaleMs: latencyScaleMs(settings),
      errorMatch: { [settings.statusLabel ?? 'status']: '5..' }
    }),
    defaultLagMs: 0
  }),
  'active-probe': /** @type {GatewaySourceKind<import('./active-probe.js').ActiveProbeOptions>} */ ({
    create: createActiveProbeSource,
    // Twenty probes a window, at most one a second: a p95 needs about twenty draws to be a
    // rank of the sample rather than its largest stretched (active-probe.js sampleQuantile).
    // Five read the 80th percentile or so, and the governor aimed the gateway near the SLO.
    // On the demo's 2-s windows that is ten probes a second, about 1% of its one process.
    options: ({ url, windowMs }) => ({ url: required(url, 'active-probe'), windowMs, intervalMs: Math.min(1000, Math.floor(windowMs / PROBES_PER_WINDOW)) }),
    defaultLagMs: 0
  }),
  'cloudwatch': /** @type {GatewaySourceKind<import('./cloudwatch.js').CloudWatchOptions>} */ ({
    create: createCloudWatchSource,
    // The period is the decision window (config/ holds them equal); GATEWAY_METRICS_URL, when
    // set, replaces AWS's endpoint (a VPC endpoint, a local responder).
    options: ({ url, cloudwatch }) => {
      if (!cloudwatch) throw new InputError('gateway metrics kind cloudwatch needs its namespace, dimensions and period');
      return { ...cloudwatch, ...(url ? { endpoint: url } : {}) };
    },
    // CloudWatch has a one-minute period one to two minutes after it ends (docs/pacing.md).
    defaultLagMs: 120_000
  })
};

/** @typedef {keyof typeof GATEWAY_METRIC_SOURCES} GatewayMetricKind */

/** The kinds, in the table's order. */
export const GATEWAY_METRIC_KINDS = /** @type {GatewayMetricKind[]} */ (Object.keys(GATEWAY_METRIC_SOURCES));

/** The kinds for a message: "prometheus-api, metrics-scrape, active-probe or cloudwatch". */
export const GATEWAY_METRIC_KINDS_TEXT = `${GATEWAY_METRIC_KINDS.slice(0, -1).join(', ')} or ${GATEWAY_METRIC_KINDS.at(-1)}`;

/**
 * @typedef {({ kind: 'prometheus-api' } & import('./prometheus-api.js').PrometheusApiOptions)
 *   | ({ kind: 'metrics-scrape' } & import('./metrics-scrape.js').MetricsScrapeOptions)
 *   | ({ kind: 'active-probe' } & import('./active-probe.js').ActiveProbeOptions)
 *   | ({ kind: 'cloudwatch' } & import('./cloudwatch.js').CloudWatchOptions)} GatewayMetricsConfig
 */

/**
 * A source kind's options from the operator's settings, with the kind.
 * @param {string} kind
 * @param {GatewaySourceSettings} settings
 * @returns {GatewayMetricsConfig}
 */
export function gatewaySourceConfig(kind, settings) {
  const entry = sourceKind(kind);
  return /** @type {GatewayMetricsConfig} */ ({ kind, ...entry.options(settings) });
}

/**
 * The gateway metric source `config.kind` names, built from the rest of `config`.
 * @param {GatewayMetricsConfig} config
 * @returns {GatewayMetricSource}
 */
export function createGatewayMetrics(config) {
  const { kind, ...options } = config;
  return sourceKind(kind).create(/** @type {any} */ (options));
}

/** @param {string} kind @returns {GatewaySourceKind<any>} */
function sourceKind(kind) {
  if (!Object.hasOwn(GATEWAY_METRIC_SOURCES, kind)) {
    throw new InputError(`gateway metrics kind must be ${GATEWAY_METRIC_KINDS_TEXT}, got ${JSON.stringify(kind)}`);
  }
  return GATEWAY_METRIC_SOURCES[/** @type {GatewayMetricKind} */ (kind)];
}
