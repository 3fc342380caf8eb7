// Chooses a gateway metric source by `kind`. Takes plain options; config/ maps environment
// variables onto them.
import { InputError } from '../errors.js';
import { createPrometheusApiSource } from './prometheus-api.js';
import { createMetricsScrapeSource } from './metrics-scrape.js';
import { createActiveProbeSource } from './active-probe.js';

/**
 * @typedef {({ kind: 'prometheus-api' } & import('./prometheus-api.js').PrometheusApiOptions)
 *   | ({ kind: 'metrics-scrape' } & import('./metrics-scrape.js').MetricsScrapeOptions)
 *   | ({ kind: 'active-probe' } & import('./active-probe.js').ActiveProbeOptions)} GatewayMetricsConfig
 */

/**
 * The gateway metric source `config.kind` names, built from the rest of `config`.
 * @param {GatewayMetricsConfig} config
 * @returns {import('./reading.js').GatewayMetricSource}
 */
export function createGatewayMetrics(config) {
  const { kind, ...options } = config;
  switch (kind) {
    case 'prometheus-api': return createPrometheusApiSource(/** @type {import('./prometheus-api.js').PrometheusApiOptions} */ (options));
    case 'metrics-scrape': return createMetricsScrapeSource(/** @type {import('./metrics-scrape.js').MetricsScrapeOptions} */ (options));
    case 'active-probe': return createActiveProbeSource(/** @type {import('./active-probe.js').ActiveProbeOptions} */ (options));
    default:
      throw new InputError(`gateway metrics kind must be prometheus-api, metrics-scrape or active-probe, got ${JSON.stringify(kind)}`);
  }
}
