// Workers die: SIGKILL loses nothing and resends at most what was in flight;
// SIGTERM hands work back and exits 0 in time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import {
  uniquePrefix, dropPrefix, startEmulator, testEnv, startWorker, pushctl, waitFor, waitForFinish, makeAudience, makeMessage
} from '../support/harness.js';

const DEVICES = 12_000;
const RATE = 2000;
const PUBLISH_CONCURRENCY = 16;

/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;
/** @type {Awaited<ReturnType<typeof makeAudience>>} */
let audience;
/** @type {string} */
let message;
/** @type {string[]} */
const prefixes = [];
/** @type {Awaited<ReturnType<typeof startWorker>>[]} */
const workers = [];

before(async () => {
  sns = await startEmulator();
  audience = await makeAudience(DEVICES);
  message = await makeMessage(audience.dir);
});

after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await sns.emulator.close();
  await audience.remove();
  await Promise.all(prefixes.map(dropPrefix));
});

/** A fresh key prefix and emulator recording for one test. */
function freshEnv() {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  sns.emulator.reset();
  // A short lock so the killed worker's segments are redelivered within seconds, not 30 s.
  return testEnv({ prefix, snsUrl: sns.url, SEND_RATE: RATE, SEGMENT_SIZE: 250, WORKER_CONCURRENCY: 2,
    PUBLISH_CONCURRENCY, SEGMENT_LOCK_MS: 3000 });
}

/** @param {Record<string, string>} env */
async function send(env) {
  const sent = await pushctl(['send', '--audience', audience.path, '--message', message, '--yes', '--json'], env);
  assert.equal(sent.code, 0, sent.stderr);
  return /** @type {string} */ (JSON.parse(sent.stdout).id);
}

test('SIGKILL mid-campaign: completes, none missed, duplicates ≤ in-flight sends', { timeout: 90_000 }, async () => {
  const env = freshEnv();
  const victim = await startWorker(env);
  const survivor = await startWorker(env);
  workers.push(victim, survivor);
  const id = await send(env);

  await waitFor(async () => sns.emulator.stats().published > DEVICES / 4, { what: 'a quarter of the sends' });
  victim.child.kill('SIGKILL');
  await once(victim.child, 'exit');

  const status = await waitForFinish(id, env, 80_000);
  const stats = sns.emulator.stats();
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES, 'every device has an outcome');
  assert.equal(stats.distinctTargets, DEVICES, 'zero devices missed');
  const duplicates = stats.published - DEVICES;
  console.log(`# SIGKILL: ${duplicates} duplicate publishes (bound ${PUBLISH_CONCURRENCY})`);
  assert.ok(duplicates <= PUBLISH_CONCURRENCY, `${duplicates} duplicates exceed the killed worker's ${PUBLISH_CONCURRENCY} in-flight sends`);
  assert.equal(stats.duplicateTargets, duplicates);
});

test('SIGTERM mid-campaign: exits 0 within 25 s and nothing is lost or resent', { timeout: 90_000 }, async () => {
  const env = freshEnv();
  const leaving = await startWorker(env);
  workers.push(leaving);
  const id = await send(env);

  await waitFor(async () => sns.emulator.stats().published > DEVICES / 4, { what: 'a quarter of the sends' });
  const signalledAt = Date.now();
  leaving.child.kill('SIGTERM');
  const [code] = await once(leaving.child, 'exit');
  const seconds = (Date.now() - signalledAt) / 1000;
  console.log(`# SIGTERM: exit ${code} after ${seconds.toFixed(2)} s`);
  assert.equal(code, 0);
  assert.ok(seconds < 25, `took ${seconds} s`);
  assert.ok(sns.emulator.stats().published < DEVICES, 'the campaign was still running when the worker left');

  // Another worker picks the handed-back segments up at once (no lock to wait out).
  const next = await startWorker(env);
  workers.push(next);
  const status = await waitForFinish(id, env, 60_000);
  const stats = sns.emulator.stats();
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES);
  assert.equal(stats.distinctTargets, DEVICES, 'nothing lost');
  assert.equal(stats.published, DEVICES, 'nothing sent twice: in-flight sends were recorded before hand-back');
});
