// Memory across campaigns, on real Redis: the governor keeps what a finished campaign taught
// its controller and starts the next campaign from it; pushctl model show|reset reads and
// clears it. (The controller's side and the prior's arithmetic: test/unit/controller.test.js
// and wake-up-memory.test.js.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRedis, redisKeys } from '../../shared/redis.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import { createGovernor } from '../../shared/governor/governor.js';
import { createModelMemory } from '../../shared/governor/model-memory.js';
import { resolveControllerOptions } from '../../shared/pacing/controller-options.js';
import { createLogger } from '../../shared/logger.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { REDIS_URL, uniquePrefix, dropPrefix, waitFor, testEnv, pushctl } from '../support/harness.js';

const prefix = uniquePrefix();
const redis = createRedis(REDIS_URL, { name: 'pushpace:memory-test' });
const configured = resolveControllerOptions({});
after(async () => {
  await dropPrefix(prefix);
  await redis.quit();
});

test('the governor keeps a finished campaign and gives its controller the prior for the next; model show and reset', async () => {
  const memory = createModelMemory(redis, prefix, configured);
  // Two finished campaigns: one of the period the governor learned from, one from days before.
  const store = createCampaignStore(redis, { keyPrefix: prefix });
  const message = { title: 'Sale', body: 'Everything 20% off' };
  const recent = await store.create({ name: 'recent', message, source: 'test' });
  const old = await store.create({ name: 'old', message, source: 'test' });
  await redis.zadd(redisKeys(prefix).finishedCampaigns, Date.now() - 30_000, recent.id, Date.now() - 3 * 86_400_000, old.id);
  /** @type {Array<import('../../shared/pacing/controller.js').GainPrior | null>} */
  const priors = [];
  let ticks = 0;
  const endedAt = Date.now() - 60_000;
  const controller = {
    update: () => ({ rate: 50, reason: /** @type {const} */ ('plan') }),
    setGainPrior: (/** @type {import('../../shared/pacing/controller.js').GainPrior | null} */ prior) => { priors.push(prior); },
    // The third tick's update ended a campaign of 200,000 sends that engaged 3x the prior.
    takeFinished: () => (++ticks === 3
      ? { startedAt: endedAt - 600_000, endedAt, sends: 200_000, baselineRps: 40, capacityRps: 300, priorRequestsPerSend: 2, priorRequestsPerSendSd: 2, requestsPerSend: 4.5, requestsPerSendSd: 0.2, medianFactor: 1.2, sigmaFactor: 0.9 }
      : null)
  };
  const lines = /** @type {any[]} */ ([]);
  const governor = createGovernor({
    redis, keyPrefix: prefix, bucket: createTokenBucket(redis, { keyPrefix: prefix, sendRate: 100, sendBurst: 5 }), controller,
    readGateway: async () => null, logger: createLogger({ logLevel: 'info' }, {}, { write: (line) => { lines.push(JSON.parse(line)); } }),
    tickMs: 100, memory
  });
  governor.start();
  try {
    await waitFor(async () => priors.length >= 2, { timeoutMs: 5000, what: 'a prior after the campaign' });
  } finally {
    await governor.stop();
  }
  assert.equal(priors[0], null, 'nothing remembered yet: the configured prior');
  const next = /** @type {import('../../shared/pacing/controller.js').GainPrior} */ (priors[1]);
  assert.ok(next.requestsPerSend > 4 && next.requestsPerSend < 4.5, `the next campaign starts near what this one taught: ${next.requestsPerSend}`);
  assert.ok(lines.some((l) => l.msg === 'campaign wake-up response remembered' && l.sends === 200_000));

  const stored = await memory.entries();
  assert.deepEqual(stored, [{ at: endedAt, kind: null, sends: 200_000, requestsPerSend: 4.5, requestsPerSendSd: 0.2, medianFactor: 1.2, sigmaFactor: 0.9, seconds: 600, baselineRps: 40, capacityRps: 300, startPrior: { requestsPerSend: 2, requestsPerSendSd: 2 } }]);
  assert.equal(await redis.llen(redisKeys(prefix).modelMemory), 1);

  // The report of the campaign it learned from says what was learned; the older one's does not.
  const learned = JSON.parse(/** @type {string} */ ((await store.reportSlots(recent.id)).learned));
  assert.deepEqual([learned.requestsPerSend, learned.sends, learned.campaigns], [4.5, 200_000, 1]);
  assert.equal((await store.reportSlots(old.id)).learned, null);

  const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9' });
  const report = await pushctl(['report', recent.id, '--json'], env);
  assert.equal(report.code, 0, report.stderr);
  assert.equal(JSON.parse(report.stdout).learned.requestsPerSend, 4.5);
  const shown = await pushctl(['model', 'show', '--json'], env);
  assert.equal(shown.code, 0, shown.stderr);
  const view = JSON.parse(shown.stdout);
  assert.equal(view.entries.length, 1);
  assert.ok(Math.abs(view.next.requestsPerSend - next.requestsPerSend) < 0.05, `${view.next.requestsPerSend} against ${next.requestsPerSend}`);
  assert.ok(view.next.fromMemory > 0.5);
  assert.equal(view.configured.requestsPerSend, configured.openProbability * configured.requestsPerOpen);
  const text = await pushctl(['model', 'show'], env);
  assert.match(text.stdout, /% from 1 remembered campaign\(s\)/);
  assert.match(text.stdout, /200,000 sends {2}4\.50 ± 0\.20 requests\/send {2}open delay median ×1\.20 σ ×0\.90/);

  const reset = await pushctl(['model', 'reset', '--json'], env);
  assert.equal(reset.code, 0, reset.stderr);
  assert.deepEqual(JSON.parse(reset.stdout), { removed: 1 });
  const after = JSON.parse((await pushctl(['model', 'show', '--json'], env)).stdout);
  assert.equal(after.next.fromMemory, 0);
  assert.deepEqual(after.entries, []);
});

test('a campaign too small to learn from is not kept, and an unreadable entry does not cost the others', async () => {
  const memory = createModelMemory(redis, prefix, configured);
  await memory.reset();
  assert.equal(await memory.remember({ startedAt: Date.now() - 60_000, endedAt: Date.now(), baselineRps: 20, capacityRps: 200, priorRequestsPerSend: 2, priorRequestsPerSendSd: 2, sends: 50, requestsPerSend: 9, requestsPerSendSd: 5, medianFactor: 1, sigmaFactor: 1 }), false);
  assert.equal(await memory.remember({ startedAt: Date.now() - 60_000, endedAt: Date.now(), baselineRps: 20, capacityRps: 200, priorRequestsPerSend: 2, priorRequestsPerSendSd: 2, sends: 50_000, requestsPerSend: 2, requestsPerSendSd: 0.3, medianFactor: 1, sigmaFactor: 1 }), true);
  await redis.lpush(redisKeys(prefix).modelMemory, '{not json');
  const entries = await memory.entries();
  assert.equal(entries.length, 1);
  assert.equal(entries[0].requestsPerSend, 2);
});

test('a campaign that names its kind is remembered under it, and the next campaign of that kind starts from its own kind first', async () => {
  const memory = createModelMemory(redis, prefix, configured);
  await memory.reset();
  // Digests engage a third of the prior (1.5 requests per send); nothing is known of sales.
  assert.equal(await memory.remember({ startedAt: Date.now() - 3_600_000 - 60_000, endedAt: Date.now() - 3_600_000, baselineRps: 20, capacityRps: 200, priorRequestsPerSend: 2, priorRequestsPerSendSd: 2, sends: 200_000, requestsPerSend: 0.5, requestsPerSendSd: 0.75, medianFactor: 1, sigmaFactor: 1 }, 'digest'), true);
  /** @type {string | null | undefined} */
  let runningKind;
  let finishNow = false;
  /** @type {Array<{ kind: string | null | undefined, prior: import('../../shared/pacing/controller.js').GainPrior | null }>} */
  const priors = [];
  /** @type {Array<{ kind: string | null | undefined, sent: number }>} */
  const updates = [];
  const controller = {
    update: (/** @type {{ sent: number }} */ o) => { updates.push({ kind: runningKind, sent: o.sent }); return { rate: 50, reason: /** @type {const} */ ('plan') }; },
    setGainPrior: (/** @type {import('../../shared/pacing/controller.js').GainPrior | null} */ prior) => { priors.push({ kind: runningKind, prior }); },
    takeFinished: () => {
      if (!finishNow) return null;
      finishNow = false;
      return { startedAt: Date.now() - 60_000, endedAt: Date.now(), baselineRps: 20, capacityRps: 200, priorRequestsPerSend: 2, priorRequestsPerSendSd: 2, sends: 100_000, requestsPerSend: 3, requestsPerSendSd: 0.3, medianFactor: 1, sigmaFactor: 1 };
    }
  };
  const bucket = createTokenBucket(redis, { keyPrefix: prefix, sendRate: 1000, sendBurst: 100 });
  const governor = createGovernor({
    redis, keyPrefix: prefix, bucket, controller, readGateway: async () => null, readKind: async () => runningKind,
    logger: createLogger({ logLevel: 'warn' }, {}, { write: () => {} }), tickMs: 100, memory
  });
  governor.start();
  try {
    await waitFor(async () => priors.length >= 1, { timeoutMs: 5000, what: 'the prior with no campaign running' });
    runningKind = 'sale';
    await waitFor(async () => priors.length >= 2, { timeoutMs: 5000, what: 'the prior for sales' });
    await bucket.takeTransactional(10);
    await waitFor(async () => updates.some((u) => u.kind === 'sale' && u.sent > 0), { timeoutMs: 5000, what: 'sends while the sale runs' });
    runningKind = undefined;
    finishNow = true;
    await waitFor(async () => (await memory.entries()).length === 2, { timeoutMs: 5000, what: 'the sale remembered' });
  } finally {
    await governor.stop();
  }
  const [anyKind, sale] = priors.map((p) => /** @type {import('../../shared/pacing/controller.js').GainPrior} */ (p.prior));
  assert.equal(priors[1].kind, 'sale');
  // No kind running: the digests count fully; a sale: they count a quarter, so the prior stays nearer PACING_*'s 1.5.
  assert.ok(anyKind.requestsPerSend < 0.8, `any kind: ${anyKind.requestsPerSend}`);
  assert.ok(sale.requestsPerSend > anyKind.requestsPerSend + 0.2, `sale ${sale.requestsPerSend} against any kind ${anyKind.requestsPerSend}`);
  const entries = await memory.entries();
  assert.deepEqual(entries.map((e) => e.kind), ['sale', 'digest']);
  const next = await memory.prior(Date.now(), 'sale');
  assert.ok(next.gainPrior.requestsPerSend > 2.5, `the next sale starts near what the last one taught: ${next.gainPrior.requestsPerSend}`);
  const shown = await pushctl(['model', 'show', '--kind', 'sale', '--json'], testEnv({ prefix, snsUrl: 'http://127.0.0.1:9' }));
  assert.equal(shown.code, 0, shown.stderr);
  const view = JSON.parse(shown.stdout);
  assert.equal(view.next.kind, 'sale');
  assert.ok(Math.abs(view.next.requestsPerSend - next.gainPrior.requestsPerSend) < 0.01, `${view.next.requestsPerSend}`);
});
