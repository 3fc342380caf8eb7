#!/usr/bin/env node
// Procfile `governor`: steers the shared token bucket's rate with the pacing controller.
// Run as many as you like: a Redis lease lets exactly one act; the others stand by.
import { startGovernor } from '../shared/governor-process.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('governor', process.env, startGovernor, { clustered: false });
