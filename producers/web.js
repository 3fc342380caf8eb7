#!/usr/bin/env node
// Procfile `web`: the campaign dashboard on $PORT, with /metrics, /healthz and /readyz.
// One process per dyno (the dashboard's load is a few polls per viewer); scale dynos instead.
import { startDashboard } from '../shared/dashboard/dashboard-process.js';
import { runProcessType } from '../shared/lifecycle.js';

await runProcessType('web', process.env, startDashboard, { clustered: false });
