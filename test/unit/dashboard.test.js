// The dashboard's rules without servers around it: who may read and control (the token,
// DASHBOARD_PUBLIC), what a refused control request changes (nothing), how the chart
// lines up the governor's decisions with a campaign's samples, and the config it reads.
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/index.js';
import { createDashboardAuth } from '../../shared/dashboard/dashboard-auth.js';
import { createDashboardServer } from '../../shared/dashboard/dashboard-server.js';
import { achievedRate, chartSeries } from '../../shared/dashboard/campaign-chart.js';
import { createLogger } from '../../shared/logger.js';
import { CONTROLLER_REASONS } from '../../shared/metrics/registry.js';
import { RATE_REASON_WORDS, reasonInWords } from '../../shared/pacing/rate-reasons.js';
import { InputError, NotFoundError } from '../../shared/errors.js';

const TOKEN = 'correct-horse-battery-staple-42';
const logger = createLogger({ logLevel: 'silent' }, {});

/** A campaign as the store returns it. @param {Partial<import('../../shared/types.js').Campaign>} [over] */
const campaign = (over = {}) => /** @type {import('../../shared/types.js').Campaign} */ ({
  id: 'c-1', name: 'Sale', state: 'running', message: { title: 't', body: 'b' }, source: 'x.csv', maxRate: null,
  createdAt: Date.now() - 10_000, finishedAt: null, enqueued: true, total: 100, segmentsTotal: 1, segmentsDone: 0,
  delivered: 40, disabled: 1, failed: 2, cancelled: 0, expired: 0, skipped: 0, duplicates: 0, excluded: 0, error: null,
  startAt: Date.now() - 10_000, deadlineAt: null, ttlMs: null, localTime: null, defaultTimezone: null, outcomeBits: 3, ...over
});

/**
 * A dashboard server over fakes; `changes` records every state change the store was asked for.
 * @param {{ token?: string | null, publicReads?: boolean, log?: import('pino').Logger }} [auth]
 * @param {Partial<Parameters<typeof createDashboardServer>[0]>} [more]  other dependencies (the forecast's)
 */
function dashboard({ token = TOKEN, publicReads = true, log = logger } = {}, more = {}) {
  /** @type {string[]} */
  const changes = [];
  const change = (/** @type {string} */ action) => async (/** @type {string} */ id) => {
    if (id === 'missing') throw new NotFoundError(`no campaign with id "${id}"`);
    if (action === 'resume') throw new InputError(`campaign ${id} is running; only a campaign that is paused can be made running`);
    changes.push(`${action} ${id}`);
    return campaign({ id, state: action === 'pause' ? 'paused' : 'cancelled' });
  };
  const store = /** @type {any} */ ({
    list: async () => [campaign()], require: async () => campaign(), get: async () => campaign(),
    failures: async () => [{ seq: 3, endpointArn: 'arn:x', reason: 'InvalidParameter: bad token' }],
    reportSlots: async () => ({ learned: null, forecast: JSON.stringify({ averageRate: 9 }) }),
    pause: change('pause'), resume: change('resume'), cancel: change('cancel')
  });
  const series = /** @type {any} */ ({
    recentCampaign: async () => [{ t: Date.now() - 4000, processed: 20, rateLimit: 10 }, { t: Date.now(), processed: 43, rateLimit: 10 }],
    lastGovernorPoint: async () => null, campaign: async () => [], governor: async () => []
  });
  const history = /** @type {any} */ ({ read: async () => [{ t: Date.now() - 5000, processed: 10, rateLimit: 10, p95Ms: 300, sloMs: 400 }] });
  const app = createDashboardServer({
    store, series, history, logger: log,
    bucket: { settings: async () => ({ rate: 10, burst: 1, granted: 0, grantedTransactional: 0 }) },
    schedules: { available: false, list: async () => [] },
    auth: createDashboardAuth({ token, publicReads }),
    ops: {
      health: () => ({ status: 200, body: { status: 'ok' } }),
      ready: async () => ({ status: 200, body: { status: 'ready' } }),
      metrics: async () => ({ contentType: 'text/plain; version=0.0.4', text: 'up 1\n' })
    },
    ...more
  });
  return { app, changes };
}

const bearer = (token = TOKEN) => ({ authorization: `Bearer ${token}` });

test('control actions without the token, with a wrong one, or with none configured get 401 and change nothing', async (t) => {
  const { app, changes } = dashboard();
  t.after(() => app.close());
  for (const headers of [{}, bearer('wrong-token-wrong-token'), { authorization: TOKEN }, { authorization: 'Basic Zm9vOmJhcg==' }]) {
    for (const action of ['pause', 'resume', 'cancel']) {
      const answer = await app.inject({ method: 'POST', url: `/api/campaigns/c-1/${action}`, headers });
      assert.equal(answer.statusCode, 401, `${action} with ${JSON.stringify(headers)}`);
      assert.match(String(answer.headers['www-authenticate']), /^Bearer/);
    }
  }
  // The router decodes the path before matching, so these reach the control routes too;
  // the check must hold for them (it goes by the matched route, not the URL text).
  for (const url of ['/%61pi/campaigns/c-1/pause', '/a%70i/campaigns/c-1/cancel', '/api/campaigns/c-1/%70ause', '/api/campaigns/c-1/pause?x=/']) {
    const answer = await app.inject({ method: 'POST', url });
    assert.equal(answer.statusCode, 401, url);
  }
  assert.deepEqual(changes, []);

  const off = dashboard({ token: null });
  t.after(() => off.app.close());
  const refused = await off.app.inject({ method: 'POST', url: '/api/campaigns/c-1/pause', headers: bearer() });
  assert.equal(refused.statusCode, 401);
  assert.match(refused.json().error, /DASHBOARD_TOKEN is not set/);
  assert.deepEqual(off.changes, []);
});

test('with the token, control actions change the campaign; wrong states and unknown campaigns are told apart', async (t) => {
  const { app, changes } = dashboard();
  t.after(() => app.close());
  const paused = await app.inject({ method: 'POST', url: '/api/campaigns/c-1/pause', headers: bearer() });
  assert.equal(paused.statusCode, 200);
  assert.deepEqual(paused.json(), { id: 'c-1', state: 'paused' });
  assert.equal((await app.inject({ method: 'POST', url: '/api/campaigns/c-1/resume', headers: bearer() })).statusCode, 409);
  assert.equal((await app.inject({ method: 'POST', url: '/api/campaigns/missing/cancel', headers: bearer() })).statusCode, 404);
  assert.equal((await app.inject({ method: 'POST', url: '/api/campaigns/bad%20id/cancel', headers: bearer() })).statusCode, 400);
  assert.deepEqual(changes, ['pause c-1']);
});

test('reads are open by default; DASHBOARD_PUBLIC=false asks for the token for the API and /metrics', async (t) => {
  const open = dashboard();
  t.after(() => open.app.close());
  const overview = await open.app.inject({ url: '/api/overview' });
  assert.equal(overview.statusCode, 200);
  const [row] = overview.json().campaigns;
  // The numbers are campaign-progress.js's, with the pace measured from the samples (23 in 4 s).
  assert.equal(row.delivered, 40);
  assert.equal(row.processed, 43);
  assert.ok(Math.abs(row.achievedRate - 5.75) < 0.01, String(row.achievedRate));
  assert.equal((await open.app.inject({ url: '/metrics' })).statusCode, 200);
  assert.match(String(overview.headers['content-security-policy']), /script-src 'self'/);

  const closed = dashboard({ publicReads: false });
  t.after(() => closed.app.close());
  for (const url of ['/api/overview', '/api/campaigns/c-1/series', '/api/campaigns/c-1/report', '/metrics', '/%61pi/overview', '/%6detrics']) {
    assert.equal((await closed.app.inject({ url })).statusCode, 401, url);
    assert.equal((await closed.app.inject({ method: 'HEAD', url })).statusCode, 401, `HEAD ${url}`);
    assert.equal((await closed.app.inject({ url, headers: bearer() })).statusCode, 200, url);
  }
  // The page, its assets and the probes never need the token: they hold no campaign data.
  for (const url of ['/', '/report?id=c-1', '/assets/dashboard.js', '/assets/report.js', '/assets/report-links.js', '/assets/report.css',
    '/assets/uPlot.iife.min.js', '/healthz', '/readyz']) {
    assert.equal((await closed.app.inject({ url })).statusCode, 200, url);
  }
  assert.equal((await closed.app.inject({ url: '/assets/..%2Fdashboard-server.js' })).statusCode, 404);
});

test('client mistakes get 4xx and a warning, never a 500 or a stack trace', async (t) => {
  /** @type {Array<Record<string, any>>} */
  const lines = [];
  const log = createLogger({ logLevel: 'info' }, {}, { write: (/** @type {string} */ line) => { lines.push(JSON.parse(line)); } });
  const { app, changes } = dashboard({ log });
  t.after(() => app.close());
  // Names every object has are no assets.
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    assert.equal((await app.inject({ url: `/assets/${name}` })).statusCode, 404, name);
  }
  const post = (/** @type {Record<string, string>} */ headers, /** @type {string} */ payload) =>
    app.inject({ method: 'POST', url: '/api/campaigns/c-1/pause', headers: { ...bearer(), ...headers }, payload });
  const tooLarge = await post({ 'content-type': 'application/json' }, JSON.stringify({ pad: 'x'.repeat(10_000) }));
  assert.equal(tooLarge.statusCode, 413);
  const malformed = await post({ 'content-type': 'application/json' }, '{"oops":');
  assert.equal(malformed.statusCode, 400);
  assert.match(malformed.json().error, /JSON/i);
  const wrongType = await post({ 'content-type': 'application/x-unknown' }, 'hello');
  assert.equal(wrongType.statusCode, 415);
  assert.deepEqual(changes, [], 'a refused request changes nothing');
  assert.equal(lines.filter((l) => l.level >= 50).length, 0, 'nothing logged as an error');
  assert.equal(lines.filter((l) => l.level === 40).length, 3, 'one warning per refused body');
  assert.ok(lines.every((l) => !l.err?.stack), 'no stack traces');
});

test('the chart gives each sample its send rate and the governor decision in force then', () => {
  const points = [
    { t: 10_000, processed: 0, rateLimit: 50 },
    { t: 12_000, processed: 100, rateLimit: 50 },
    { t: 14_000, processed: 180, rateLimit: 40 },
    { t: 60_000, processed: 200, rateLimit: 40 }
  ];
  const decisions = [
    { t: 9_000, p95Ms: 120, sloMs: 400, rate: 50, reason: 'plan' },
    { t: 13_000, p95Ms: null, sloMs: 400, rate: 40, reason: 'stale' }
  ];
  assert.deepEqual(chartSeries(points, decisions), {
    t: [10_000, 12_000, 14_000, 60_000],
    // The window in which sending starts holds the bucket's burst: charted apart, as a start.
    sendRate: [null, null, 40, 0.43],
    startRate: [null, 50, null, null],
    rateLimit: [50, 50, 40, 40],
    // The last sample is 47 s after the last decision: the governor is gone, nothing is drawn.
    p95Ms: [120, 120, null, null],
    sloMs: [400, 400, 400, null],
    reason: ['plan', 'plan', 'stale', null]
  });
  // Polling for what is new: the sample at `since` only serves as the predecessor; the start
  // is found there too (the page's first poll may hold only the first sample).
  const polled = chartSeries(points.slice(1, 3), decisions, { since: 12_000 });
  assert.deepEqual([polled.sendRate, polled.startRate], [[40], [null]]);
  assert.deepEqual(chartSeries(points.slice(0, 2), decisions, { since: 10_000 }).startRate, [50]);
});

test('the limit line stops while a campaign does not send, and a resume is charted as a start', () => {
  // The sampler stores a limit of 0 while paused and after the end.
  const points = [
    { t: 1000, processed: 0, rateLimit: 30 },
    { t: 2000, processed: 60, rateLimit: 30 },
    { t: 3000, processed: 90, rateLimit: 30 },
    { t: 4000, processed: 90, rateLimit: 0 },
    { t: 5000, processed: 150, rateLimit: 30 },
    { t: 6000, processed: 180, rateLimit: 30 },
    { t: 7000, processed: 200, rateLimit: 0 },
    { t: 8000, processed: 200, rateLimit: 0 }
  ];
  const chart = chartSeries(points, []);
  assert.deepEqual(chart.rateLimit, [30, 30, 30, null, 30, 30, null, null]);
  assert.ok(!chart.rateLimit.includes(0));
  assert.deepEqual(chart.startRate, [null, 60, null, null, 60, null, null, null]);
  assert.deepEqual(chart.sendRate, [null, null, 30, 0, null, 30, 20, 0]);
});

test('every reason the controller can give has words, and the dashboard page uses them', async () => {
  // The codes as controller.js spells them: its RateReason type and every reason it assigns,
  // so a new code added there without words here fails this test.
  const source = readFileSync(new URL('../../shared/pacing/controller.js', import.meta.url), 'utf8');
  const typedef = /@typedef \{([^}]*)\} RateReason/.exec(source);
  assert.ok(typedef, 'controller.js declares RateReason');
  const declared = [...typedef[1].matchAll(/'([a-z-]+)'/g)].map((m) => m[1]);
  const assigned = [...source.matchAll(/(?:reason: |cutNow = )([^};]*)/g)].flatMap((m) => [...m[1].matchAll(/'([a-z-]+)'/g)].map((l) => l[1]));
  const emitted = new Set([...declared, ...assigned]);
  for (const code of ['plan', 'plan-latency-only', 'cold-start', 'whole-campaign', 'short-campaign', 'max-rate', 'min-rate', 'error-cut', 'latency-cut', 'cut-hold', 'stale']) {
    assert.ok(emitted.has(code), `the scan finds ${code}`);
  }
  for (const code of [...emitted, ...CONTROLLER_REASONS]) {
    assert.ok(Object.hasOwn(RATE_REASON_WORDS, code), `${code} has words`);
    assert.notEqual(reasonInWords(code), code);
    assert.ok(reasonInWords(code).length > 20, `${code}: a sentence`);
  }
  assert.deepEqual(Object.keys(RATE_REASON_WORDS).sort(), [...CONTROLLER_REASONS].sort(), 'no words for a code the controller does not give');
  assert.match(reasonInWords('brand-new'), /brand-new/);
  // The page gets the same file.
  const { app } = dashboard();
  const asset = await app.inject({ url: '/assets/rate-reasons.js' });
  assert.equal(asset.statusCode, 200);
  assert.equal(asset.body, readFileSync(new URL('../../shared/pacing/rate-reasons.js', import.meta.url), 'utf8'));
  assert.equal((await app.inject({ url: '/assets/chart-view.js' })).statusCode, 200);
  await app.close();
});

test('the achieved rate spans the last 5 s of samples and is unknown when they are stale', () => {
  const now = 100_000;
  const samples = [0, 2, 4, 6].map((s) => ({ t: now - 6000 + s * 1000, processed: s * 30, rateLimit: 30 }));
  assert.equal(achievedRate(samples, now), 30);
  assert.equal(achievedRate(samples, now + 60_000), null);
  assert.equal(achievedRate(samples.slice(-1), now), null);
});

test('dashboard and metrics variables are validated', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.metricsPort, null, 'no metrics server unless METRICS_PORT is set');
  assert.deepEqual({ ...config.dashboard }, { token: null, publicReads: true });
  const set = loadConfig({ PORT: '5000', METRICS_PORT: '0', DASHBOARD_TOKEN: TOKEN, DASHBOARD_PUBLIC: 'false' });
  assert.deepEqual([set.port, set.metricsPort, set.dashboard.token, set.dashboard.publicReads], [5000, 0, TOKEN, false]);
  for (const [name, value] of [['PORT', 'web'], ['METRICS_PORT', '70000'], ['DASHBOARD_TOKEN', 'short'], ['DASHBOARD_TOKEN', 'has a space in it, sixteen+'], ['DASHBOARD_PUBLIC', 'yes']]) {
    assert.throws(() => loadConfig({ [name]: value }), (error) => /** @type {any} */ (error).code === 'PUSH_ERR_CONFIG' && /** @type {Error} */ (error).message.startsWith(`${name} `), `${name}=${value}`);
  }
});

test('the report API answers pushctl report --json\'s object; the page links each campaign to it', async (t) => {
  const { app } = dashboard();
  t.after(() => app.close());
  const answer = await app.inject({ url: '/api/campaigns/c-1/report' });
  assert.equal(answer.statusCode, 200);
  const r = answer.json();
  assert.deepEqual([r.outcomes.delivered, r.outcomes.failed, r.outcomes.pending], [40, 2, 57]);
  assert.deepEqual(r.failureReasons, [{ reason: 'InvalidParameter: bad token', count: 1 }]);
  assert.deepEqual([r.gateway.p95MaxMs, r.gateway.sloMs, r.gateway.pointsOverSlo], [300, 400, 0]);
  assert.equal(r.learned, null);
  assert.deepEqual(r.forecastComparison.map((/** @type {any} */ c) => c.field), ['averageRate']);
  assert.equal((await app.inject({ url: '/api/campaigns/bad%20id/report' })).statusCode, 400);
  const page = await app.inject({ url: '/' });
  assert.match(page.body, /src="\/assets\/report-links\.js"/);
  assert.match((await app.inject({ url: '/assets/report-links.js' })).body, /\/report\?id=/);
});

test('the predicted load: a campaign\'s first view waits for it, later views get the last one while a new one is computed', async (t) => {
  let clock = Date.UTC(2026, 10, 24, 12);
  /** @type {Array<(value: any) => void>} */
  const computing = [];
  let started = () => {};
  const ahead = (/** @type {number} */ n) => ({ t: [clock], loadRps: [n], lowRps: [n], highRps: [n], capacityRps: 1000, durationSeconds: 60 });
  const { app } = dashboard({}, {
    now: () => clock,
    liveModel: { read: async () => /** @type {any} */ ({ requestsPerSend: 1 }) },
    predictLoad: () => new Promise((resolve) => {
      computing.push(resolve);
      started();
    })
  });
  t.after(() => app.close());
  const series = () => app.inject({ url: '/api/campaigns/c-1/series' }).then((r) => r.json().ahead);
  const first = series();
  await new Promise((resolve) => { started = () => resolve(undefined); });
  computing[0](ahead(1));
  assert.deepEqual((await first).loadRps, [1], 'the first view waits for the first forecast');
  assert.deepEqual((await series()).loadRps, [1], 'then it is kept');
  assert.equal(computing.length, 1, 'and not computed again within 5 s');
  clock += 6000;
  // A forecast that takes its time holds up no view: the last one is served meanwhile.
  assert.deepEqual((await series()).loadRps, [1]);
  assert.deepEqual((await series()).loadRps, [1]);
  assert.equal(computing.length, 2, 'one new forecast however many views');
  computing[1](ahead(2));
  assert.deepEqual((await series()).loadRps, [2]);
});

