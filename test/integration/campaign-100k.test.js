// The whole path at scale: pushctl send → BullMQ segments → 2 worker processes → SNS emulator.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  uniquePrefix, dropPrefix, startEmulator, testEnv, startWorker, pushctl, waitForFinish, makeAudience, makeMessage
} from '../support/harness.js';

const DEVICES = 100_000;
// 1,500/s keeps two workers, the emulator and Redis within this 2-core machine with room to spare:
// the SDK costs about 0.5 ms of CPU per publish (see FIELD-NOTES), so the rate measured is the bucket's, not the CPU's.
const RATE = 1500;

/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;
/** @type {Awaited<ReturnType<typeof makeAudience>>} */
let audience;
const prefix = uniquePrefix();
/** @type {Awaited<ReturnType<typeof startWorker>>[]} */
const workers = [];

before(async () => {
  sns = await startEmulator();
  audience = await makeAudience(DEVICES);
});

after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await sns.emulator.close();
  await audience.remove();
  await dropPrefix(prefix);
});

test(`${DEVICES} devices with 2 workers: one publish each, at the set rate`, { timeout: 180_000 }, async () => {
  const env = testEnv({ prefix, snsUrl: sns.url, SEND_RATE: RATE, SEND_BURST: Math.ceil(RATE / 20), SEGMENT_SIZE: 500,
    WORKER_CONCURRENCY: 4, PUBLISH_CONCURRENCY: 64 });
  workers.push(await startWorker(env), await startWorker(env));
  const message = await makeMessage(audience.dir);

  const sent = await pushctl(['send', '--audience', audience.path, '--message', message, '--name', 'scale', '--yes', '--json'], env);
  assert.equal(sent.code, 0, sent.stderr);
  const { id, devices } = JSON.parse(sent.stdout);
  assert.equal(devices, DEVICES);

  const status = await waitForFinish(id, env, 170_000);
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES);
  assert.equal(status.failed, 0);

  const stats = sns.emulator.stats();
  assert.equal(stats.published, DEVICES, 'exactly one Publish per device');
  assert.equal(stats.distinctTargets, DEVICES);
  assert.equal(stats.duplicateTargets, 0);

  const seconds = (Number(stats.lastAt) - Number(stats.firstAt)) / 1000;
  const achieved = (DEVICES - 1) / seconds;
  const ratio = achieved / RATE;
  console.log(`# achieved ${achieved.toFixed(1)}/s over ${seconds.toFixed(1)} s (ratio ${ratio.toFixed(3)}); max in any 1 s window ${stats.maxPerSecond}`);
  assert.ok(ratio >= 0.95 && ratio <= 1.05, `achieved rate ${achieved.toFixed(1)}/s is not within ±5% of ${RATE}/s`);
  assert.ok(stats.maxPerSecond <= 1.2 * RATE, `a 1-second window had ${stats.maxPerSecond} sends, over 1.2 × ${RATE}`);
});
