// A delayed RabbitMQ item held by the consumer for its last milliseconds is handled no
// earlier than its release time (queue-contract.test.js once saw it 1 ms early).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleepUntil } from '../../shared/queue/rabbitmq-queue.js';

test('sleepUntil never returns before the wall clock reaches the time, even when the event loop was busy', async () => {
  let early = 0;
  for (let i = 0; i < 200; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    // The consumer parses and checks a delivery before it holds it: the loop is a little behind.
    const busyUntil = Date.now() + 2;
    while (Date.now() < busyUntil);
    const at = Date.now() + 5;
    await sleepUntil(at);
    if (Date.now() < at) early++;
  }
  assert.equal(early, 0, `${early} of 200 returned before their time`);
});

test('sleepUntil returns at once for a time already passed', async () => {
  const started = Date.now();
  await sleepUntil(started - 1000);
  assert.ok(Date.now() - started < 50);
});
