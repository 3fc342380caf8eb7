// The demo's parts that production code meets: the demo gateway's /metrics read by the real
// metrics-scrape source, a governor started from PACING_* configuration (the path
// `npm run demo` takes) that ticks on the wall clock's window boundaries, the real gateway's
// latency coming from real CPU, and the flags that choose the gateway and the metric source.
// The demo itself (npm run demo) takes minutes and is not part of npm test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, Agent } from 'node:http';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDemoGateway, rateAtP95, PROBE_ROUTE } from '../../demo/gateway.js';
import { createRealGateway } from '../../demo/real-gateway.js';
import { parseDemoFlags } from '../../demo/flags.js';
import { REAL_DEMO, governorEnv } from '../../demo/settings.js';
import { windowsOf, sloShare } from '../../demo/report.js';
import { createMetricsScrapeSource } from '../../shared/gateway-metrics/metrics-scrape.js';
import { startGovernor } from '../../shared/governor/governor-process.js';
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../shared/logger.js';
import { createRedis, redisKeys } from '../../shared/redis.js';
import { REDIS_URL, DATABASE_URL, ROOT, uniquePrefix, dropPrefix, waitFor } from '../support/harness.js';

/** @type {Array<() => Promise<unknown>>} */
const cleanups = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** @param {{ processes: number, serviceMs: number, downstreamMs: number, timeoutMs: number }} options */
async function gatewayAt(options) {
  const gateway = createDemoGateway(options);
  const url = await gateway.listen(0);
  cleanups.push(() => gateway.close());
  return { gateway, url };
}

/** n GETs, all at once; resolves their status codes. @param {string} url @param {number} n */
function calls(url, n) {
  return Promise.all(Array.from({ length: n }, () => timedGet(`${url}/api/feed`).then((r) => r.status)));
}

/**
 * One GET; resolves its status and latency as the client saw it.
 * @param {string} url
 * @param {Agent} [agent]  a keep-alive pool, as the demo's phones use; a new connection if not given
 * @returns {Promise<{ status: number | undefined, ms: number }>}
 */
function timedGet(url, agent) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { agent }, (res) => { res.resume(); res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started })); }).on('error', reject).end();
  });
}

test('the demo gateway\'s /metrics is what the metrics-scrape source reads', async () => {
  const { url } = await gatewayAt({ processes: 4, serviceMs: 2, downstreamMs: 20, timeoutMs: 2000 });
  const source = createMetricsScrapeSource({ url: `${url}/metrics` });
  cleanups.push(() => source.close());
  assert.equal((await source.read()).gateway, null, 'the first read primes');
  const statuses = await calls(url, 200);
  assert.ok(statuses.every((s) => s === 200));
  const { gateway } = await source.read();
  assert.ok(gateway && gateway.rps !== null && gateway.p95Ms !== null);
  assert.equal(gateway.errorRatio, 0);
  // 200 requests at once on 4 processes of 2 ms: queueing puts the p95 well above the 20 ms floor.
  assert.ok(gateway.p95Ms >= 20 && gateway.p95Ms < 1000, `p95 ${gateway.p95Ms}`);
});

test('requests that would take longer than the timeout are answered 503 and count as errors', async () => {
  const { url } = await gatewayAt({ processes: 1, serviceMs: 1, downstreamMs: 100, timeoutMs: 30 });
  const source = createMetricsScrapeSource({ url: `${url}/metrics` });
  cleanups.push(() => source.close());
  await source.read();
  assert.deepEqual(await calls(url, 5), [503, 503, 503, 503, 503]);
  assert.equal((await source.read()).gateway?.errorRatio, 1);
});

test('the p95 per window is exact, and the SLO line follows the M/M/1 formula', () => {
  // Ten requests ending in the first second (latencies 1..10 ms), none in the second.
  const samples = [];
  for (let i = 1; i <= 10; i++) samples.push(1000 + i, i, i === 10 ? 503 : 200);
  const windows = windowsOf(samples, { from: 1000, to: 3000, windowMs: 1000 });
  assert.deepEqual(windows.map((w) => [w.requests, w.errors, w.p95Ms]), [[10, 1, 10], [0, 0, NaN]]);
  assert.deepEqual(sloShare(windows, 9), { evaluated: 1, within: 0, share: 0, peakP95Ms: 10 });
  // 16 processes × 20 ms: μ = 800/s; p95 = 50 + 20·ln 20/(1 − ρ) = 400 ms at ρ ≈ 0.829.
  assert.ok(Math.abs(rateAtP95({ processes: 16, serviceMs: 20, downstreamMs: 50, timeoutMs: 5000 }, 400) - 663) < 1);
});

test('a governor configured by PACING_* decides once per window, on the window boundaries', async () => {
  const { url } = await gatewayAt({ processes: 4, serviceMs: 2, downstreamMs: 5, timeoutMs: 2000 });
  const prefix = uniquePrefix();
  cleanups.push(() => dropPrefix(prefix));
  const config = loadConfig({
    REDIS_URL, KEY_PREFIX: prefix, LOG_LEVEL: 'info', GATEWAY_METRICS: 'metrics-scrape', GATEWAY_METRICS_URL: `${url}/metrics`,
    PACING_METRICS_WINDOW_MS: '1000', PACING_SLO_P95_MS: '250', PACING_MAX_RATE: '50', PACING_CAPACITY_RPS: '400'
  });
  /** @type {any[]} */
  const lines = [];
  const logger = createLogger(config, {}, { write: (line) => { lines.push(JSON.parse(line)); } });
  // Background load only: a call that fails (the gateway closing at the end) is no concern here.
  /** @type {Promise<unknown>} */
  let inFlight = Promise.resolve();
  const traffic = setInterval(() => { inFlight = calls(url, 5).catch(() => {}); }, 50);
  const stopTraffic = async () => { clearInterval(traffic); await inFlight; };
  cleanups.push(stopTraffic);
  const governor = await startGovernor(config, logger);
  cleanups.push(() => governor.close());
  const ticks = () => lines.filter((l) => l.msg === 'governor tick');
  await waitFor(async () => ticks().length >= 4, { timeoutMs: 8000, what: 'four governor ticks' });

  const started = lines.find((l) => l.msg === 'governor started');
  assert.equal(started.pacing.metricsWindowMs, 1000);
  assert.equal(started.pacing.binMs, 1000);
  assert.equal(started.pacing.sloP95Ms, 250);
  assert.equal(started.pacing.metricsLagMs, 0, 'a scrape has no lag');
  // The first tick comes at once when the lease is taken; every later one just after a whole second.
  for (const tick of ticks().slice(1)) assert.ok(tick.now % 1000 < 300, `tick at ${tick.now} is ${tick.now % 1000} ms into its window`);
  assert.ok(ticks().every((t) => t.rate <= 50), 'PACING_MAX_RATE bounds the rate');
  assert.ok(ticks().slice(1).some((t) => t.gateway !== null), 'the scrape yields gateway windows');
  await governor.close();
  await stopTraffic();
  const redis = createRedis(REDIS_URL, { name: 'pushpace:demo-test' });
  cleanups.push(() => redis.quit());
  assert.equal(Number(await redis.hget(redisKeys(prefix).bucket, 'rate')), ticks().at(-1).rate, 'the last decision is in the bucket');
  await sleep(0);
});

test('the real gateway\'s latency comes from its CPU: it rises with load, the probe queues with the users', async () => {
  const gateway = createRealGateway({ cpuMs: 4, databaseUrl: DATABASE_URL, rows: 50 });
  const url = await gateway.listen(0);
  cleanups.push(() => gateway.close());
  const source = createMetricsScrapeSource({ url: `${url}/metrics` });
  cleanups.push(() => source.close());
  // Like the demo's phones, the burst below comes over open keep-alive connections: its requests
  // wait in their sockets while the CPU is busy and are parsed together, so the gateway's own
  // histogram sees their queue. (Over 60 new connections, accepted one loop turn at a time,
  // its mean under load was within 1% of the quiet one in 1 run of 8.)
  const phones = new Agent({ keepAlive: true, maxSockets: 61 });
  cleanups.push(async () => phones.destroy());
  await Promise.all(Array.from({ length: 61 }, () => timedGet(`${url}/healthz`, phones)));
  assert.equal(Object.values(phones.freeSockets).flat().length, 61, 'the connections are open');
  await timedGet(`${url}/api/feed`, phones); // warms the pool's connections
  await source.read();
  // The histogram's exact totals for the users' route (labelled /api): requests and summed seconds.
  const served = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const total = (/** @type {string} */ field) => text.split('\n').filter((l) => l.startsWith(`http_request_duration_seconds_${field}{route="/api"`))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    return { count: total('count'), seconds: total('sum') };
  };
  const before = await served();
  // One request at a time: its own lookup and 4 ms of CPU.
  const alone = [];
  for (let i = 0; i < 10; i++) alone.push((await timedGet(`${url}/api/feed`, phones)).ms);
  const quiet = await source.read();
  const afterQuiet = await served();
  // 60 at once, with a probe among them: each waits for the CPU of those before it.
  const stats = async () => /** @type {{ workMs: number, rounds: number, roundsPerMs: number }} */ (await (await fetch(`${url}/_demo/stats`)).json());
  const workDone = async () => (await stats()).workMs;
  const workBefore = await workDone();
  const cpuBefore = process.cpuUsage(); // the gateway runs in this process
  const burst = Array.from({ length: 60 }, () => timedGet(`${url}/api/feed`, phones));
  const probe = await timedGet(`${url}${PROBE_ROUTE}`, phones);
  const loaded = (await Promise.all(burst)).map((r) => r.ms).sort((a, b) => a - b);
  const busy = await source.read();
  const afterBusy = await served();
  const workAfter = await workDone();
  const cpu = process.cpuUsage(cpuBefore);

  alone.sort((a, b) => a - b);
  assert.ok(loaded[30] > 4 * alone[5], `median ${loaded[30].toFixed(1)} ms under load against ${alone[5].toFixed(1)} ms alone`);
  assert.ok(probe.status === 200 && probe.ms > 4 * alone[5], `the probe queued behind the users: ${probe.ms.toFixed(1)} ms`);
  // The work is CPU, not a timer: the process spent the CPU its PBKDF2 rounds cost. Judged by
  // the rounds, not by the work's wall time: on a busy machine the work is preempted and its
  // wall time grows (405 ms of CPU for 619 ms of work, with four other jobs on the two cores),
  // while the CPU a round costs does not. This machine runs the same work at two speeds about
  // 1.5x apart, in phases (calibrateRoundsPerMs): a round may cost 1/1.5 of the calibrated
  // time, never less. A timer instead of the work would spend almost none.
  const workMs = workAfter - workBefore;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const { rounds, roundsPerMs } = await stats();
  const roundsCpuMs = 60 * rounds / roundsPerMs;
  assert.ok(workMs > 60 * 1, `${workMs.toFixed(1)} ms of work for 60 requests`);
  assert.ok(cpuMs >= roundsCpuMs / 1.5, `${cpuMs.toFixed(1)} ms of CPU spent for 60 × ${rounds} rounds, ${roundsCpuMs.toFixed(1)} ms at the calibrated speed`);
  assert.ok(loaded[59] >= 0.8 * workMs, `the last of 60 requests waited for the others' CPU: ${loaded[59].toFixed(1)} ms, ${workMs.toFixed(1)} ms of work`);
  // The gateway's own histogram sees the queue too: the requests parsed together wait in the
  // process for each other's lookup and CPU. (It misses what waited in the kernel while a
  // request's CPU ran: docs/demo.md.) Its exact sum, not its p95, whose lowest bucket is 25 ms.
  assert.ok(quiet.gateway && busy.gateway, 'both windows were read');
  assert.equal(afterBusy.count - afterQuiet.count, 60, 'every request of the burst is in the histogram');
  const meanQuiet = (afterQuiet.seconds - before.seconds) / (afterQuiet.count - before.count);
  const meanBusy = (afterBusy.seconds - afterQuiet.seconds) / 60;
  assert.ok(meanBusy > 4 * meanQuiet, `/metrics mean ${(meanBusy * 1000).toFixed(1)} ms under load against ${(meanQuiet * 1000).toFixed(1)} ms alone`);
});

test('--source and --gateway choose the governor\'s metric source and the gateway; a bad value exits 2 naming the flag', () => {
  const probe = parseDemoFlags(['--gateway', 'real', '--source', 'probe']);
  assert.ok(!('error' in probe) && probe.world === REAL_DEMO && probe.source === 'probe' && probe.audience === REAL_DEMO.audience);
  const env = governorEnv(probe.world, 'http://127.0.0.1:9', probe.source);
  assert.equal(env.GATEWAY_METRICS, 'active-probe');
  assert.equal(env.GATEWAY_METRICS_URL, `http://127.0.0.1:9${PROBE_ROUTE}`);
  // What the governor process will accept.
  assert.equal(loadConfig({ ...env, REDIS_URL }).gatewayMetrics.kind, 'active-probe');
  // The operator's low figure for the users' load reaches the controller (the probe reads load off the latency curve).
  assert.equal(loadConfig({ ...env, REDIS_URL }).pacing.controller.baseLoadRps, REAL_DEMO.priors.baseLoadRps);
  assert.ok(Number(REAL_DEMO.priors.baseLoadRps) > 0 && Number(REAL_DEMO.priors.baseLoadRps) < REAL_DEMO.baselineRps);
  assert.equal(governorEnv(REAL_DEMO, 'http://127.0.0.1:9').GATEWAY_METRICS, 'metrics-scrape');
  const defaults = parseDemoFlags([]);
  assert.ok(!('error' in defaults) && defaults.source === 'scrape' && defaults.world.name === 'modelled');
  assert.match(/** @type {any} */ (parseDemoFlags(['--fixed-rate', '0'])).error, /--fixed-rate/);

  for (const [flag, value] of [['--source', 'prometheus'], ['--gateway', 'fake']]) {
    const run = spawnSync(process.execPath, ['demo/main.js', flag, value], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`${flag} must be .* got "${value}"`));
  }
});
