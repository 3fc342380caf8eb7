// Heroku Key-Value Store (and other managed Redis) speaks TLS with a self-signed certificate.
// pushctl used to fail on it with "is redis-server running?", and only the process-wide
// NODE_TLS_REJECT_UNAUTHORIZED=0 got through. This file starts its own TLS-only redis-server
// with a certificate made here, and checks that the certificate check is on unless
// REDIS_TLS_REJECT_UNAUTHORIZED=false asks otherwise, that a refusal names TLS, and that the
// setting reaches every connection: ours and BullMQ's, in pushctl and in a worker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedis, assertRedisReachable } from '../../shared/redis.js';
import { createBullmqQueue } from '../../shared/queue/bullmq-queue.js';
import { createLogger } from '../../shared/logger.js';
import { REDIS_URL, uniquePrefix, testEnv, pushctl, startEmulator, startWorker, makeAudience, makeMessage, waitFor } from '../support/harness.js';
import { freePort, selfSignedCert, startRedisServer } from '../support/local-redis.js';

/** @type {string} */
let dir;
/** @type {import('node:child_process').ChildProcess} */
let server;
/** @type {string} */
let tlsUrl;
/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pushpace-tls-'));
  // A self-signed certificate for localhost, as Heroku's is self-signed.
  const { cert, key } = selfSignedCert(dir);
  const port = await freePort();
  server = await startRedisServer(['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1',
    '--tls-cert-file', cert, '--tls-key-file', key, '--tls-ca-cert-file', cert,
    '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no', '--dir', dir], 'the TLS redis-server');
  tlsUrl = `rediss://127.0.0.1:${port}`;
  sns = await startEmulator();
});

after(async () => {
  await sns?.emulator.close();
  server?.kill('SIGKILL');
  if (server && server.exitCode === null) await once(server, 'exit');
  await rm(dir, { recursive: true, force: true });
});

test('a self-signed certificate is refused by default, with an error naming TLS and the setting (exit 2)', async () => {
  const redis = createRedis({ url: tlsUrl, tlsRejectUnauthorized: true }, { failFast: true, name: 'pushpace:test' });
  try {
    await assert.rejects(assertRedisReachable(redis, { url: tlsUrl, tlsRejectUnauthorized: true }), (error) => {
      assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_CONFIG');
      assert.match(/** @type {Error} */ (error).message, /TLS certificate was rejected \(DEPTH_ZERO_SELF_SIGNED_CERT/);
      return true;
    });
  } finally {
    redis.disconnect();
  }
  const run = await pushctl(['rate'], testEnv({ prefix: uniquePrefix(), snsUrl: sns.url, REDIS_URL: tlsUrl }));
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /TLS certificate was rejected/);
  assert.match(run.stderr, /REDIS_TLS_REJECT_UNAUTHORIZED=false/);
  assert.doesNotMatch(run.stderr, /is redis-server running/);
});

test('a plain redis:// URL to the TLS-only port says TLS may be required', async () => {
  const plainUrl = tlsUrl.replace('rediss:', 'redis:');
  const run = await pushctl(['rate'], testEnv({ prefix: uniquePrefix(), snsUrl: sns.url, REDIS_URL: plainUrl }));
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /if the server requires TLS, use a rediss:\/\/ URL/);
});

test('a rediss:// URL to a plain Redis port asks whether it speaks TLS (the handshake gets no answer)', async () => {
  const plainServer = new URL(REDIS_URL);
  const run = await pushctl(['rate'], testEnv({ prefix: uniquePrefix(), snsUrl: sns.url, REDIS_URL: `rediss://${plainServer.host}` }));
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /with TLS on this port\? \(rediss:\/\/ is for TLS, redis:\/\/ for plain connections\)/);
});

test('REDIS_TLS_REJECT_UNAUTHORIZED=false connects, for our connection and BullMQ\'s', async () => {
  const target = { url: tlsUrl, tlsRejectUnauthorized: false };
  const redis = createRedis(target, { failFast: true, name: 'pushpace:test' });
  const prefix = uniquePrefix();
  const queue = createBullmqQueue({ redis: target, prefix: `{${prefix}}:bull`, name: 'tls', attempts: 1, logger: createLogger({ logLevel: 'silent' }) });
  try {
    await assertRedisReachable(redis, target);
    assert.equal(await redis.ping(), 'PONG');
    /** @type {unknown[]} */
    const received = [];
    await queue.enqueue([{ n: 1 }, { n: 2 }]);
    await queue.consume(async (payload) => { received.push(payload); }, { concurrency: 1 });
    await waitFor(async () => received.length === 2, { timeoutMs: 10_000, what: 'both items over TLS' });
    assert.deepEqual(received.map((item) => /** @type {{ n: number }} */ (item).n).sort(), [1, 2]);
  } finally {
    await queue.close();
    redis.disconnect();
  }
});

test('with the setting, a campaign goes end to end over TLS: pushctl enqueues, a worker sends', async () => {
  const prefix = uniquePrefix();
  const env = testEnv({ prefix, snsUrl: sns.url, REDIS_URL: tlsUrl, REDIS_TLS_REJECT_UNAUTHORIZED: 'false', SEND_RATE: '500' });
  const audience = await makeAudience(40);
  const message = await makeMessage(audience.dir);
  const worker = await startWorker(env);
  try {
    const sent = await pushctl(['send', '--audience', audience.path, '--message', message, '--yes', '--json'], env);
    assert.equal(sent.code, 0, sent.stderr);
    const { id: campaignId } = JSON.parse(sent.stdout);
    const watched = await pushctl(['status', campaignId, '--watch', '--exit-status'], env);
    assert.equal(watched.code, 0, `the campaign completed: ${watched.stdout} ${watched.stderr}`);
    const status = await pushctl(['status', campaignId, '--json'], env);
    assert.equal(JSON.parse(status.stdout).delivered, 40);
  } finally {
    await worker.stop();
    await audience.remove();
  }
});
