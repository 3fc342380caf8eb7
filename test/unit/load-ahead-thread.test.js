// The web process's forecast thread (shared/forecast/load-ahead-thread.js): the same answer as
// load-ahead.js in this process, a failure told to its caller only, and a thread that dies is
// replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLoadAheadThread } from '../../shared/forecast/load-ahead-thread.js';
import { loadAhead } from '../../shared/forecast/load-ahead.js';
import { liveModelOf } from '../../shared/governor/live-model.js';
import { resolveControllerOptions } from '../../shared/pacing/controller-options.js';

const model = liveModelOf({ requestsPerSend: 1.5, requestsPerSendSd: 0.15, baseline: 300, baselineSd: 5, capacity: 1000, medianFactor: 1, sigmaFactor: 1, excessNoiseRps: 0 },
  resolveControllerOptions({}), { at: Date.UTC(2026, 10, 24, 12), rate: 100, reason: 'plan' });
const points = [0, 10, 20, 30].map((s) => ({ t: model.at - 30_000 + s * 1000, processed: s * 400 }));
const campaign = { remaining: 200_000, points, now: model.at };

test('the thread answers as load-ahead.js does here; a bad model fails that request only', async (t) => {
  const thread = createLoadAheadThread();
  t.after(() => thread.close());
  const [there, again] = await Promise.all([thread.compute(model, campaign), thread.compute(model, { ...campaign, remaining: 1000 })]);
  assert.deepEqual(there, loadAhead(model, campaign));
  assert.deepEqual(again, loadAhead(model, { ...campaign, remaining: 1000 }));
  await assert.rejects(thread.compute({ ...model, options: { ...model.options, binMs: 1500 } }, campaign), /binMs must be a whole number of seconds/);
  assert.deepEqual(await thread.compute(model, campaign), there, 'the thread goes on after a failed request');
});

test('closing fails what waits and a later request starts a new thread', async () => {
  const thread = createLoadAheadThread();
  const waiting = thread.compute(model, { ...campaign, remaining: 3_000_000 });
  await thread.close();
  await assert.rejects(waiting, /the load-ahead thread exited/);
  assert.deepEqual(await thread.compute(model, campaign), loadAhead(model, campaign));
  await thread.close();
});
