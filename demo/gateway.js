// The demo's API gateway: a real HTTP server with finite capacity and a Prometheus /metrics
// histogram, the thing the governor protects. Its behaviour follows the simulator's model
// (sim/gateway-model.js): `processes` single-threaded Node processes behind a router that
// assigns each request to one of them at random; each process serves its requests one at a
// time, in order, with an exponentially distributed CPU time of mean `serviceMs`; then the
// services behind the gateway add `downstreamMs`. So each process is an M/M/1 queue, the
// capacity is processes × 1000 / serviceMs requests/s, and the p95 climbs steeply as the
// load nears it. A request that would take longer than `timeoutMs` is answered 503 at the
// timeout, as Heroku's router does after 30 s (its CPU time is still spent).
//
// The queue is simulated with one timer per request, not with CPU: a shared 2-core machine
// then measures the model, not its neighbours. The latency recorded is the real one, from
// the request's arrival to the end of its response, so event-loop delays count too.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createRandom } from './random.js';

/** Histogram buckets in seconds: fine around the SLOs a demo uses, coarse beyond. */
export const LATENCY_BUCKETS = Object.freeze([0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25, 0.275, 0.3,
  0.325, 0.35, 0.375, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 1, 1.5, 2, 3, 5, 10]);

/**
 * @typedef {object} GatewayOptions
 * @property {number} processes     Node processes serving requests
 * @property {number} serviceMs     mean CPU time per request in one process
 * @property {number} downstreamMs  time spent waiting on the services behind the gateway
 * @property {number} timeoutMs     requests that would take longer are answered 503 then
 * @property {number} [seed]
 */

/**
 * The rate (requests/s) at which the stationary p95 of this gateway equals `p95Ms`: the
 * M/M/1 sojourn time is exponential with rate μ₁ − λ₁ per process, so
 * p95 = downstream + serviceMs·ln 20 / (1 − ρ). The chart's "SLO capacity" line.
 * @param {GatewayOptions} options
 * @param {number} p95Ms
 */
export function rateAtP95({ processes, serviceMs, downstreamMs }, p95Ms) {
  const capacity = (processes * 1000) / serviceMs;
  if (p95Ms <= downstreamMs) return 0;
  return Math.max(0, capacity * (1 - (serviceMs * Math.log(20)) / (p95Ms - downstreamMs)));
}

/**
 * Creates the gateway; nothing listens until listen().
 * @param {GatewayOptions} options
 */
export function createDemoGateway({ processes, serviceMs, downstreamMs, timeoutMs, seed = 1 }) {
  const random = createRandom(seed);
  /** When each process will be free again (performance.now() ms). */
  const freeAt = new Float64Array(processes);
  /** le index → cumulative count, per status; the last slot is +Inf. */
  /** @type {Map<number, { buckets: Float64Array, sum: number, count: number }>} */
  const histograms = new Map();
  /** Every request: [end (epoch ms), latency ms, status], for the demo's exact per-window p95. */
  /** @type {number[]} */
  const samples = [];
  /** @type {Set<NodeJS.Timeout>} */
  const pending = new Set();
  // Exported from the start, zeros included, as a client library does for a label set it
  // knows: a scrape before the first request then reads an empty histogram, not none.
  observeNothing(200);

  /** @param {number} status */
  function observeNothing(status) {
    histograms.set(status, { buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 });
  }

  /** @param {number} status @param {number} seconds */
  function observe(status, seconds) {
    let h = histograms.get(status);
    if (!h) {
      observeNothing(status);
      h = /** @type {{ buckets: Float64Array, sum: number, count: number }} */ (histograms.get(status));
    }
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (seconds <= LATENCY_BUCKETS[i]) h.buckets[i]++;
    h.buckets[LATENCY_BUCKETS.length]++;
    h.sum += seconds;
    h.count++;
  }

  /** The Prometheus text exposition of the latency histogram, per status code. */
  function exposition() {
    const name = 'http_request_duration_seconds';
    const lines = [`# HELP ${name} API request latency, arrival to response end.`, `# TYPE ${name} histogram`];
    for (const [status, h] of [...histograms].sort((a, b) => a[0] - b[0])) {
      const labels = `route="/api",status="${status}"`;
      LATENCY_BUCKETS.forEach((le, i) => lines.push(`${name}_bucket{${labels},le="${le}"} ${h.buckets[i]}`));
      lines.push(`${name}_bucket{${labels},le="+Inf"} ${h.buckets[LATENCY_BUCKETS.length]}`);
      lines.push(`${name}_sum{${labels}} ${h.sum}`, `${name}_count{${labels}} ${h.count}`);
    }
    return lines.join('\n') + '\n';
  }

  /** @param {import('node:http').ServerResponse} res @param {number} arrived */
  function answerApi(res, arrived) {
    // The router picks a process at random; the process serves in order of arrival.
    const p = Math.floor(random.uniform() * processes);
    const start = Math.max(arrived, freeAt[p]);
    const done = start + random.exponential(serviceMs);
    freeAt[p] = done;
    const total = done - arrived + downstreamMs;
    const status = total > timeoutMs ? 503 : 200;
    const timer = setTimeout(() => {
      pending.delete(timer);
      const body = status === 200 ? '{"ok":true}' : '{"error":"gateway timeout"}';
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body, () => {
        const latencyMs = performance.now() - arrived;
        observe(status, latencyMs / 1000);
        samples.push(performance.timeOrigin + arrived + latencyMs, latencyMs, status);
      });
    }, Math.min(total, timeoutMs));
    pending.add(timer);
  }

  const server = createServer((req, res) => {
    const arrived = performance.now();
    const path = (req.url ?? '/').split('?')[0];
    // Drain the (empty) body so the keep-alive socket is ready for the next request.
    req.resume();
    if (path === '/metrics') {
      const text = exposition();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } else if (path === '/_demo/samples') {
      // For the demo's report only: every request's end, latency and status, flattened.
      const body = JSON.stringify({ samples });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-length': 2 });
      res.end('ok');
    } else {
      answerApi(res, arrived);
    }
  });
  server.keepAliveTimeout = 65_000;

  return {
    /**
     * @param {number} [port]  0 picks a free one
     * @returns {Promise<string>} the base URL
     */
    listen(port = 0) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve(`http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`);
        });
      });
    },
    /** The histogram as /metrics shows it. */
    exposition,
    /** @returns {Promise<void>} */
    close() {
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  };
}
