// A REDIS_URL whose database the server does not have (/99 on a server with 16) once sent
// a campaign into database 0 and exited 0; "/abc" crashed with a stack trace. Now the URL is
// validated at start and a refused SELECT stops the connection, in every process type.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createRedis, assertRedisReachable } from '../../shared/redis.js';
import { createBullmqQueue } from '../../shared/queue/bullmq-queue.js';
import { createLogger } from '../../shared/logger.js';
import { REDIS_URL, ROOT, uniquePrefix, dropPrefix, testEnv, pushctl, makeAudience, makeMessage } from '../support/harness.js';

const MISSING_DATABASE = `${REDIS_URL.replace(/\/\d*$/, '')}/99`;
const prefix = uniquePrefix();
const db0 = new Redis(`${REDIS_URL.replace(/\/\d*$/, '')}/0`);
after(async () => {
  await dropPrefix(prefix);
  await db0.del('pushpace-test:select-probe');
  db0.disconnect();
});

/** Keys of this file's prefix in database 0, where a refused SELECT used to leave them. */
const keysInDb0 = () => db0.keys(`{${prefix}}*`);

test('a connection whose SELECT is refused runs no command, and says it is REDIS_URL', async () => {
  const redis = createRedis(MISSING_DATABASE, { name: 'pushpace:test' });
  try {
    const write = redis.set('pushpace-test:select-probe', 'landed in db 0');
    await assert.rejects(write, /Connection is closed/);
    await assert.rejects(assertRedisReachable(redis, MISSING_DATABASE), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_CONFIG');
      assert.match(/** @type {Error} */ (error).message, /^REDIS_URL names a database this Redis does not have: SELECT 99 was refused \(ERR DB index is out of range\)/);
      return true;
    });
    assert.equal(await db0.get('pushpace-test:select-probe'), null, 'nothing ran on database 0');
  } finally {
    redis.disconnect();
  }
});

test('BullMQ\'s connections stop too: an enqueue fails instead of landing in database 0', async () => {
  const queue = createBullmqQueue({ redis: MISSING_DATABASE, prefix: `{${prefix}}:bull`, name: 'segments', attempts: 1, logger: createLogger({ logLevel: 'silent' }) });
  try {
    await assert.rejects(queue.enqueue([{ id: 1 }]));
  } finally {
    await queue.close();
  }
  assert.deepEqual(await keysInDb0(), []);
});

test('pushctl send with a missing database or a malformed one exits 2 naming REDIS_URL and enqueues nothing anywhere', async () => {
  const audience = await makeAudience(20);
  const message = await makeMessage(audience.dir);
  try {
    /** @type {[string, RegExp][]} */
    const cases = [['/99', /SELECT 99 was refused/], ['/16', /SELECT 16 was refused/], ['/-1', /whole number after the host/], ['/abc', /whole number after the host/]];
    for (const [path, reason] of cases) {
      const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9', REDIS_URL: `${REDIS_URL.replace(/\/\d*$/, '')}${path}` });
      const run = await pushctl(['send', '--audience', audience.path, '--message', message], env);
      assert.equal(run.code, 2, `${path}: ${run.stderr}`);
      assert.match(run.stderr, /^pushctl: REDIS_URL /, path);
      assert.match(run.stderr, reason, path);
      assert.doesNotMatch(run.stderr, /\n\s+at /, `${path}: no stack trace`);
    }
    assert.deepEqual(await keysInDb0(), [], 'no campaign, segment or queue key in database 0');
  } finally {
    await audience.remove();
  }
});

test('every Procfile process type started on a missing database exits 2 naming REDIS_URL, and writes nothing', async () => {
  const types = readFileSync(join(ROOT, 'Procfile'), 'utf8').trim().split('\n')
    .map((line) => /** @type {[string, string]} */ (line.split(/:\s+/, 2)))
    .filter(([type]) => type !== 'release'); // db migrate: PostgreSQL only
  assert.ok(types.length >= 5, 'worker, governor, ingest, scheduler and web at least');
  await Promise.all(types.map(async ([type, command]) => {
    const [, script] = command.split(' ');
    const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9', REDIS_URL: MISSING_DATABASE, LOG_LEVEL: 'info',
      GATEWAY_METRICS: 'active-probe', GATEWAY_METRICS_URL: 'http://127.0.0.1:9/' }); // the governor's source; never reached
    const child = spawn(process.execPath, [join(ROOT, script)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code] = await once(child, 'close');
    clearTimeout(timer);
    assert.equal(code, 2, `${type}: ${output}`);
    assert.match(output, /REDIS_URL names a database this Redis does not have: SELECT 99 was refused/, type);
  }));
  assert.deepEqual(await keysInDb0(), []);
});
