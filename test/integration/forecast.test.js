// The forecast on real Redis: a governor (the real pacing controller, fed gateway windows)
// publishes its live model each tick, and pushctl send --dry-run and schedule add forecast
// from it; with no governor (or one whose snapshot has expired) they say so and estimate
// from the fixed rate. A sent campaign keeps its forecast for pushctl report.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createRedis, redisKeys } from '../../shared/redis.js';
import { createTokenBucket } from '../../shared/token-bucket.js';
import { createGovernor } from '../../shared/governor/governor.js';
import { createLiveModelStore, liveModelKeys } from '../../shared/governor/live-model.js';
import { createInspectableController } from '../../shared/pacing/controller.js';
import { resolveControllerOptions } from '../../shared/pacing/controller-options.js';
import { createLogger } from '../../shared/logger.js';
import { REDIS_URL, uniquePrefix, dropPrefix, waitFor, testEnv, pushctl, makeAudience, makeMessage } from '../support/harness.js';

const prefix = uniquePrefix();
const redis = createRedis(REDIS_URL, { name: 'pushpace:forecast-test' });
const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9' });
/** @type {Awaited<ReturnType<typeof makeAudience>>} */
let audience;
let message = '';
before(async () => {
  audience = await makeAudience(3000);
  message = await makeMessage(audience.dir);
});
after(async () => {
  await audience?.remove();
  await dropPrefix(prefix);
  await redis.quit();
});

/** @param {string[]} extra */
const dryRun = (extra = []) => pushctl(['send', '--audience', audience.path, '--message', message, '--dry-run', ...extra], env);

test('no governor: the dry run says so and estimates from the fixed rate', async () => {
  const text = await dryRun();
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /no governor is running: estimate from the fixed rate \(\d+\/s\) alone: about/);
  const json = await dryRun(['--json']);
  const answer = JSON.parse(json.stdout);
  assert.equal(answer.forecast.source, 'fixed-rate');
  assert.equal(answer.forecast.durationSeconds, Math.ceil(3000 / answer.rate));
  assert.equal(answer.forecast.peakLoadRps, null);
  assert.equal('load' in answer.forecast, false, 'the per-bin load is for the chart, not --json');
});

test('a live governor: the forecast comes from its model, in send --dry-run, schedule add and the campaign\'s report', async () => {
  // A load test the operator trusts (no trial of the prior): the replay sends the campaign
  // below in one tick, which the calibration's arithmetic reads.
  const options = resolveControllerOptions({ capacityRps: 1000, capacityTrialShare: 1, metricsWindowMs: 1000, metricsLagMs: 1000, binMs: 1000 });
  // The gateway at 300 req/s and well inside the SLO: the baseline the model learns.
  const governor = createGovernor({
    redis, keyPrefix: prefix, bucket: createTokenBucket(redis, { keyPrefix: prefix, sendRate: 100, sendBurst: 5 }),
    controller: createInspectableController(options),
    readGateway: async () => ({ rps: 300, p95Ms: 80, p99Ms: 120, errorRatio: 0 }),
    logger: createLogger({ logLevel: 'warn' }, {}, { write: () => {} }),
    tickMs: 200, liveModel: { store: createLiveModelStore(redis, prefix), options }
  });
  const startedHour = new Date().getUTCHours();
  governor.start();
  try {
    const store = createLiveModelStore(redis, prefix);
    await waitFor(async () => ((await store.read())?.baselineRps ?? 0) > 250, { timeoutMs: 10_000, what: 'a live model with the baseline' });
    const ttl = await redis.pttl(liveModelKeys(prefix).live);
    assert.ok(ttl > 0 && ttl <= 1000, `the snapshot expires on its own: ${ttl} ms`);
    // Windows with no sends teach their UTC hour's baseline (two hours if the test straddles one's end).
    const byHour = await store.readBaselineByHour();
    const hours = new Set([startedHour, new Date().getUTCHours()]);
    assert.ok(byHour.length >= 1 && byHour.every((h) => hours.has(h.hour) && h.windows >= 1 && h.rps > 250), JSON.stringify(byHour));

    const json = await dryRun(['--json']);
    assert.equal(json.code, 0, json.stderr);
    const { forecast } = JSON.parse(json.stdout);
    assert.equal(forecast.source, 'governor');
    assert.equal(forecast.capacityRps, 1000);
    assert.ok(forecast.baselineRps > 250 && forecast.baselineRps < 350, `baseline ${forecast.baselineRps}`);
    assert.ok(forecast.peakLoadRps > forecast.baselineRps && forecast.peakLoadRps <= 1000, `peak ${forecast.peakLoadRps}`);
    assert.ok(forecast.durationLowSeconds <= forecast.durationSeconds && forecast.durationSeconds <= forecast.durationHighSeconds);
    assert.equal(forecast.calibration, null, 'an empty memory: nothing to calibrate on');
    const text = await dryRun();
    assert.match(text.stdout, /Forecast from the live governor: about .+ peak gateway load about [\d,]+ req\/s .+ against a capacity of 1,000 req\/s/);
    assert.match(text.stdout, /Not calibrated: the memory holds no finished campaign/);

    // A campaign the memory keeps (as the governor writes it) of 3,000 sends, which the model
    // replays in one second (all at once, as this dry run's): it took 2 s, then 4 s, and the
    // forecast, read from Redis, scales the model's by 2, then 4.
    const memoryKey = redisKeys(prefix).modelMemory;
    const remembered = (/** @type {number} */ seconds) => JSON.stringify({
      at: Date.now() - 60_000, kind: null, sends: 3000, requestsPerSend: forecast.requestsPerSend, requestsPerSendSd: forecast.requestsPerSendSd,
      medianFactor: 1, sigmaFactor: 1, seconds, baselineRps: forecast.baselineRps, capacityRps: 1000,
      startPrior: { requestsPerSend: forecast.requestsPerSend, requestsPerSendSd: forecast.requestsPerSendSd }
    });
    assert.equal(forecast.modelDurationSeconds, 1, 'the model sends 3,000 at once');
    await redis.lpush(memoryKey, remembered(2));
    const once = JSON.parse((await dryRun(['--json'])).stdout).forecast;
    assert.deepEqual([once.calibration, once.modelDurationSeconds, once.durationSeconds], [{ campaigns: 1, ratio: 2, spread: 1 }, 1, 2]);
    await redis.del(memoryKey);
    await redis.lpush(memoryKey, remembered(4));
    const twice = JSON.parse((await dryRun(['--json'])).stdout).forecast;
    assert.deepEqual([twice.calibration?.ratio, twice.durationSeconds], [4, 4]);
    assert.match((await dryRun()).stdout, /Calibrated on the last campaign: they took [\d.]+× what the model replays for them/);
    await redis.del(memoryKey);

    const schedule = await pushctl(['schedule', 'add', 'forecast-test', '--cron', '0 20 * * *', '--timezone', 'UTC',
      '--audience', audience.path, '--message', message, '--dry-run', '--json'], env);
    assert.equal(schedule.code, 0, schedule.stderr);
    assert.equal(JSON.parse(schedule.stdout).forecast.source, 'governor');

    // A sent campaign keeps the forecast made at launch; the report compares it.
    const sent = await pushctl(['send', '--audience', audience.path, '--message', message, '--yes', '--json'], env);
    assert.equal(sent.code, 0, sent.stderr);
    const { id } = JSON.parse(sent.stdout);
    const stored = JSON.parse(/** @type {string} */ (await redis.hget(redisKeys(prefix).campaign(id).hash, 'forecast')));
    assert.equal(stored.source, 'governor');
    const report = await pushctl(['report', id, '--json'], env);
    assert.equal(report.code, 0, report.stderr);
    const r = JSON.parse(report.stdout);
    assert.equal(r.forecast.durationSeconds, stored.durationSeconds);
    assert.ok(r.forecastComparison.some((/** @type {{ field: string }} */ c) => c.field === 'durationSeconds'));
  } finally {
    await governor.stop();
  }
  // Stopped: the snapshot expires within its TTL and the dry run falls back.
  await waitFor(async () => (await redis.exists(liveModelKeys(prefix).live)) === 0, { timeoutMs: 5000, what: 'the snapshot to expire' });
  const after = JSON.parse((await dryRun(['--json'])).stdout);
  assert.equal(after.forecast.source, 'fixed-rate');
});
