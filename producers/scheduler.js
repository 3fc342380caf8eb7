#!/usr/bin/env node
// Procfile `scheduler`: launches scheduled campaigns (pushctl schedule add) when they fall due.
// Run as many as you like: each fire is claimed in Redis, so exactly one of them launches it.
import { loadConfig } from '../config/index.js';
import { runProcessType } from '../shared/lifecycle.js';
import { startScheduler } from '../shared/scheduler/scheduler-process.js';

await runProcessType('scheduler', () => loadConfig(process.env), startScheduler, { clustered: false });
