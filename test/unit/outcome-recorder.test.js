import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createOutcomeRecorder } from '../../shared/sending/outcome-recorder.js';

/** A store whose recordOutcomes fails `failures` times, then records. @param {number} failures */
function flakyStore(failures) {
  /** @type {number[]} */
  const recorded = [];
  let calls = 0;
  return {
    recorded,
    get calls() { return calls; },
    /** @param {string} _id @param {{ seq: number }[]} outcomes */
    async recordOutcomes(_id, outcomes) {
      calls++;
      if (failures-- > 0) throw new Error('READONLY You can\'t write against a read only replica');
      recorded.push(...outcomes.map((o) => o.seq));
      return outcomes.length;
    }
  };
}
const log = pino({ level: 'silent' });
const outcome = (/** @type {number} */ seq) => ({ seq, endpointArn: `arn:${seq}`, outcome: /** @type {const} */ ('delivered') });

test('a failed write is retried by drain and nothing is lost or written twice', async () => {
  const store = flakyStore(2);
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log);
  void recorder.add(outcome(1));
  void recorder.add(outcome(2));
  await recorder.drain();
  assert.deepEqual(store.recorded.sort(), [1, 2]);
  assert.ok(store.calls >= 3);
});

test('drain gives up after its budget and says how many outcomes are unrecorded', async () => {
  const store = flakyStore(Infinity);
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log, { drainBudgetMs: 300 });
  void recorder.add(outcome(1));
  void recorder.add(outcome(2));
  await assert.rejects(recorder.drain(), /could not record 2 send outcomes/);
});

test('one write at a time: outcomes added during a write go in the next one', async () => {
  const store = flakyStore(0);
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log);
  void recorder.add(outcome(1)); // starts a write
  void recorder.add(outcome(2)); // a write is running: this one waits for the next
  assert.equal(store.calls, 1);
  await recorder.drain();
  assert.equal(store.calls, 2);
  assert.deepEqual(store.recorded, [1, 2]);
});

test('an outcome\'s add settles once it is written: what is unwritten is what is still awaited', async () => {
  /** @type {Array<() => void>} */
  const release = [];
  /** @type {number[]} */
  const recorded = [];
  const store = {
    /** @param {string} _id @param {{ seq: number }[]} outcomes */
    recordOutcomes: (_id, outcomes) => new Promise((resolve) => release.push(() => { recorded.push(...outcomes.map((o) => o.seq)); resolve(outcomes.length); }))
  };
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log);
  /** @type {number[]} */
  const settled = [];
  for (const seq of [1, 2, 3]) void recorder.add(outcome(seq)).then(() => settled.push(seq));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([settled, release.length], [[], 1], 'nothing settles before its write');
  /** @type {() => void} */ (release.shift())();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([recorded, settled, release.length], [[1], [1], 1], 'the first write carried 1; 2 and 3 go in the next, started at once');
  /** @type {() => void} */ (release.shift())();
  await recorder.drain();
  assert.deepEqual([recorded, settled.sort()], [[1, 2, 3], [1, 2, 3]]);
});

test('a failed write settles its outcomes\' adds (no slot waits for Redis), keeps them, and drain writes them', async () => {
  const store = flakyStore(1);
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log);
  const first = recorder.add(outcome(1));
  const second = recorder.add(outcome(2));
  await Promise.all([first, second]);
  assert.deepEqual([store.calls, store.recorded], [1, []], 'the failed write is not retried at once');
  await recorder.drain();
  assert.deepEqual(store.recorded, [1, 2]);
});
