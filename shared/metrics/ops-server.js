// The operations endpoints every process type serves: /metrics (Prometheus text format),
// /healthz (the process is alive) and /readyz (it has started, is not stopping, and
// reaches its dependencies). lifecycle.js creates one per process and listens on
// METRICS_PORT when that is set; the web process also serves them on its own port.
//
// With WEB_CONCURRENCY > 1 the cluster's primary listens: /metrics sums the children's
// registries (prom-client's AggregatorRegistry; shared-state gauges take the max), and
// /readyz is ready only when every child is.
import cluster from 'node:cluster';
import http from 'node:http';
import { AggregatorRegistry } from 'prom-client';
import { createMetricsRegistry, dependencyMetrics, exposition } from './registry.js';
import { createReadiness } from './readiness.js';

/** @typedef {import('./readiness.js').ReadinessCheck} ReadinessCheck */
/** @typedef {{ status: number, body: Record<string, unknown> }} Answer */
/**
 * What a process type's start function gets from lifecycle.js: the registry its parts add
 * their metrics to, and the endpoints' answers (for a process that serves them on its own
 * HTTP server too, as web does).
 * @typedef {object} OpsContext
 * @property {string} processType
 * @property {import('./registry.js').MetricsRegistry} registry
 * @property {() => Answer} health
 * @property {() => Promise<Answer>} ready
 * @property {() => Promise<{ contentType: string, text: string }>} metrics
 */

const READY_REQUEST = 'pushpace:readyz';
const READY_RESPONSE = 'pushpace:readyz-response';
const CHILD_TIMEOUT_MS = 4000;

/**
 * @param {object} options
 * @param {string} options.name               the process type
 * @param {number | null} options.port         METRICS_PORT, or null for no server of its own
 * @param {import('pino').Logger} options.logger
 * @param {number} [options.processes]        cluster size (WEB_CONCURRENCY when clustered)
 */
export function createOps({ name, port, logger, processes = 1 }) {
  const role = processes > 1 ? (cluster.isPrimary ? 'primary' : 'child') : 'single';
  const registry = createMetricsRegistry(name);
  const startedAt = Date.now();
  /** @type {'starting' | 'running' | 'stopping'} */
  let phase = role === 'primary' ? 'running' : 'starting';
  let readiness = createReadiness([]);
  /** @type {http.Server | null} */
  let server = null;
  /** @type {AggregatorRegistry<import('prom-client').PrometheusContentType> | null} */
  let aggregator = null;

  if (role === 'primary') {
    aggregator = new AggregatorRegistry();
  } else if (role === 'child') {
    // Answers the primary's requests for this child's metrics and readiness.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
    process.on('message', (/** @type {any} */ message) => {
      if (message?.type !== READY_REQUEST || !process.send) return;
      // The callback keeps a send on a channel closed meanwhile (shutdown) from becoming an 'error' event.
      void ownReadiness().then((answer) => process.send?.({ type: READY_RESPONSE, id: message.id, ...answer }, undefined, undefined, () => {}));
    });
  }

  /** @returns {Promise<Answer>} */
  async function ownReadiness() {
    if (phase !== 'running') return { status: 503, body: { status: phase, process: name } };
    const { ok, checks } = await readiness.evaluate();
    return { status: ok ? 200 : 503, body: { status: ok ? 'ready' : 'not ready', process: name, checks } };
  }

  /** @returns {Promise<Answer>} */
  async function clusterReadiness() {
    if (phase !== 'running') return { status: 503, body: { status: phase, process: name } };
    const children = Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected());
    if (children.length === 0) return { status: 503, body: { status: 'no cluster workers', process: name } };
    const id = `${Date.now()}-${Math.random()}`;
    const answers = await Promise.all(children.map((child) => new Promise((resolve) => {
      /** @param {string} status */
      const noAnswer = (status) => {
        clearTimeout(timer);
        child?.off('message', onMessage);
        resolve({ status: 503, body: { status, pid: child?.process.pid } });
      };
      const timer = setTimeout(() => noAnswer('no answer'), CHILD_TIMEOUT_MS);
      /** @param {any} message */
      function onMessage(message) {
        if (message?.type !== READY_RESPONSE || message.id !== id) return;
        clearTimeout(timer);
        child?.off('message', onMessage);
        resolve({ status: message.status, body: { ...message.body, pid: child?.process.pid } });
      }
      child?.on('message', onMessage);
      // With a callback a child that has just disconnected is an answer, not an 'error' event
      // that nothing listens for.
      child?.send({ type: READY_REQUEST, id }, undefined, undefined, (error) => { if (error) noAnswer('disconnected'); });
    })));
    const ok = answers.every((a) => /** @type {Answer} */ (a).status === 200);
    return { status: ok ? 200 : 503, body: { status: ok ? 'ready' : 'not ready', process: name, workers: answers.map((a) => /** @type {Answer} */ (a).body) } };
  }

  /** @type {OpsContext} */
  const context = {
    processType: name,
    registry,
    /** /healthz: the process is alive and its event loop turns. */
    health: () => ({ status: 200, body: { status: 'ok', process: name, pid: process.pid, phase, uptimeSeconds: Math.round((Date.now() - startedAt) / 1000) } }),
    /** /readyz: started, not stopping, and every dependency check passes. */
    ready: () => (role === 'primary' ? clusterReadiness() : ownReadiness()),
    /** /metrics: the exposition text and its content type. */
    async metrics() {
      if (aggregator) return { contentType: aggregator.contentType, text: exposition(await aggregator.clusterMetrics()) };
      return { contentType: registry.contentType, text: exposition(await registry.metrics()) };
    }
  };

  const ops = {
    context,

    /**
     * The process has started: from now on /readyz runs its dependency checks, and
     * pushpace_dependency_up reports them.
     * @param {{ readiness?: ReadinessCheck[] }} running
     */
    started(running) {
      readiness = createReadiness(running.readiness ?? []);
      if (readiness.names.length > 0) {
        const { up } = dependencyMetrics(registry, async () => {
          const { checks } = await readiness.evaluate();
          for (const check of checks) up.set({ dependency: check.name }, check.ok ? 1 : 0);
        });
      }
      phase = 'running';
    },

    /** Shutdown has begun: /readyz answers 503 so nothing new is routed here. */
    stopping() {
      phase = 'stopping';
    },

    /** Serves the endpoints on `port` (0: any free port), unless this is a cluster child or no port is set. */
    async listen() {
      if (port === null || role === 'child') return null;
      server = http.createServer((req, res) => void handle(req, res));
      // Keep-alive from Prometheus reuses the connection between scrapes.
      server.keepAliveTimeout = 65_000;
      await new Promise((resolve, reject) => {
        server?.once('error', reject);
        server?.listen(port, '0.0.0.0', () => resolve(undefined));
      });
      const address = /** @type {import('node:net').AddressInfo} */ (server.address());
      logger.info({ port: address.port, paths: ['/metrics', '/healthz', '/readyz'] }, 'metrics and health server listening');
      return address.port;
    },

    async close() {
      const s = server;
      server = null;
      if (!s) return;
      s.closeIdleConnections();
      await new Promise((resolve) => s.close(() => resolve(undefined)));
    }
  };

  /** @param {http.IncomingMessage} req @param {http.ServerResponse} res */
  async function handle(req, res) {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
      } else if (path === '/metrics') {
        const { contentType, text } = await context.metrics();
        res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : text);
      } else if (path === '/healthz' || path === '/readyz') {
        const { status, body } = path === '/healthz' ? context.health() : await context.ready();
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
      } else {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found; try /metrics, /healthz or /readyz' }));
      }
    } catch (error) {
      logger.warn({ err: error, path }, 'operations endpoint failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: /** @type {Error} */ (error).message }));
    }
  }

  return ops;
}

/** @typedef {ReturnType<typeof createOps>} Ops */

/**
 * An OpsContext for a process type started without lifecycle.js (a test or a script that
 * calls its start function directly): a registry of its own and no endpoints served.
 * @param {string} processType
 * @returns {OpsContext}
 */
export function detachedOps(processType) {
  const registry = createMetricsRegistry(processType);
  return {
    processType,
    registry,
    health: () => ({ status: 200, body: { status: 'ok', process: processType } }),
    ready: async () => ({ status: 200, body: { status: 'ready', process: processType, checks: [] } }),
    metrics: async () => ({ contentType: registry.contentType, text: exposition(await registry.metrics()) })
  };
}
