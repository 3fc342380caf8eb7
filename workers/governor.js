#!/usr/bin/env node
// Procfile `governor`: steers the shared token bucket's rate with the pacing controller.
// Run as many as you like: a Redis lease lets exactly one act; the others stand by.
import { startGovernor } from '../shared/governor/governor-process.js';
import { loadConfig } from '../config/index.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('governor', () => loadConfig(process.env), startGovernor, { clustered: false });
