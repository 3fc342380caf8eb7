import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLimitMs, decidedUnsafe, formatRealGatewaySection } from '../../bench/real-gateway.js';
import { REAL_DEMO } from '../../demo/settings.js';

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

test('a fixed run of the sweep stops once it can no longer be safe, and not before', () => {
  const world = { sloP95Ms: 500, evaluationWindowMs: 5000, minShareWithinSlo: 0.95 };
  const start = 1_000_000;
  // 540 s until the deadline: at most 109 windows, of which 5 (5%) may be over.
  const deadline = start + 540_000;
  /** One call per second for `seconds`, each `latency(s)` ms, answered with `status`. */
  const calls = (/** @type {number} */ seconds, /** @type {(s: number) => number} */ latency, status = 200) => {
    const samples = [];
    for (let s = 0; s < seconds; s++) samples.push(start + s * 1000 + 500, latency(s), status);
    return samples;
  };
  // Five slow windows (the first 25 s) and then fast ones: it could still end with 5 of 109 over.
  const five = calls(120, (s) => (s < 25 ? 900 : 50));
  assert.equal(decidedUnsafe({ samples: five, campaignStart: start, deadline, now: start + 120_000 }, world), null);
  // A sixth: no ending can bring it back to 95%.
  const six = calls(120, (s) => (s < 30 ? 900 : 50));
  assert.match(String(decidedUnsafe({ samples: six, campaignStart: start, deadline, now: start + 120_000 }, world)), /^6 windows over the SLO, of at most 109$/);
  // A window whose end has not passed yet is not judged: the sixth slow window is still open.
  assert.equal(decidedUnsafe({ samples: six, campaignStart: start, deadline, now: start + 29_000 }, world), null);
  // One failed call (no answer, or 5xx) is enough: a safe run has none.
  const reset = [...calls(60, () => 50), start + 61_200, 3, 0];
  assert.equal(decidedUnsafe({ samples: reset, campaignStart: start, deadline, now: start + 65_000 }, world), '1 user request failed');
  assert.equal(decidedUnsafe({ samples: calls(60, () => 50, 503), campaignStart: start, deadline, now: start + 60_000 }, world), '60 user requests failed');
});

test('the section names each governed run, the probe not given the users\' load as a reference, and says what the operator gave', () => {
  /** @param {string} run @param {number | null} rate @param {number} seconds */
  const row = (run, rate, seconds) => ({ run, rate, devices: 6000, sendSeconds: seconds, meanSendRate: 6000 / seconds, windows: 60, windowsOver: 0, errors: 0, failures: {}, peakP95Ms: 200, safe: true, failure: null, workMsPerRequest: 20 });
  const best = row('fixed', 22, 274);
  const governed = [['scrape', 272], ['probe', 459], ['probe-untold', 420]].map(([run, seconds]) => ({ ...row(String(run), null, Number(seconds)), ratio: Number(seconds) / 274, met: Number(seconds) / 274 <= 1.3 }));
  const text = formatRealGatewaySection({ world: REAL_DEMO, sweep: [best], best, governed, governedLimitSeconds: 501, runtimeSeconds: 2000 });
  assert.match(text, /\| governor, metrics-scrape \| 272 s .* \| met \|/);
  assert.match(text, /\| governor, active-probe \| 459 s .* \| NOT met \|/);
  assert.match(text, /\| governor, active-probe, users' load not given \(reference\) \| 420 s /);
  assert.match(text, new RegExp(`users' load at least ${REAL_DEMO.priors.baseLoadRps}/s \\(read by the probe only\\)`));
});
