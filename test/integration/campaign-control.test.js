// Pause, resume and cancel a running campaign, and change the rate live.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStack, pushctl, waitFor, waitForFinish, campaignStatus } from '../support/harness.js';

const DEVICES = 4000;
/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

before(async () => {
  stack = await startStack({ devices: DEVICES, settings: { SEND_RATE: 800, SEGMENT_SIZE: 250 } });
});
after(() => stack.close());

async function send() {
  return (await stack.send()).id;
}

/** @param {string[]} args */
async function ok(args) {
  const result = await pushctl(args, stack.env);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

test('pause stops sending within 2 s; resume continues where it stopped', { timeout: 60_000 }, async () => {
  const id = await send();
  await waitFor(async () => stack.emulator.stats().published > 600, { what: 'sends to start' });
  const pausedAt = Date.now();
  assert.match(await ok(['pause', id]), /paused/);
  await sleep(Math.max(0, 2000 - (Date.now() - pausedAt)));
  const afterTwoSeconds = stack.emulator.stats().published;
  await sleep(1500);
  assert.equal(stack.emulator.stats().published, afterTwoSeconds, 'no sends 2 s after pause');
  assert.ok(afterTwoSeconds < DEVICES);
  assert.equal((await campaignStatus(id, stack.env)).state, 'paused');

  assert.match(await ok(['resume', id]), /running/);
  const status = await waitForFinish(id, stack.env, 40_000);
  const stats = stack.emulator.stats();
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, DEVICES);
  assert.equal(stats.published, DEVICES, 'resume sent each remaining device once');
  assert.equal(stats.distinctTargets, DEVICES);
});

test('cancel drops what is left', { timeout: 60_000 }, async () => {
  const id = await send();
  await waitFor(async () => stack.emulator.stats().published > 500, { what: 'sends to start' });
  assert.match(await ok(['cancel', id]), /cancelled/);
  const status = await waitForFinish(id, stack.env, 30_000);
  await sleep(1000);
  const stats = stack.emulator.stats();
  assert.equal(status.state, 'cancelled');
  assert.ok(stats.published < DEVICES, 'not everything was sent');
  assert.equal(status.delivered, stats.published, 'every send is accounted for');
  assert.equal(status.delivered + status.cancelled, DEVICES, 'the rest is counted as cancelled');
  const again = await pushctl(['resume', id], stack.env);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /is cancelled/);
});

test('pushctl rate changes the pace of a running campaign', { timeout: 60_000 }, async () => {
  await ok(['rate', '200']);
  const id = await send();
  await sleep(2000);
  const slow = stack.emulator.stats().published;
  assert.ok(slow <= 200 * 2.5, `at 200/s, ${slow} sends after 2 s`);
  await ok(['rate', '2000']);
  const status = await waitForFinish(id, stack.env, 30_000);
  assert.equal(status.delivered, DEVICES);
  const settings = JSON.parse(await ok(['rate', '--json']));
  assert.equal(settings.rate, 2000);
  await ok(['rate', '800']);
});

test('a campaign max rate caps it below the bucket rate', { timeout: 60_000 }, async () => {
  const { id } = await stack.send(['--rate', '300']);
  await sleep(3000);
  await ok(['cancel', id]);
  const stats = stack.emulator.stats();
  const seconds = (Number(stats.lastAt) - Number(stats.firstAt)) / 1000;
  const achieved = stats.published / seconds;
  assert.ok(achieved < 300 * 1.15, `capped at 300/s, achieved ${achieved.toFixed(0)}/s`);
  assert.ok(stats.maxPerSecond <= 300 * 1.2, `max ${stats.maxPerSecond} in a second`);
});
