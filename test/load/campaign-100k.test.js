// The whole path at scale, on each queue backend: pushctl send → segments →
// 2 worker processes → SNS emulator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, waitForFinish } from '../support/harness.js';

const DEVICES = 100_000;
// 2,000/s keeps two workers, the emulator and Redis within this 2-core machine (about 1.5 cores
// in all: the SDK costs about 0.5 ms of CPU per publish, see FIELD-NOTES), so the rate measured
// is the bucket's, not the CPU's. Measured here: 0.989 of the rate on both backends.
const RATE = 2000;

for (const backend of ['bullmq', 'rabbitmq']) {
  test(`${backend}: ${DEVICES} devices with 2 workers, one publish each, at the set rate`, { timeout: 180_000 }, async () => {
    const stack = await startStack({ devices: DEVICES, workers: 2, settings: {
      QUEUE_BACKEND: backend, SEND_RATE: RATE, SEND_BURST: Math.ceil(RATE / 20), SEGMENT_SIZE: 500, WORKER_CONCURRENCY: 4, PUBLISH_CONCURRENCY: 64
    } });
    try {
      const sent = await stack.send(['--name', 'scale']);
      assert.equal(sent.devices, DEVICES);

      const status = await waitForFinish(sent.id, stack.env, 170_000);
      assert.equal(status.state, 'completed');
      assert.equal(status.delivered, DEVICES);
      assert.equal(status.failed, 0);

      const stats = stack.emulator.stats();
      assert.equal(stats.published, DEVICES, 'exactly one Publish per device');
      assert.equal(stats.distinctTargets, DEVICES);
      assert.equal(stats.duplicateTargets, 0);

      const seconds = (Number(stats.lastAt) - Number(stats.firstAt)) / 1000;
      const achieved = (DEVICES - 1) / seconds;
      const ratio = achieved / RATE;
      console.log(`# ${backend}: achieved ${achieved.toFixed(1)}/s over ${seconds.toFixed(1)} s (ratio ${ratio.toFixed(3)}); max in any 1 s window ${stats.maxPerSecond}`);
      assert.ok(ratio >= 0.95 && ratio <= 1.05, `achieved rate ${achieved.toFixed(1)}/s is not within ±5% of ${RATE}/s`);
      assert.ok(stats.maxPerSecond <= 1.2 * RATE, `a 1-second window had ${stats.maxPerSecond} sends, over 1.2 × ${RATE}`);
    } finally {
      await stack.close();
    }
  });
}
