// Process lifecycle for every process type: optional clustering, SIGTERM
// handling within Heroku's 30 s window, and exit codes. Entry files call
// runProcess; only they (through it) end the process.
import cluster from 'node:cluster';
import { exitCodeFor } from './errors.js';
import { createLogger } from './logger.js';
import { createOps } from './metrics/ops-server.js';

/**
 * What a start function returns: close(), and the dependency checks /readyz runs.
 * @typedef {{ close(): Promise<void>, readiness?: import('./metrics/readiness.js').ReadinessCheck[] }} Running
 */

/**
 * Runs a Procfile process type: validates the environment (a bad variable exits 2
 * with its name), logs as `name`, and runs `start` under runProcess, in
 * WEB_CONCURRENCY processes when `clustered`.
 * @param {string} name the process type
 * @param {() => import('../config/index.js').Config} readConfig  loadConfig(process.env), from the entry file
 * @param {(config: import('../config/index.js').Config, logger: import('pino').Logger, ops: import('./metrics/ops-server.js').OpsContext) => Promise<Running>} start
 * @param {{ clustered?: boolean }} [options]
 */
export async function runProcessType(name, readConfig, start, { clustered = true } = {}) {
  let config;
  try {
    config = readConfig();
  } catch (error) {
    process.stderr.write(`${name}: ${/** @type {Error} */ (error).message}\n`);
    process.exit(exitCodeFor(error));
  }
  const logger = createLogger(config, { process: name });
  const processes = clustered ? config.webConcurrency : 1;
  // Metrics, /healthz and /readyz, served on METRICS_PORT when set (shared/metrics/ops-server.js).
  const ops = createOps({ name, port: config.metricsPort, logger, processes });
  await runProcess({ logger, processes, shutdownTimeoutMs: config.shutdownTimeoutMs, ops }, () => start(config, logger, ops.context));
}

/**
 * Runs `start` in this process, or in `processes` cluster workers (as throng
 * does) when more than one. On SIGTERM or SIGINT it calls close() and exits 0,
 * or exits 1 if close() fails or takes longer than `shutdownTimeoutMs`.
 * @param {object} options
 * @param {import('pino').Logger} options.logger
 * @param {number} [options.processes]
 * @param {number} options.shutdownTimeoutMs
 * @param {import('./metrics/ops-server.js').Ops} [options.ops] the operations endpoints: told when started and stopping
 * @param {() => Promise<Running>} start
 */
export async function runProcess({ logger, processes = 1, shutdownTimeoutMs, ops }, start) {
  if (processes > 1 && cluster.isPrimary) return runPrimary(logger, processes, shutdownTimeoutMs, ops);

  /** @type {Promise<Running> | null} */
  let starting = null;
  let stopping = false;
  /** @param {string} signal */
  const shutdown = async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    ops?.stopping();
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: shutdownTimeoutMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, shutdownTimeoutMs);
    timer.unref();
    try {
      // A signal during start-up waits for it: the consumer may already hold work to hand back.
      const running = await starting?.catch(() => null);
      await running?.close();
      await ops?.close();
      logger.info('stopped cleanly');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // The operations endpoints answer from the start: /healthz at once, /readyz once started.
  starting = Promise.resolve(ops?.listen()).then(() => start());
  try {
    ops?.started(await starting);
  } catch (error) {
    logger.fatal({ err: error }, /** @type {Error} */ (error).message);
    process.exit(exitCodeFor(error));
  }
}

/**
 * @param {import('pino').Logger} logger
 * @param {number} processes
 * @param {number} shutdownTimeoutMs
 * @param {import('./metrics/ops-server.js').Ops} [ops] served by the primary for all children
 */
function runPrimary(logger, processes, shutdownTimeoutMs, ops) {
  let stopping = false;
  let exitCode = 0;
  for (let i = 0; i < processes; i++) cluster.fork();
  ops?.listen().catch((error) => logger.error({ err: error }, 'metrics and health server could not start'));
  cluster.on('exit', (child, code, signal) => {
    if (stopping) {
      // The dyno's exit code says whether every child stopped cleanly.
      if (code !== 0) exitCode = 1;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    // A child that dies on its own is replaced, after a pause so a crash loop cannot spin.
    logger.error({ childPid: child.process.pid, code, signal }, 'cluster worker died; replacing it in 1 s');
    setTimeout(() => { if (!stopping) cluster.fork(); }, 1000);
  });
  /** @param {NodeJS.Signals} signal */
  const shutdown = (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, processes }, 'stopping cluster workers');
    ops?.stopping();
    for (const child of Object.values(cluster.workers ?? {})) child?.process.kill('SIGTERM');
    setTimeout(() => process.exit(1), shutdownTimeoutMs + 1000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  logger.info({ processes }, 'cluster started');
}
