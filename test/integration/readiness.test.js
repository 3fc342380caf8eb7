// /readyz follows Redis: not ready while it is down, ready again once it is back, for a
// worker and a web process, while /healthz (alive) stays 200. Uses a private redis-server on
// a free port, never the shared one on 6379.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { startEmulator, startWorker, testEnv, uniquePrefix, waitFor } from '../support/harness.js';
import { opsPortOf, startProcessType } from '../support/process-type.js';
import { freePort, startRedisServer } from '../support/local-redis.js';

/** @type {{ child: import('node:child_process').ChildProcess } | null} */
let redis = null;
let redisPort = 0;
/** @type {Array<() => Promise<unknown>>} */
const cleanups = [];

before(async () => {
  redisPort = await freePort();
  redis = await startRedis(redisPort);
});

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await stopRedis();
});

test('/readyz turns not ready when Redis stops and ready again when it is back; /healthz stays up', async () => {
  const sns = await startEmulator();
  cleanups.push(() => sns.emulator.close());
  const env = testEnv({ prefix: uniquePrefix(), snsUrl: sns.url, REDIS_URL: `redis://127.0.0.1:${redisPort}`, METRICS_PORT: 0 });
  const [worker, web] = await Promise.all([
    startWorker(env),
    startProcessType('producers/web.js', { ...env, PORT: '0' }, 'dashboard listening')
  ]);
  cleanups.push(() => worker.stop(), () => web.stop());
  const probes = { worker: `http://127.0.0.1:${opsPortOf(worker.output())}`, web: `http://127.0.0.1:${web.port('dashboard listening')}` };

  /** @param {string} base @param {string} path */
  const probe = async (base, path) => {
    const answer = await fetch(`${base}${path}`);
    return { status: answer.status, body: /** @type {any} */ (await answer.json()) };
  };
  /** @param {number} status */
  const allReadyz = (status) => waitFor(async () => {
    for (const base of Object.values(probes)) if ((await probe(base, '/readyz')).status !== status) return false;
    return true;
  }, { timeoutMs: 15_000, intervalMs: 100, what: `every /readyz to answer ${status}` });

  await allReadyz(200);
  const ready = await probe(probes.worker, '/readyz');
  assert.deepEqual(ready.body.checks.map((/** @type {any} */ c) => c.name).sort(), ['redis', 'sns']);

  await stopRedis();
  await allReadyz(503);
  for (const [name, base] of Object.entries(probes)) {
    const { body } = await probe(base, '/readyz');
    const check = body.checks.find((/** @type {any} */ c) => c.name === 'redis');
    assert.equal(check.ok, false, `${name}: ${JSON.stringify(body)}`);
    assert.equal((await probe(base, '/healthz')).status, 200, `${name} is alive`);
  }

  redis = await startRedis(redisPort);
  await allReadyz(200);
  assert.equal(worker.child.exitCode, null, 'the worker rode out the outage');
  assert.equal(web.child.exitCode, null, 'the web process rode out the outage');
});

/** Starts a throwaway redis-server on `port`; resolves once it accepts connections. @param {number} port */
async function startRedis(port) {
  const child = await startRedisServer(['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    'redis-server to start');
  return { child };
}

/** Kills the private redis-server, as a crash would. */
async function stopRedis() {
  const current = redis;
  redis = null;
  if (!current || current.child.exitCode !== null) return;
  const exited = once(current.child, 'exit');
  current.child.kill('SIGKILL');
  await exited;
}
