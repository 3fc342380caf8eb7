// The dashboard's HTTP server (fastify): the page and its assets, a small JSON API the page
// polls, the control actions, and the operations endpoints on the same port (Heroku
// routes only $PORT to a web dyno). Campaign numbers come from campaign-progress.js, as
// pushctl's do, so both show the same.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Fastify from 'fastify';
import { campaignProgress } from '../campaign/campaign-progress.js';
import { achievedRate, chartSeries, RATE_WINDOW_MS } from './campaign-chart.js';
import { loadAhead } from '../forecast/load-ahead.js';

/** A campaign's predicted load is computed at most this often, however many viewers poll. */
const AHEAD_CACHE_MS = 5000;
import { buildCampaignReport } from '../campaign/campaign-report.js';

/** @typedef {import('./dashboard-auth.js').DashboardAuth} DashboardAuth */
/** @typedef {import('../forecast/load-ahead.js').LoadAhead} LoadAhead */
/** @typedef {import('fastify').FastifyRequest} FastifyRequest */
/** @typedef {import('fastify').FastifyReply} FastifyReply */

const require = createRequire(import.meta.url);
const PUBLIC = new URL('./public/', import.meta.url);
// Served from memory: a fixed list, so no request can name another file.
const ASSETS = {
  'dashboard.js': { file: new URL('dashboard.js', PUBLIC), type: 'text/javascript; charset=utf-8' },
  'dashboard.css': { file: new URL('dashboard.css', PUBLIC), type: 'text/css; charset=utf-8' },
  // The campaign report page's script and style, and the list's links to it.
  'report.js': { file: new URL('report.js', PUBLIC), type: 'text/javascript; charset=utf-8' },
  'report.css': { file: new URL('report.css', PUBLIC), type: 'text/css; charset=utf-8' },
  'report-links.js': { file: new URL('report-links.js', PUBLIC), type: 'text/javascript; charset=utf-8' },
  'chart-view.js': { file: new URL('chart-view.js', PUBLIC), type: 'text/javascript; charset=utf-8' },
  // pushctl's own duration format, which dashboard.js imports.
  'format-duration.js': { file: new URL('../campaign/format-duration.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  // The governor's reason codes in words, which dashboard.js imports.
  'rate-reasons.js': { file: new URL('../pacing/rate-reasons.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  // uPlot straight from node_modules: no front-end build.
  'uPlot.iife.min.js': { file: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' }
};
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer'
};
const CAMPAIGN_ID = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,100}$' };
// The list the page shows, newest first: this many of the newest, and every one not finished.
const CAMPAIGNS_SHOWN = 20;
// A governor decision older than this no longer describes the gateway (3 of its default windows).
const GATEWAY_MAX_AGE_MS = 30_000;

/**
 * Who may use a route: anyone (the page, its assets and the probes hold no campaign data),
 * readers (open unless DASHBOARD_PUBLIC=false) or holders of the token.
 * @typedef {'open' | 'read' | 'control'} Access
 */
const OPEN = { config: { access: /** @type {Access} */ ('open') } };
const READ = { config: { access: /** @type {Access} */ ('read') } };
const CONTROL = { config: { access: /** @type {Access} */ ('control') } };

/**
 * @param {object} deps
 * @param {import('../campaign/campaign-store.js').CampaignStore} deps.store
 * @param {Pick<import('../token-bucket.js').TokenBucket, 'settings'>} deps.bucket
 * @param {import('../metrics/series-store.js').SeriesStore} deps.series
 * @param {import('../metrics/campaign-history.js').CampaignHistory} deps.history  the campaigns' report history
 * @param {import('./schedules.js').ScheduleReader} deps.schedules
 * @param {DashboardAuth} deps.auth
 * @param {{ health(): { status: number, body: object }, ready(): Promise<{ status: number, body: object }>, metrics(): Promise<{ contentType: string, text: string }> }} deps.ops
 * @param {import('pino').Logger} deps.logger
 * @param {() => number} [deps.now]
 * @param {Pick<import('../governor/live-model.js').LiveModelStore, 'read'>} [deps.liveModel]  the governor's live model:
 *   a running campaign's chart adds the predicted wake-up load from it
 * @param {(model: import('../forecast/campaign-forecast.js').LiveModel, campaign: Parameters<typeof loadAhead>[1]) => Promise<LoadAhead>} [deps.predictLoad]
 *   computes it (the web process runs it in a thread: load-ahead-thread.js); in this process when absent
 */
export function createDashboardServer({ store, bucket, series, history, schedules, auth, ops, logger, now = Date.now, liveModel, predictLoad = async (model, campaign) => loadAhead(model, campaign) }) {
  // No request log: every viewer polls each second, and Heroku keeps only 1,500 log lines.
  const app = Fastify({ logger: false, bodyLimit: 4096, return503OnClosing: true });
  const assets = Object.fromEntries(Object.entries(ASSETS).map(([name, { file, type }]) => [name, { body: readFileSync(file), type }]));
  const page = readFileSync(new URL('index.html', PUBLIC));
  const reportPage = readFileSync(new URL('report.html', PUBLIC));

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    return payload;
  });

  // Every route is checked here, before it runs, by the access level it was registered
  // with: the matched route decides, not the URL text, which a client can spell in ways
  // the router still matches ("/%61pi/..." is routed to "/api/..."). A route that names
  // no level needs the token, so a new route is protected until it says otherwise.
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return;
    const level = /** @type {{ access?: Access }} */ (request.routeOptions.config).access ?? 'control';
    if (level === 'open') return;
    const allowed = level === 'read' ? auth.canRead(request.headers.authorization) : auth.canControl(request.headers.authorization);
    if (allowed) return;
    const verdict = auth.check(request.headers.authorization);
    const error = verdict === 'disabled' && level === 'control' ? 'control actions are disabled: DASHBOARD_TOKEN is not set'
      : verdict === 'wrong' ? 'wrong token' : 'this needs the dashboard token (Authorization: Bearer <DASHBOARD_TOKEN>)';
    if (level === 'control') logger.warn({ route: request.routeOptions.url, verdict }, 'dashboard control request refused');
    return reply.code(401).header('www-authenticate', 'Bearer realm="pushpace"').send({ error });
  });

  app.setErrorHandler((/** @type {any} */ error, request, reply) => {
    const code = error?.code;
    if (code === 'PUSH_ERR_NOT_FOUND') return reply.code(404).send({ error: error.message });
    // A campaign in a state that does not allow the action (resume a running one...).
    if (code === 'PUSH_ERR_INPUT') return reply.code(409).send({ error: error.message });
    if (error?.validation) return reply.code(400).send({ error: error.message });
    // The client's own mistake, as fastify found it (a body over the limit: 413, malformed
    // JSON: 400, a content type no route takes: 415): its code and reason, and a warning
    // without a stack, since nothing on the server went wrong.
    const status = Number(error?.statusCode);
    if (status >= 400 && status < 500) {
      logger.warn({ route: request.routeOptions?.url, status, code }, `dashboard request refused: ${error.message}`);
      return reply.code(status).send({ error: error.message });
    }
    logger.error({ err: error }, 'dashboard request failed');
    const unavailable = code === 'PUSH_ERR_UNAVAILABLE' || error?.name === 'MaxRetriesPerRequestError';
    return reply.code(unavailable ? 503 : 500).send({ error: 'internal error; see the web process log' });
  });

  app.get('/', OPEN, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page));
  // The report page holds no data (report.js reads it from the API below, with the token).
  app.get('/report', OPEN, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(reportPage));
  app.get('/assets/:name', OPEN, async (request, reply) => {
    // Own names only: "constructor", "__proto__" and "toString" are no assets.
    const { name } = /** @type {{ name: string }} */ (request.params);
    const asset = Object.hasOwn(assets, name) ? /** @type {Record<string, { body: Buffer, type: string }>} */ (assets)[name] : undefined;
    if (!asset) return reply.code(404).send({ error: 'no such asset' });
    return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });

  app.get('/healthz', OPEN, async (_request, reply) => answer(reply, ops.health()));
  app.get('/readyz', OPEN, async (_request, reply) => answer(reply, await ops.ready()));
  app.get('/metrics', READ, async (_request, reply) => {
    const { contentType, text } = await ops.metrics();
    return reply.type(contentType).send(text);
  });

  app.get('/api/overview', READ, async () => {
    const t = now();
    const [settings, campaigns, governor, scheduleRows] = await Promise.all([
      bucket.settings(), store.list({ limit: CAMPAIGNS_SHOWN, withActive: true }), series.lastGovernorPoint(),
      // The schedules are the scheduler's data: a problem reading them must not hide the campaigns.
      schedules.list().catch((/** @type {Error} */ error) => {
        logger.warn({ err: error }, 'reading the schedules failed');
        return error;
      })
    ]);
    const rows = await Promise.all(campaigns.map(async (campaign) => {
      // The measured pace over the last samples, as `pushctl status --watch` measures it, and
      // a local-time campaign's release plan, as `pushctl status` reads it.
      const [recent, releases] = await Promise.all([
        campaign.state === 'running' ? series.recentCampaign(campaign.id, 6) : [],
        campaign.localTime ? store.releases(campaign.id) : []
      ]);
      return campaignProgress(campaign, { rate: settings.rate, now: t, achievedRate: achievedRate(recent, t), releases });
    }));
    return {
      generatedAt: new Date(t).toISOString(),
      bucket: { rate: settings.rate, burst: settings.burst },
      governor: governor && t - governor.t <= GATEWAY_MAX_AGE_MS ? governor : null,
      controlEnabled: auth.controlEnabled,
      campaigns: rows,
      schedules: scheduleRows instanceof Error
        ? { available: schedules.available, items: [], error: 'the schedules could not be read; see the web process log' }
        : { available: schedules.available, items: scheduleRows }
    };
  });

  app.get('/api/campaigns/:id/series', {
    ...READ,
    schema: { params: { type: 'object', properties: { id: CAMPAIGN_ID }, required: ['id'] }, querystring: { type: 'object', properties: { since: { type: 'integer', minimum: 0 } } } }
  }, async (request) => {
    const { id } = /** @type {{ id: string }} */ (request.params);
    const { since = 0 } = /** @type {{ since?: number }} */ (request.query);
    await store.require(id);
    const points = await series.campaign(id, since);
    const decisions = points.length > 0 ? await series.governor(points[0].t - GATEWAY_MAX_AGE_MS, points[points.length - 1].t) : [];
    return {
      id, rateWindowMs: RATE_WINDOW_MS, gateway: decisions.length > 0 ? 'governor' : 'none', ...chartSeries(points, decisions, { since, maxGatewayAgeMs: GATEWAY_MAX_AGE_MS }),
      ahead: await predictedLoad(id)
    };
  });

  /** @type {Map<string, { at: number, value: LoadAhead | null, pending: Promise<void> | null }>} */
  const aheadCache = new Map();

  /**
   * A running campaign's predicted wake-up load for the next minutes (load-ahead.js), or null:
   * no governor (its live model expired), a campaign not running, or a failed read (the chart
   * then shows what happened only). Every viewer polls each second and the governor's model
   * changes once a tick, so it is computed at most every AHEAD_CACHE_MS; while a newer one is
   * computed, the last one is served (only a campaign's first view waits for it).
   * @param {string} id
   */
  async function predictedLoad(id) {
    if (!liveModel) return null;
    let entry = aheadCache.get(id);
    if (!entry) aheadCache.set(id, entry = { at: -Infinity, value: null, pending: null });
    const first = entry.at === -Infinity;
    if (!entry.pending && now() - entry.at >= AHEAD_CACHE_MS) {
      const refreshed = entry;
      refreshed.pending = computeAhead(liveModel, id).then((value) => {
        refreshed.value = value;
        refreshed.at = now();
      }).finally(() => { refreshed.pending = null; });
    }
    for (const [key, other] of aheadCache) if (!other.pending && now() - other.at > 60_000) aheadCache.delete(key);
    if (first) await entry.pending;
    return entry.value;
  }

  /**
   * @param {Pick<import('../governor/live-model.js').LiveModelStore, 'read'>} models
   * @param {string} id
   */
  async function computeAhead(models, id) {
    try {
      const [model, campaign] = await Promise.all([models.read(), store.get(id)]);
      if (!model || !campaign || campaign.state !== 'running') return null;
      const at = now();
      const recent = await series.campaign(id, at - 3_600_000);
      const processed = recent.at(-1)?.processed ?? 0;
      const remaining = Math.max(0, campaign.total - processed - campaign.cancelled - campaign.expired);
      return await predictLoad(model, { remaining, points: recent, now: at, maxRate: campaign.maxRate });
    } catch (error) {
      logger.warn({ err: error, id }, 'predicting the campaign\'s wake-up load failed');
      return null;
    }
  }

  // pushctl report --json's object: outcomes, timeline, gateway, learned, forecast.
  app.get('/api/campaigns/:id/report', {
    ...READ,
    schema: { params: { type: 'object', properties: { id: CAMPAIGN_ID }, required: ['id'] } }
  }, async (request) => buildCampaignReport({ store, history }, /** @type {{ id: string }} */ (request.params).id, now()));

  for (const action of /** @type {const} */ (['pause', 'resume', 'cancel'])) {
    app.post(`/api/campaigns/:id/${action}`, {
      ...CONTROL,
      schema: { params: { type: 'object', properties: { id: CAMPAIGN_ID }, required: ['id'] } }
    }, async (request) => {
      const { id } = /** @type {{ id: string }} */ (request.params);
      const campaign = await store[action](id);
      logger.info({ campaignId: id, action, state: campaign.state }, 'campaign changed from the dashboard');
      return { id: campaign.id, state: campaign.state };
    });
  }

  return app;
}

/** @param {FastifyReply} reply @param {{ status: number, body: object }} result */
function answer(reply, { status, body }) {
  return reply.code(status).header('cache-control', 'no-store').send(body);
}
