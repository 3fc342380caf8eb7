#!/usr/bin/env node
// Procfile `web`: the campaign dashboard on $PORT, with /metrics, /healthz and /readyz.
// One process per dyno (the dashboard's load is a few polls per viewer); scale dynos instead.
import { startWeb } from '../shared/dashboard/web-process.js';
import { loadConfig } from '../config/index.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('web', () => loadConfig(process.env), startWeb, { clustered: false });
