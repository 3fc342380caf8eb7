import { test } from 'node:test';
import assert from 'node:assert/strict';
import { governedLimitMs } from '../../bench/real-gateway.js';

test('a governed run of the real-gateway bench gets the time its 1.3 × target allows, never less than the demo limit', () => {
  // The slow phase of 2026-11-26: best safe fixed 12/s, 6,000 devices in 500 s. The demo's
  // 420 s cut the probe off; a run within 1.3 × (650 s) must fit, with set-up and wake-ups.
  const limit = governedLimitMs(420_000, 500);
  assert.ok(limit >= 650_000 + 60_000, `${limit} ms`);
  assert.equal(limit, 840_000);
  // A fast gateway: the demo's own limit is already longer.
  assert.equal(governedLimitMs(420_000, 150), 420_000);
  // No safe fixed rate: nothing to scale by.
  assert.equal(governedLimitMs(420_000, null), 420_000);
});
