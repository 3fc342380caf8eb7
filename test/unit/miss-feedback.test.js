import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMissFeedback } from '../../shared/pacing/miss-feedback.js';
import { createInspectableController } from '../../shared/pacing/controller.js';
import { CONTROLLER_DEFAULTS } from '../../shared/pacing/controller-options.js';
import { mulberry32 } from '../../shared/seeded-random.js';

test('a gateway that never misses the SLO leaves the trim at 1', () => {
  const m = createMissFeedback({ missShare: 0.02, missStep: 0.15, missFloor: 0.5 });
  for (let i = 0; i < 1000; i++) m.observe(false);
  assert.equal(m.trim, 1);
});

test('a run of windows over the SLO cuts the trim once; windows within win it back at the target rate', () => {
  const m = createMissFeedback({ missShare: 0.02, missStep: 0.15, missFloor: 0.5 });
  for (let i = 0; i < 8; i++) m.observe(true);
  assert.equal(m.trim, 0.85, 'one event, one cut');
  assert.equal(m.snapshot().misses, 1);
  // Back to 1 after about ln(1/0.85) / ln(1 + 0.15·0.02/0.98) ≈ 53 windows within.
  let within = 0;
  while (m.trim < 1) {
    m.observe(false);
    within++;
  }
  assert.ok(within > 45 && within < 60, `${within} windows to recover`);
  m.observe(true);
  assert.equal(m.trim, 0.85, 'a new run counts again');
});

test('the trim never falls below its floor', () => {
  const m = createMissFeedback({ missShare: 0.02, missStep: 0.5, missFloor: 0.6 });
  for (let i = 0; i < 20; i++) {
    m.observe(false);
    m.observe(true);
  }
  assert.equal(m.trim, 0.6);
});

test('missShare 0 turns it off', () => {
  const m = createMissFeedback({ missShare: 0, missStep: 0.15, missFloor: 0.5 });
  for (let i = 0; i < 10; i++) {
    m.observe(true);
    m.observe(false);
  }
  assert.equal(m.trim, 1);
});

test('misses more frequent than the target pull the trim down; rarer ones let it rise again', () => {
  // A gateway whose chance of a miss grows with the share of it the plan fills:
  // p(trim) = 0.2 · trim⁴ (20% of windows over at a full trim, 2% near 0.56). The trim
  // settles where misses come at about the target's rate.
  const random = mulberry32(7);
  const m = createMissFeedback({ missShare: 0.02, missStep: 0.15, missFloor: 0.3 });
  let over = 0;
  const late = [];
  for (let i = 0; i < 20_000; i++) {
    const miss = random() < 0.2 * m.trim ** 4;
    m.observe(miss);
    if (i >= 10_000) {
      late.push(m.trim);
      if (miss) over++;
    }
  }
  const mean = late.reduce((a, b) => a + b, 0) / late.length;
  assert.ok(mean > 0.45 && mean < 0.7, `mean trim ${mean.toFixed(3)}`);
  assert.ok(over / 10_000 < 0.035, `${(over / 100).toFixed(2)}% of windows over`);
});

/**
 * A governor reading a scrape (request rate and p95) of a one-process gateway whose p95 jumps
 * between windows: 43 requests/s at full CPU, a spell 1.4× slower in about a third of the
 * 2-s windows, and the queue's wait drawn anew each window. 8 requests/s of users nobody
 * pushed; each send brings 0.9 requests over the next 8 s. The operator's settings as in the
 * demo. Returns the share of windows over the SLO after the first 40 s and the mean rate.
 * With `phases` the slow spells last: the gateway turns 1.5× slower or back with a chance of
 * 8% a window (phases of about 25 s, as the host's speed moves on the demo's real gateway).
 * @param {number} seed
 * @param {number} missShare
 * @param {{ phases?: boolean, envelopeMs?: number }} [options]  envelopeMs: the controller's capacityEnvelopeMs
 */
function jumpyGatewayRun(seed, missShare, { phases = false, envelopeMs = 0 } = {}) {
  const controller = createInspectableController({ sloP95Ms: 500, setpointRatio: 0.6, capacityRps: 35, openProbability: 0.2, requestsPerOpen: 3, openDelayMedianMs: 8000, sessionMs: 3000, binMs: 2000, metricsWindowMs: 2000, metricsLagMs: 0, maxRate: 2000, missShare, capacityEnvelopeMs: envelopeMs });
  const random = mulberry32(seed);
  let slow = false;
  const p95At = (/** @type {number} */ load) => {
    if (phases && random() < 0.08) slow = !slow;
    const speed = phases ? (slow ? 1.5 : 1) : random() < 0.35 ? 1.4 : 1;
    const rho = Math.min(0.995, (load * speed) / 43);
    return 25 + ((75 * rho) / (1 - rho)) * Math.sqrt(-Math.log(1 - random()));
  };
  const poisson = (/** @type {number} */ mean) => {
    let n = 0;
    let p = Math.exp(-mean);
    let sum = p;
    const u = random();
    while (u > sum) {
      n++;
      p *= mean / n;
      sum += p;
    }
    return n;
  };
  const sent = /** @type {number[]} */ ([]);
  let d = controller.update({ now: 0, sent: 0, gateway: { p95Ms: p95At(8), p99Ms: p95At(8), errorRatio: 0, rps: 8 } });
  let over = 0;
  let judged = 0;
  let rateSum = 0;
  for (let t = 1; t <= 300; t++) {
    sent.push(d.rate * 2);
    const load = 8 + (0.9 * sent.slice(-4).reduce((a, b) => a + b, 0)) / 8;
    const p95 = p95At(load);
    if (t > 20) {
      judged++;
      if (p95 > 500) over++;
      rateSum += d.rate;
    }
    d = controller.update({ now: t * 2000, sent: d.rate * 2, gateway: { p95Ms: p95, p99Ms: p95, errorRatio: 0, rps: poisson(load * 2) / 2 } });
  }
  const { missTrim, misses } = controller.snapshot();
  return { over: over / judged, rate: rateSum / judged, trim: missTrim, misses };
}

test('on a gateway whose p95 jumps between windows, the misses themselves hold the governor back', () => {
  // Seeds 1-20 of this world: 3.6-7.9% of windows over the SLO without the feedback (the
  // capacity estimate follows the fast spells), 1.1-2.1% with it, at 13-16 sends/s against
  // 16-18. The test takes seeds 1-10.
  const seeds = Array.from({ length: 10 }, (_, i) => i + 1);
  const off = seeds.map((seed) => jumpyGatewayRun(seed, 0));
  const on = seeds.map((seed) => jumpyGatewayRun(seed, CONTROLLER_DEFAULTS.missShare));
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const offOver = mean(off.map((r) => r.over));
  const onOver = mean(on.map((r) => r.over));
  assert.ok(offOver >= 0.04, `without: ${(100 * offOver).toFixed(1)}% of windows over`);
  assert.ok(onOver <= 0.02 && on.every((r) => r.over <= 0.025), `with: ${on.map((r) => (100 * r.over).toFixed(1)).join(', ')}% of windows over`);
  assert.ok(on.every((r) => r.misses > 0) && off.every((r) => r.trim === 1), 'the feedback acted only where it was on');
  const onRate = mean(on.map((r) => r.rate));
  const offRate = mean(off.map((r) => r.rate));
  assert.ok(onRate > 12 && onRate > 0.7 * offRate, `${onRate.toFixed(1)} sends/s with it, ${offRate.toFixed(1)} without: it must not stall`);
});

test('on a gateway whose speed moves in phases, filling the lowest estimate of the last minute halves the windows over the SLO for a few percent of the rate', () => {
  // The estimate climbs in a fast phase and the next slow one finds the plan over its edge;
  // held at the last minute's lowest, the plan fills what the slow phases allowed. Seeds 1-10:
  // 1.29% of windows over at 12.8 sends/s without it, 0.57% at 12.1 with it. A setpoint lowered
  // from 0.6 to 0.52 instead gives 1.07% at 13.2: the misses' trim takes a flat margin back.
  const seeds = Array.from({ length: 10 }, (_, i) => i + 1);
  const missShare = CONTROLLER_DEFAULTS.missShare;
  const without = seeds.map((seed) => jumpyGatewayRun(seed, missShare, { phases: true }));
  const withIt = seeds.map((seed) => jumpyGatewayRun(seed, missShare, { phases: true, envelopeMs: 60_000 }));
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const overWithout = mean(without.map((r) => r.over));
  const overWith = mean(withIt.map((r) => r.over));
  assert.ok(overWith < 0.7 * overWithout, `windows over: ${(100 * overWith).toFixed(2)}% with it, ${(100 * overWithout).toFixed(2)}% without`);
  const rateWith = mean(withIt.map((r) => r.rate));
  const rateWithout = mean(without.map((r) => r.rate));
  assert.ok(rateWith > 0.9 * rateWithout, `${rateWith.toFixed(2)} sends/s with it, ${rateWithout.toFixed(2)} without`);
});
