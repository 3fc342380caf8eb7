#!/usr/bin/env node
// Procfile `worker`: consumes campaign segments and sends them to SNS, paced by the shared token bucket.
import { loadConfig } from '../config/index.js';
import { createLogger } from '../shared/logger.js';
import { startDispatcher } from '../shared/dispatcher.js';
import { runProcess } from '../shared/lifecycle.js';
import { exitCodeFor } from '../shared/errors.js';

let config;
try {
  config = loadConfig(process.env);
} catch (error) {
  process.stderr.write(`worker: ${/** @type {Error} */ (error).message}\n`);
  process.exit(exitCodeFor(error));
}
const logger = createLogger(config, { process: 'worker' });
await runProcess({ logger, processes: config.webConcurrency, shutdownTimeoutMs: config.shutdownTimeoutMs },
  () => startDispatcher(config, logger));
