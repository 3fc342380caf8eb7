#!/usr/bin/env node
// Procfile `ingest`: consumes notification events from RabbitMQ and sends each to its
// users' devices at once, through the bucket's transactional lane (docs/events.md).
import { startIngest } from '../shared/events/ingest-process.js';
import { loadConfig } from '../config/index.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('ingest', () => loadConfig(process.env), startIngest);
