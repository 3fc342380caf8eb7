#!/usr/bin/env node
// Procfile `ingest`: consumes notification events from RabbitMQ and sends each to its
// users' devices at once, through the bucket's transactional lane (docs/events.md).
import { startEventIngest } from '../shared/events/event-ingest.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('ingest', process.env, startEventIngest);
