// The demo's modelled API gateway (`--gateway modelled`): a real HTTP server with finite
// capacity and a Prometheus /metrics histogram, the thing the governor protects. Its
// behaviour follows the simulator's model (sim/gateway-model.js): `processes`
// single-threaded Node processes behind a router that assigns each request to one of them
// at random; each process serves its requests one at a
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
import { createLatencyHistogram, answer } from './latency-histogram.js';

/**
 * The active probe's endpoint (GATEWAY_METRICS=active-probe): it joins the same queue as the
 * users' requests, is counted in /metrics under its own route, and is left out of the
 * users' latencies the demo judges.
 */
export const PROBE_ROUTE = '/api/probe';

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
  const histogram = createLatencyHistogram(['/api', PROBE_ROUTE]);
  /** Every user's request: [end (epoch ms), latency ms, status], for the demo's exact per-window p95. */
  /** @type {number[]} */
  const samples = [];
  /** @type {Set<NodeJS.Timeout>} */
  const pending = new Set();

  /**
   * A request to the API; the probe's take the same queue but are not the users'.
   * @param {import('node:http').ServerResponse} res
   * @param {number} arrived
   * @param {string} route
   */
  function answerApi(res, arrived, route) {
    // The router picks a process at random; the process serves in order of arrival.
    const p = Math.floor(random.uniform() * processes);
    const start = Math.max(arrived, freeAt[p]);
    const done = start + random.exponential(serviceMs);
    freeAt[p] = done;
    const total = done - arrived + downstreamMs;
    const status = total > timeoutMs ? 503 : 200;
    const timer = setTimeout(() => {
      pending.delete(timer);
      answer(res, status, status === 200 ? '{"ok":true}' : '{"error":"gateway timeout"}', 'application/json', () => {
        const latencyMs = performance.now() - arrived;
        histogram.observe(route, status, latencyMs / 1000);
        if (route !== PROBE_ROUTE) samples.push(performance.timeOrigin + arrived + latencyMs, latencyMs, status);
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
      answer(res, 200, histogram.exposition(), 'text/plain; version=0.0.4');
    } else if (path === '/_demo/samples') {
      // For the demo's report only: every user request's end, latency and status, flattened.
      answer(res, 200, JSON.stringify({ samples }));
    } else if (path === '/healthz') {
      answer(res, 200, 'ok', 'text/plain');
    } else {
      answerApi(res, arrived, path === PROBE_ROUTE ? PROBE_ROUTE : '/api');
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
    exposition: histogram.exposition,
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
