// A small local CloudWatch for tests: GetMetricData over the protocol @aws-sdk/client-cloudwatch
// speaks (AWS JSON 1.0: POST /, X-Amz-Target GraniteServiceVersion20100801.GetMetricData,
// timestamps as epoch seconds, query-compatible errors), answering from datapoints the test
// puts in. It checks what CloudWatch would refuse (a MetricStat without its namespace, metric,
// period or stat) and records every request, so a test sees what the source asked.
import http from 'node:http';

/**
 * @typedef {object} Datapoint
 * @property {number} atMs     the period's start, ms since the epoch
 * @property {number} value
 */

/**
 * @typedef {object} GetMetricDataRequest  what the SDK sent, decoded
 * @property {Array<{ Id: string, MetricStat: { Metric: { Namespace: string, MetricName: string, Dimensions?: Array<{ Name: string, Value: string }> }, Period: number, Stat: string } }>} MetricDataQueries
 * @property {number} StartTime  epoch seconds
 * @property {number} EndTime    epoch seconds
 * @property {string} [ScanBy]
 */

/**
 * The key a series is stored under.
 * @param {string} namespace @param {string} metric @param {Record<string, string>} dimensions @param {string} stat
 */
function seriesKey(namespace, metric, dimensions, stat) {
  const dims = Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b)).map(([n, v]) => `${n}=${v}`).join(',');
  return `${namespace}|${metric}|${dims}|${stat}`;
}

/**
 * Starts the responder on 127.0.0.1, port 0.
 * @returns {Promise<{ url: string, requests: GetMetricDataRequest[], headers: http.IncomingHttpHeaders[],
 *   put(series: { namespace: string, metric: string, dimensions: Record<string, string>, stat: string }, points: Datapoint[]): void,
 *   clear(): void, failNext(code: string, status?: number): void, hang(on: boolean): void, close(): Promise<void> }>}
 */
export async function startCloudWatchResponder() {
  /** @type {Map<string, Datapoint[]>} */
  const store = new Map();
  /** @type {GetMetricDataRequest[]} */
  const requests = [];
  /** @type {http.IncomingHttpHeaders[]} */
  const headers = [];
  /** @type {{ code: string, status: number } | null} */
  let failure = null;
  let hanging = false;

  const server = http.createServer((req, res) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (hanging) return;
      headers.push(req.headers);
      /** @param {number} status @param {string} code @param {string} message */
      const error = (status, code, message) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': `${code};Sender` });
        res.end(JSON.stringify({ __type: `com.amazonaws.cloudwatch#${code}`, message }));
      };
      if (req.method !== 'POST' || req.headers['x-amz-target'] !== 'GraniteServiceVersion20100801.GetMetricData') {
        return error(400, 'InvalidAction', `unsupported: ${req.method} ${req.headers['x-amz-target']}`);
      }
      /** @type {GetMetricDataRequest} */
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return error(400, 'SerializationException', 'body is not JSON');
      }
      requests.push(body);
      if (failure) {
        const { code, status } = failure;
        failure = null;
        return error(status, code, `injected ${code}`);
      }
      const results = [];
      for (const q of body.MetricDataQueries ?? []) {
        const stat = q.MetricStat;
        if (!stat?.Metric?.Namespace || !stat.Metric.MetricName || !stat.Period || !stat.Stat) {
          return error(400, 'InvalidParameterValue', `query ${q.Id}: MetricStat needs Namespace, MetricName, Period and Stat`);
        }
        const dims = Object.fromEntries((stat.Metric.Dimensions ?? []).map((d) => [d.Name, d.Value]));
        const points = (store.get(seriesKey(stat.Metric.Namespace, stat.Metric.MetricName, dims, stat.Stat)) ?? [])
          .filter((p) => p.atMs >= body.StartTime * 1000 && p.atMs < body.EndTime * 1000)
          .sort((a, b) => (body.ScanBy === 'TimestampAscending' ? a.atMs - b.atMs : b.atMs - a.atMs));
        results.push({
          Id: q.Id, Label: stat.Metric.MetricName, StatusCode: 'Complete', Messages: [],
          Timestamps: points.map((p) => p.atMs / 1000), Values: points.map((p) => p.value)
        });
      }
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ MetricDataResults: results, Messages: [] }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    headers,
    put({ namespace, metric, dimensions, stat }, points) {
      const key = seriesKey(namespace, metric, dimensions, stat);
      store.set(key, [...(store.get(key) ?? []), ...points]);
    },
    clear() {
      store.clear();
    },
    /** The next request is answered with this error. */
    failNext(code, status = 400) {
      failure = { code, status };
    },
    /** While on, requests are read and never answered. */
    hang(on) {
      hanging = on;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    }
  };
}
