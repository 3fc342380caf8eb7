#!/usr/bin/env node
// Procfile `worker`: consumes campaign segments and sends them to SNS, paced by the shared token bucket.
import { startWorker } from '../shared/sending/worker-process.js';
import { loadConfig } from '../config/index.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('worker', () => loadConfig(process.env), startWorker);
