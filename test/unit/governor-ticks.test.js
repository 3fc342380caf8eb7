import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextTickBoundary } from '../../shared/governor/governor.js';

test('a decision holds between half a tick and a tick and a half, whenever its timer fired', () => {
  const tickMs = 2000;
  const boundary = 190 * tickMs;
  // On time, or late: until the next boundary.
  assert.equal(nextTickBoundary(boundary, tickMs) - boundary, tickMs);
  assert.equal(nextTickBoundary(boundary + 30, tickMs) - (boundary + 30), tickMs - 30);
  // A timer that fired a millisecond early belongs to the boundary it was set for: its
  // decision holds until the one after, not for 1 ms (the plan for 1 ms is the maximum rate,
  // which then held for a whole tick).
  assert.equal(nextTickBoundary(boundary - 1, tickMs) - (boundary - 1), tickMs + 1);
  // The first tick comes when the lease is taken, anywhere in a tick.
  for (let t = boundary; t < boundary + tickMs; t += 37) {
    const hold = nextTickBoundary(t, tickMs) - t;
    assert.ok(hold >= tickMs / 2 && hold <= 1.5 * tickMs, `at ${t - boundary} ms into a tick: ${hold} ms`);
    assert.equal(nextTickBoundary(t, tickMs) % tickMs, 0, 'on a boundary');
  }
});
