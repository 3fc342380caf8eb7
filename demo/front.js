// A router in front of the demo's real gateway, as Heroku's router, a load balancer or an
// ingress proxy sits in front of an app: it forwards every request to the gateway and keeps
// its own Prometheus histogram, timed from the moment the router parses a request to the end
// of the gateway's answer. That includes what the gateway's own middleware histogram misses:
// the wait in the gateway's kernel socket buffers while its one event loop runs another
// request's CPU, and the spells when the machine gives the gateway's process no CPU at all.
// Its /metrics is the router's; every other path goes through to the gateway.
import { createServer, request, Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createLatencyHistogram, answer } from './latency-histogram.js';
import { PROBE_ROUTE } from './gateway.js';

/**
 * @param {{ upstream: string }} options  the gateway's base URL
 */
export function createFront({ upstream }) {
  const target = new URL(upstream);
  // One connection per request in flight, kept open: the queue is the gateway's, not ours.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const histogram = createLatencyHistogram(['/api', PROBE_ROUTE]);

  const server = createServer((req, res) => {
    const arrived = performance.now();
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      req.resume();
      answer(res, 200, histogram.exposition(), 'text/plain; version=0.0.4');
      return;
    }
    const route = path === PROBE_ROUTE ? PROBE_ROUTE : path.startsWith('/api') ? '/api' : null;
    const forward = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent }, (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
      upstreamRes.pipe(res);
      res.on('finish', () => {
        if (route) histogram.observe(route, upstreamRes.statusCode ?? 502, (performance.now() - arrived) / 1000);
      });
    });
    // Heroku's router gives up after 30 s.
    forward.setTimeout(30_000, () => forward.destroy(new Error('upstream timeout')));
    forward.on('error', () => {
      if (route) histogram.observe(route, 503, (performance.now() - arrived) / 1000);
      if (!res.headersSent) answer(res, 503, JSON.stringify({ error: 'upstream unavailable' }));
      else res.destroy();
    });
    req.pipe(forward);
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
      agent.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    }
  };
}
