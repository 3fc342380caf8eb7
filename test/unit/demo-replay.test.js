import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replayDecisions, replayOptions } from '../../demo/replay.js';
import { REAL_DEMO } from '../../demo/settings.js';
import { createController } from '../../shared/pacing/controller.js';

/** A governed run's summary, its decisions made by the controller with the run's own options. */
function governedRun() {
  const summary = { settings: REAL_DEMO, source: 'probe', decisions: /** @type {any[]} */ ([]) };
  const controller = createController(replayOptions(summary));
  let remaining = 6000;
  let rate = 0;
  for (let t = -8; t <= 200; t += 2) {
    const sent = t > 0 ? Math.min(remaining, Math.round(rate * 2)) : 0;
    remaining -= sent;
    // A gateway whose p95 follows the sends with some jitter.
    const gateway = { p95Ms: 30 + 8 * rate + (t % 6 === 0 ? 40 : 0), p99Ms: 80 + 8 * rate, errorRatio: 0, rps: null };
    const observation = { sent, gateway, remaining: t >= 0 ? remaining : null };
    const decision = controller.update({ now: t * 1000, ...observation });
    rate = decision.rate;
    summary.decisions.push({ t, rate: decision.rate, reason: decision.reason, ...observation });
  }
  return summary;
}

test('a replay with the run\'s own options gives every decision the run logged', () => {
  const summary = governedRun();
  const rows = replayDecisions(summary);
  assert.equal(rows.length, summary.decisions.length);
  for (const r of rows) {
    assert.equal(r.rate, r.loggedRate, `t ${r.t}`);
    assert.equal(r.reason, r.loggedReason, `t ${r.t}`);
  }
  assert.ok(rows.some((r) => r.binding !== null && r.binding.includes('median')), 'names the member whose plan was lowest');
  assert.ok(new Set(rows.map((r) => r.loggedRate)).size > 5, 'the run has decisions worth replaying');
});

test('a changed option changes the replayed decisions, not the logged ones', () => {
  const summary = governedRun();
  const rows = replayDecisions(summary, { maxRate: 3 });
  assert.ok(rows.every((r) => r.rate <= 3));
  assert.ok(rows.some((r) => r.loggedRate > 3));
});

test('a fixed-rate run has no decisions to replay', () => {
  assert.throws(() => replayDecisions({ settings: REAL_DEMO, source: null, decisions: [] }), /not a governed run/);
  assert.throws(() => replayOptions({ settings: REAL_DEMO, source: 'carrier-pigeon' }), /carrier-pigeon/);
});
