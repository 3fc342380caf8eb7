import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLatencyRamp } from '../../shared/pacing/latency-ramp.js';
import { createInspectableController } from '../../shared/pacing/controller.js';

const STEP = 100_000;
const settings = { growth: 2, firstRate: 5, stepMs: STEP, sloMs: 500 };

/** A ramp whose first step starts at 0. @param {Partial<typeof settings>} [changes] */
function started(changes) {
  const ramp = createLatencyRamp({ ...settings, ...changes });
  ramp.update({ now: 0, sent: 0, p95Ms: null, noise: 0.15, campaign: false });
  return ramp;
}

/**
 * Windows every 10 s for `steps` steps at the given p95, sending at `rate`.
 * @param {ReturnType<typeof createLatencyRamp>} ramp
 * @param {{ from: number, steps: number, p95Ms: number | ((i: number) => number), rate: number | (() => number), campaign?: boolean }} run
 */
function drive(ramp, { from, steps, p95Ms, rate, campaign = true }) {
  let now = from;
  for (let i = 0; i < (steps * STEP) / 10_000; i++) {
    now += 10_000;
    const r = typeof rate === 'function' ? rate() : rate;
    ramp.update({ now, sent: r * 10, p95Ms: typeof p95Ms === 'function' ? p95Ms(i) : p95Ms, noise: 0.15, campaign });
  }
  return now;
}

test('off at growth 0: the ramp never allows a rate', () => {
  const ramp = started({ growth: 0 });
  drive(ramp, { from: 0, steps: 5, p95Ms: 20, rate: 0 });
  assert.equal(ramp.rate, 0);
});

test('while the p95 stays at the floor the allowed rate doubles a step, from the first step', () => {
  const ramp = started();
  let now = drive(ramp, { from: 0, steps: 1, p95Ms: 20, rate: 0, campaign: false });
  assert.equal(ramp.rate, 5, 'the floor is measured before the campaign, and the first step allowed');
  const rates = [];
  for (let k = 0; k < 4; k++) {
    now = drive(ramp, { from: now, steps: 1, p95Ms: (i) => (i % 2 ? 21 : 19), rate: () => ramp.rate });
    rates.push(ramp.rate);
  }
  assert.deepEqual(rates, [10, 20, 40, 80]);
});

test('a step whose p95 has risen over the floor ends the ramp: it holds the rate last seen at the floor until a window goes over the SLO', () => {
  const ramp = started();
  let now = drive(ramp, { from: 0, steps: 1, p95Ms: 20, rate: 0, campaign: false });
  now = drive(ramp, { from: now, steps: 1, p95Ms: 20, rate: 5 });
  now = drive(ramp, { from: now, steps: 1, p95Ms: 20, rate: 10 });
  assert.equal(ramp.rate, 20);
  // 15% noise: within a step, three windows 40% up (0.34 in logs) are 3.4 standard errors of
  // the difference from the floor's ten (0.099), over the 3 the test asks within a step.
  now = drive(ramp, { from: now, steps: 0.3, p95Ms: 28, rate: 20 });
  assert.equal(ramp.rate, 10, 'the rate whose wake-ups the last step saw at the floor');
  assert.equal(ramp.snapshot().rampEnded, true);
  now = drive(ramp, { from: now, steps: 3, p95Ms: 20, rate: 10 });
  assert.equal(ramp.rate, 10, 'ended for the campaign: no more steps, whatever the latency does next');
  ramp.update({ now: now + 10_000, sent: 100, p95Ms: 600, noise: 0.15, campaign: true });
  assert.equal(ramp.rate, 0, 'a window over the SLO ends the hold');
  ramp.reset();
  ramp.update({ now, sent: 0, p95Ms: null, noise: 0.15, campaign: false });
  now = drive(ramp, { from: now, steps: 1, p95Ms: 20, rate: 0, campaign: false });
  assert.equal(ramp.rate, 5, 'the next campaign ramps again');
});

test('a rise within the noise does not end it; one window over the SLO does', () => {
  const ramp = started();
  let now = drive(ramp, { from: 0, steps: 1, p95Ms: 20, rate: 0, campaign: false });
  now = drive(ramp, { from: now, steps: 1, p95Ms: 21, rate: 5 });
  assert.equal(ramp.rate, 10, 'a 5% rise is 0.7 standard errors');
  ramp.update({ now: now + 10_000, sent: 100, p95Ms: 600, noise: 0.15, campaign: true });
  assert.equal(ramp.rate, 0);
});

test('the controller ramps a latency-only campaign whose p95 stays at the floor, and never one with a request rate', () => {
  const options = { capacityRps: 1000, sloP95Ms: 200, openDelayMedianMs: 60_000, latencyRampGrowth: 2, metricsLagMs: 0 };
  /** @param {number | null} rps */
  const run = (rps) => {
    const c = createInspectableController(options);
    const reasons = new Set();
    let rate = 0;
    let peak = 0;
    // Idle for 5 minutes, then a campaign of a million devices for 20 minutes; the p95 never moves.
    for (let t = 0; t <= 1500; t += 10) {
      const sending = t > 300;
      const d = c.update({ now: t * 1000, sent: sending ? rate * 10 : 0, gateway: { p95Ms: 50, p99Ms: 60, errorRatio: 0, rps }, remaining: sending ? 1_000_000 : null });
      rate = d.rate;
      if (sending) {
        reasons.add(d.reason);
        peak = Math.max(peak, d.rate);
      }
    }
    return { reasons, peak, ramp: c.snapshot().rampRate };
  };
  const probe = run(null);
  assert.ok(probe.reasons.has('latency-ramp'), [...probe.reasons].join(', '));
  const firstRate = (0.1 * 1000) / (0.2 * 2 * 3);
  assert.ok(probe.ramp >= 4 * firstRate, `after 20 minutes at the floor the ramp allows ${probe.ramp.toFixed(1)}/s, at least two doublings of ${firstRate.toFixed(1)}`);
  const scrape = run(300);
  assert.ok(!scrape.reasons.has('latency-ramp'), [...scrape.reasons].join(', '));
});
