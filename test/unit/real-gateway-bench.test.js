import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLimitMs } from '../../bench/real-gateway.js';

test('a run of the real-gateway bench gets the time its 1.3 × target allows, never less than the demo limit', () => {
  // The slow phase of 2026-11-26: best safe fixed 12/s, 6,000 devices in 500 s. The demo's
  // 420 s cut the probe off; a run within 1.3 × (650 s) must fit, with set-up and wake-ups.
  const limit = runLimitMs(420_000, 500);
  assert.ok(limit >= 650_000 + 60_000, `${limit} ms`);
  assert.equal(limit, 840_000);
  // A fast gateway: the demo's own limit is already longer.
  assert.equal(runLimitMs(420_000, 150), 420_000);
  // No safe fixed rate: nothing to scale by.
  assert.equal(runLimitMs(420_000, null), 420_000);
  // A fixed rate gets the same for its own time: 16/s sends 6,000 devices in 375 s, and the
  // demo's 420 s would leave 45 s for the set-up and the last wake-ups.
  assert.equal(runLimitMs(420_000, 6000 / 16), 652_500);
});
