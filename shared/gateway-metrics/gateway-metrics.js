// The gateway metric sources, one table: a new kind is one file in this folder plus one
// entry here. Each entry says how to build the source, how to derive its options from the
// operator's settings (GATEWAY_* and the controller's window), and whether its readings
// are current when read. config/ validates GATEWAY_METRICS against this table and the
// governor builds its source from it; neither names a kind.
import { InputError } from '../errors.js';
import { createPrometheusApiSource } from './prometheus-api.js';
import { createMetricsScrapeSource } from './metrics-scrape.js';
import { createActiveProbeSource } from './active-probe.js';

/** @typedef {import('./reading.js').GatewayMetricSource} GatewayMetricSource */

/**
 * What an operator sets for any source (config.gatewayMetrics, and the controller's window).
 * @typedef {object} GatewaySourceSettings
 * @property {string} url                 GATEWAY_METRICS_URL
 * @property {string} histogram           GATEWAY_HISTOGRAM
 * @property {'measured' | 'none'} requestRate  GATEWAY_REQUEST_RATE
 * @property {number} windowMs            PACING_METRICS_WINDOW_MS: each reading must cover one decision window
 */

/**
 * @template O
 * @typedef {object} GatewaySourceKind
 * @property {(options: O) => GatewayMetricSource} create
 * @property {(settings: GatewaySourceSettings) => O} options
 * @property {boolean} current  its readings measure up to the moment they are read (a scrape,
 *   a probe); a Prometheus server's answer is about one scrape interval old
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
    options: ({ url, histogram, requestRate, windowMs }) => ({
      url, metric: histogram, range: `${Math.max(30, Math.round(windowMs / 1000))}s`, ...(requestRate === 'none' ? { queries: { rps: null } } : {})
    }),
    current: false
  }),
  'metrics-scrape': /** @type {GatewaySourceKind<import('./metrics-scrape.js').MetricsScrapeOptions>} */ ({
    create: createMetricsScrapeSource,
    // Its window is the time between two reads: the governor reads once per decision window.
    options: ({ url, histogram }) => ({ url, histogram }),
    current: true
  }),
  'active-probe': /** @type {GatewaySourceKind<import('./active-probe.js').ActiveProbeOptions>} */ ({
    create: createActiveProbeSource,
    // At least five probes in each window: fewer give no useful p95.
    options: ({ url, windowMs }) => ({ url, windowMs, intervalMs: Math.min(1000, Math.floor(windowMs / 5)) }),
    current: true
  })
};

/** @typedef {keyof typeof GATEWAY_METRIC_SOURCES} GatewayMetricKind */

/** The kinds, in the table's order. */
export const GATEWAY_METRIC_KINDS = /** @type {GatewayMetricKind[]} */ (Object.keys(GATEWAY_METRIC_SOURCES));

/** The kinds for a message: "prometheus-api, metrics-scrape or active-probe". */
export const GATEWAY_METRIC_KINDS_TEXT = `${GATEWAY_METRIC_KINDS.slice(0, -1).join(', ')} or ${GATEWAY_METRIC_KINDS.at(-1)}`;

/**
 * @typedef {({ kind: 'prometheus-api' } & import('./prometheus-api.js').PrometheusApiOptions)
 *   | ({ kind: 'metrics-scrape' } & import('./metrics-scrape.js').MetricsScrapeOptions)
 *   | ({ kind: 'active-probe' } & import('./active-probe.js').ActiveProbeOptions)} GatewayMetricsConfig
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
