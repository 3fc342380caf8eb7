// The paced-send loop both senders share, against a fake bucket lane and fake sends,
// on the real clock (retry backoffs of 125–500 ms).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendPaced } from '../../shared/sending/send-paced.js';

/** A lane that grants every token while `state` is 'running'. @param {{ state: string }} lane */
const grantAll = (lane) => async (/** @type {number} */ want) =>
  ({ granted: lane.state === 'running' ? want : 0, waitMs: 0, state: lane.state, rate: 100 });

/** @param {Partial<Parameters<typeof sendPaced<number>>[0]>} job */
function run(job) {
  return sendPaced({
    targets: [1, 2, 3],
    take: grantAll({ state: 'running' }),
    send: async () => undefined,
    maxInFlight: () => 2,
    minTakeIntervalMs: 10,
    sendAttempts: 2,
    signal: new AbortController().signal,
    ...job
  });
}

test('throttles use up no attempts; transient errors are given up after sendAttempts', async () => {
  /** @type {Map<number, number>} */
  const calls = new Map();
  /** @type {number[]} */
  const gaveUp = [];
  const result = await run({
    send: async (n) => {
      calls.set(n, (calls.get(n) ?? 0) + 1);
      if (n === 1 && /** @type {number} */ (calls.get(n)) <= 2) return { retry: 'throttled' };
      if (n === 2) return { retry: 'transient', reason: '500' };
      return undefined;
    },
    onGiveUp: (n) => gaveUp.push(n)
  });
  assert.deepEqual(result, { halt: null, pending: [], exhausted: [2] });
  assert.deepEqual([...calls].sort(), [[1, 3], [2, 2], [3, 1]]);
  assert.deepEqual(gaveUp, [2]);
});

test('a grant for a campaign no longer running halts with the targets not sent', async () => {
  const lane = { state: 'running' };
  /** @type {number[]} */
  const sent = [];
  const result = await run({
    take: grantAll(lane),
    maxInFlight: () => 1,
    send: async (n) => { sent.push(n); lane.state = 'paused'; return undefined; }
  });
  assert.deepEqual(result, { halt: 'paused', pending: [2, 3], exhausted: [] });
  assert.deepEqual(sent, [1]);
});

test('an abort halts at once, but only after the sends in flight have landed', async () => {
  const controller = new AbortController();
  let landed = 0;
  const result = await run({
    signal: controller.signal,
    send: async () => {
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 50));
      landed++;
      return undefined;
    }
  });
  assert.equal(result.halt, 'aborted');
  assert.equal(landed, 2, 'both sends in flight landed before the loop returned');
  assert.deepEqual(result.pending, [3]);
});

test('no token is taken at or after the deadline: what is left is returned as pending', async () => {
  let takes = 0;
  const result = await run({
    deadlineAt: Date.now() + 100,
    take: async (want) => { takes++; return { granted: 0, waitMs: 1000, state: 'running', rate: 1 }; }
  });
  assert.deepEqual(result, { halt: 'expired', pending: [1, 2, 3], exhausted: [] });
  assert.equal(takes, 1);
});
