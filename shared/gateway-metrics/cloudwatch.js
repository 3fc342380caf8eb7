// Gateway metrics from Amazon CloudWatch: API Gateway (AWS/ApiGateway) and Application Load
// Balancers (AWS/ApplicationELB) publish latency, request counts and 5xx counts there, in
// one-minute periods. One GetMetricData call per read asks for the last few periods of four
// series (p95 and p99 as extended statistics, the request count's and the 5xx count's Sum),
// and the reading is the newest period that has data.
//
// The lag is the point of this file. CloudWatch has a period only after it has ended and the
// service has aggregated it, typically one to two minutes later, and a period is as long as
// a minute itself. So the reading says how old its data is: `ageMs` is the time since the
// newest complete period ended, and the governor's PACING_METRICS_LAG_MS should cover it
// (config/ defaults it to two minutes for this source). The period being read is never the
// one still in progress: the query ends at the last period boundary.
import http from 'node:http';
import https from 'node:https';
import { InputError } from '../errors.js';
import { unavailable, finiteOrNull, messageOf, positive } from './reading.js';

/** @typedef {import('./reading.js').GatewayMetricSource} GatewayMetricSource */

/** @type {Promise<[typeof import('@aws-sdk/client-cloudwatch'), typeof import('@smithy/node-http-handler')]> | undefined} */
let sdk;
/**
 * The CloudWatch client and its HTTP handler, loaded with a source's first read: config/
 * imports this file (for the namespaces and the dimension parser) in every process, and
 * loading them there took about 180 ms and 20 MB, in the processes that never read
 * CloudWatch too.
 */
const cloudWatchSdk = () => (sdk ??= Promise.all([import('@aws-sdk/client-cloudwatch'), import('@smithy/node-http-handler')]));

/**
 * What each supported namespace calls its series, and its latency unit.
 * API Gateway: Latency in ms (the whole request, integration included), Count, 5XXError
 * (a REST API, dimensions ApiName and Stage; an HTTP API, dimension ApiId, names it 5xx).
 * ALB: TargetResponseTime in seconds, RequestCount, HTTPCode_Target_5XX_Count (the
 * targets' own 5xx; the balancer's, such as 504s when targets time out, are
 * HTTPCode_ELB_5XX_Count and not counted here). An ALB publishes a 5xx count only in
 * periods that had one, so a missing error value reads as none.
 */
export const CLOUDWATCH_NAMESPACES = Object.freeze({
  'AWS/ApiGateway': Object.freeze({ latency: 'Latency', latencyScaleMs: 1, requests: 'Count', errors: '5XXError' }),
  'AWS/ApplicationELB': Object.freeze({ latency: 'TargetResponseTime', latencyScaleMs: 1000, requests: 'RequestCount', errors: 'HTTPCode_Target_5XX_Count' })
});

/** @typedef {keyof typeof CLOUDWATCH_NAMESPACES} CloudWatchNamespace */

/**
 * @typedef {object} CloudWatchOptions
 * @property {string} region
 * @property {CloudWatchNamespace} namespace
 * @property {Record<string, string>} dimensions  e.g. { ApiName: 'shop', Stage: 'prod' } or { LoadBalancer: 'app/shop/50dc6c495c0c9188' }
 * @property {number} [periodSeconds]  CloudWatch period (default 60, a multiple of 60)
 * @property {string} [endpoint]       another endpoint than AWS's (a VPC endpoint, a local responder)
 * @property {{ accessKeyId: string, secretAccessKey: string }} [credentials]  default: the SDK's chain
 * @property {number} [staleAfterMs]   data older than this is stale (default 4 periods + 2 min)
 * @property {number} [timeoutMs]      per request (default 5000)
 * @property {() => number} [now]      clock in ms since the epoch
 */

/**
 * Parses "Name=value,Name2=value2" into dimensions. Values may hold "=" and "/" (an ALB's
 * LoadBalancer is "app/name/id"), not ",". Throws an InputError saying what is wrong.
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseDimensions(text) {
  /** @type {Record<string, string>} */
  const dimensions = {};
  const pairs = text.split(',').map((pair) => pair.trim());
  // CloudWatch's own limit on dimensions per metric.
  if (pairs.length > 30) throw new InputError(`at most 30 dimensions, got ${pairs.length}`);
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    if (at < 1 || !/^[^\s=]{1,255}$/.test(name) || value.length === 0 || value.length > 1024) {
      throw new InputError(`"${pair}" is not Name=value (such as ApiName=shop or LoadBalancer=app/shop/50dc6c495c0c9188)`);
    }
    if (Object.hasOwn(dimensions, name)) throw new InputError(`dimension ${name} is given twice`);
    dimensions[name] = value;
  }
  return dimensions;
}

/**
 * The 5xx count's metric name: HTTP APIs (identified by ApiId) publish `5xx`, REST APIs `5XXError`.
 * @param {CloudWatchNamespace} namespace @param {Record<string, string>} dimensions
 */
export function errorsMetric(namespace, dimensions) {
  return namespace === 'AWS/ApiGateway' && Object.hasOwn(dimensions, 'ApiId') ? '5xx' : CLOUDWATCH_NAMESPACES[namespace].errors;
}

/**
 * A gateway metric source over CloudWatch's GetMetricData.
 * @param {CloudWatchOptions} options
 * @returns {GatewayMetricSource}
 */
export function createCloudWatchSource(options) {
  const series = CLOUDWATCH_NAMESPACES[options.namespace];
  if (!series) throw new InputError(`namespace must be ${Object.keys(CLOUDWATCH_NAMESPACES).join(' or ')}, got ${JSON.stringify(options.namespace)}`);
  const periodSeconds = options.periodSeconds ?? 60;
  if (!Number.isInteger(periodSeconds) || periodSeconds < 60 || periodSeconds % 60 !== 0) {
    throw new InputError(`periodSeconds must be a whole number of minutes in seconds (60, 120...), got ${periodSeconds}`);
  }
  const periodMs = periodSeconds * 1000;
  // Two minutes is CloudWatch's usual delay; four periods on top allow a late one or two.
  const staleAfterMs = positive('staleAfterMs', options.staleAfterMs ?? 4 * periodMs + 120_000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 5000);
  const now = options.now ?? Date.now;
  const dimensions = Object.entries(options.dimensions).map(([Name, Value]) => ({ Name, Value }));
  // Keep-alive, as for every metric source: a TLS handshake per read is wasted time.
  const agents = { httpAgent: new http.Agent({ keepAlive: true, maxSockets: 4 }), httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 4 }) };
  /** @type {import('@aws-sdk/client-cloudwatch').CloudWatchClient | undefined} */
  let client;
  const connect = async () => {
    const [{ CloudWatchClient }, { NodeHttpHandler }] = await cloudWatchSdk();
    return (client ??= new CloudWatchClient({
      region: options.region,
      endpoint: options.endpoint,
      credentials: options.credentials,
      // The governor reads again next window; retrying inside one read only makes it later.
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({ ...agents, connectionTimeout: timeoutMs, requestTimeout: timeoutMs })
    }));
  };
  /** @param {string} metric @param {string} stat */
  const query = (metric, stat) => ({
    MetricStat: { Metric: { Namespace: options.namespace, MetricName: metric, Dimensions: dimensions }, Period: periodSeconds, Stat: stat }
  });
  const queries = [
    { Id: 'p95', ...query(series.latency, 'p95') },
    { Id: 'p99', ...query(series.latency, 'p99') },
    { Id: 'requests', ...query(series.requests, 'Sum') },
    { Id: 'errors', ...query(errorsMetric(options.namespace, options.dimensions), 'Sum') }
  ];
  /** @type {number} when the newest good period ended */
  let lastGoodAt = -Infinity;

  return {
    async read() {
      const at = now();
      // Up to the last period boundary: the period in progress would read as a partial one.
      const endMs = Math.floor(at / periodMs) * periodMs;
      const startMs = endMs - Math.ceil(staleAfterMs / periodMs) * periodMs - periodMs;
      /** @type {Map<string, Map<number, number>>} series id → period start (ms) → value */
      const values = new Map();
      try {
        const [[{ GetMetricDataCommand }], cloudWatch] = await Promise.all([cloudWatchSdk(), connect()]);
        const answer = await cloudWatch.send(new GetMetricDataCommand({
          MetricDataQueries: queries, StartTime: new Date(startMs), EndTime: new Date(endMs), ScanBy: 'TimestampDescending'
        }), { abortSignal: AbortSignal.timeout(timeoutMs) });
        for (const result of answer.MetricDataResults ?? []) {
          if (result.StatusCode === 'Forbidden' || result.StatusCode === 'InternalError') {
            throw new Error(`${result.Id}: ${result.StatusCode}${result.Messages?.[0]?.Value ? ` (${result.Messages[0].Value})` : ''}`);
          }
          const points = new Map();
          (result.Timestamps ?? []).forEach((t, i) => points.set(t.getTime(), result.Values?.[i]));
          values.set(String(result.Id), points);
        }
      } catch (err) {
        const name = err instanceof Error && err.name !== 'Error' ? `${err.name}: ` : '';
        return unavailable(at - lastGoodAt, staleAfterMs, `cloudwatch: ${name}${messageOf(err)}`);
      }
      // The newest period any latency or request series has. A period with requests but no
      // latency gives a null p95 (the governor then counts the reading as unavailable).
      const starts = [...(values.get('p95')?.keys() ?? []), ...(values.get('requests')?.keys() ?? [])];
      if (starts.length === 0) {
        return unavailable(at - lastGoodAt, staleAfterMs,
          `cloudwatch: no ${options.namespace} datapoints for ${dimensions.map((d) => `${d.Name}=${d.Value}`).join(',')} since ${new Date(startMs).toISOString()}`);
      }
      const start = Math.max(...starts);
      const periodEnd = start + periodMs;
      const ageMs = Math.max(0, at - periodEnd);
      if (ageMs > staleAfterMs) return unavailable(ageMs, staleAfterMs);
      lastGoodAt = periodEnd;
      /** @param {string} id */
      const value = (id) => finiteOrNull(values.get(id)?.get(start));
      const latency = (/** @type {number | null} */ v) => (v === null ? null : v * series.latencyScaleMs);
      const requests = value('requests');
      const errors = value('errors') ?? 0;
      return {
        gateway: {
          p95Ms: latency(value('p95')),
          p99Ms: latency(value('p99')),
          errorRatio: requests !== null && requests > 0 ? Math.min(1, errors / requests) : null,
          rps: requests === null ? null : requests / periodSeconds
        },
        stale: false,
        ageMs
      };
    },
    async close() {
      client?.destroy();
      agents.httpAgent.destroy();
      agents.httpsAgent.destroy();
    }
  };
}
