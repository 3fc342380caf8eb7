#!/usr/bin/env node
// Procfile `worker`: consumes campaign segments and sends them to SNS, paced by the shared token bucket.
import { startDispatcher } from '../shared/dispatcher.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('worker', process.env, startDispatcher);
