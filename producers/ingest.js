#!/usr/bin/env node
// Procfile `ingest`: consumes notification events from RabbitMQ and sends each to its
// users' devices at once, through the bucket's transactional lane (docs/events.md).
import { loadConfig } from '../config/index.js';
import { createLogger } from '../shared/logger.js';
import { startEventIngest } from '../shared/events/event-ingest.js';
import { runProcess } from '../shared/lifecycle.js';
import { exitCodeFor } from '../shared/errors.js';

let config;
try {
  config = loadConfig(process.env);
} catch (error) {
  process.stderr.write(`ingest: ${/** @type {Error} */ (error).message}\n`);
  process.exit(exitCodeFor(error));
}
const logger = createLogger(config, { process: 'ingest' });
await runProcess({ logger, processes: config.webConcurrency, shutdownTimeoutMs: config.shutdownTimeoutMs },
  () => startEventIngest(config, logger));
