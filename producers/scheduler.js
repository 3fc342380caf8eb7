#!/usr/bin/env node
// Procfile `scheduler`: launches scheduled campaigns (pushctl schedule add) when they fall due.
// Run as many as you like: each fire is claimed in Redis, so exactly one of them launches it.
import { runProcessType } from '../shared/lifecycle.js';
import { startScheduler } from '../shared/scheduler/scheduler-process.js';
import { scheduledSend } from './cli/schedule.js';

await runProcessType('scheduler', process.env, (config, logger, ops) => startScheduler(config, logger, scheduledSend, ops), { clustered: false });
