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
  recorder.add(outcome(1));
  recorder.flushSoon();
  recorder.add(outcome(2));
  await recorder.drain();
  assert.deepEqual(store.recorded.sort(), [1, 2]);
  assert.ok(store.calls >= 3);
});

test('drain gives up after its budget and says how many outcomes are unrecorded', async () => {
  const store = flakyStore(Infinity);
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log, { drainBudgetMs: 300 });
  recorder.add(outcome(1));
  recorder.add(outcome(2));
  await assert.rejects(recorder.drain(), /could not record 2 send outcomes/);
});

test('one write at a time: outcomes added during a write go in the next one', async () => {
  const store = flakyStore(0);
  const recorder = createOutcomeRecorder(/** @type {any} */ (store), 'c-1', log);
  recorder.add(outcome(1));
  recorder.flushSoon();
  recorder.add(outcome(2));
  recorder.flushSoon(); // a write is running: this one waits
  assert.equal(store.calls, 1);
  await recorder.drain();
  assert.equal(store.calls, 2);
  assert.deepEqual(store.recorded, [1, 2]);
});
