import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createImpulseResponseEstimator } from '../../shared/pacing/impulse-response.js';
import { binKernel, requestTimeMassPerSecond } from '../../shared/pacing/wake-up-model.js';
import { createInspectableController } from '../../shared/pacing/controller.js';

const BIN_MS = 10_000;
const BINS = 360;
/** @param {{ share: number, medianMs: number, sigma: number }[]} openDelay @param {number} gain */
const response = (openDelay, gain) => {
  const k = binKernel(requestTimeMassPerSecond({ openDelay, session: { kind: 'uniform', lengthMs: 60_000 } }, { tailMass: 1e-6 }), BIN_MS / 1000);
  return Float64Array.from({ length: BINS }, (_, j) => gain * (k[j] ?? 0));
};

/**
 * Feeds the estimator a campaign against a known response and returns it.
 * @param {Float64Array} truth
 * @param {number} floorShare
 */
function learn(truth, floorShare) {
  const prior = response([{ share: 1, medianMs: 90_000, sigma: 1 }], 1.5);
  const estimator = createImpulseResponseEstimator({ prior, priorSd: 1.5, binMs: BIN_MS, pastBins: 4, baselineDrift: 0.005, gainDrift: 0.003, rpsNoise: 0.02, windowSeconds: 10, floorShare });
  /** @type {number[]} */
  const sends = [];
  let seed = 11;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let w = 0; w < 900; w++) {
    estimator.advanceTo(w);
    sends[w] = w < 600 ? Math.round(100 + 500 * random() * (w % 20 < 8 ? 1 : 0.2)) : 0;
    estimator.addSends(w * BIN_MS, (w + 1) * BIN_MS, sends[w]);
    let load = 400;
    for (let j = 0; j < BINS && j <= w; j++) load += (sends[w - j] * truth[j]) / 10;
    estimator.update({ rps: load + 3 * (random() - 0.5), windowStartMs: w * BIN_MS, windowEndMs: (w + 1) * BIN_MS, dtMs: BIN_MS });
  }
  return estimator;
}

/** @param {Float64Array} h @param {number} from @param {number} to */
const mass = (h, from, to) => h.slice(from, to).reduce((a, b) => a + b, 0);

test('the learned response finds a second hump that the prior does not have, and stays non-negative', () => {
  // Half the openers within a minute, half about 20 minutes later; 0.8 requests per send.
  const truth = response([{ share: 0.5, medianMs: 30_000, sigma: 0.5 }, { share: 0.5, medianMs: 1_200_000, sigma: 0.4 }], 0.8);
  const h = learn(truth, 0.05).response();
  assert.ok(h.every((x) => x >= 0), 'a send cannot take load away');
  const fast = mass(h, 0, 30);
  const slow = mass(h, 60, BINS);
  assert.ok(Math.abs(fast - 0.4) < 0.08, `fast wave ${fast.toFixed(3)} requests per send, truth 0.4`);
  // Learned from a 100-minute campaign, most of the way from the prior's 0.05 to the truth.
  assert.ok(slow > 0.2 && slow < 0.55, `slow wave ${slow.toFixed(3)} requests per send, truth 0.4 (the prior has ${mass(response([{ share: 1, medianMs: 90_000, sigma: 1 }], 1.5), 60, BINS).toFixed(3)})`);
  // The peak of the slow wave is where it is: around lag 120 (20 minutes).
  let peak = 60;
  for (let j = 60; j < BINS; j++) if (h[j] > h[peak]) peak = j;
  assert.ok(peak >= 100 && peak <= 140, `slow wave peaks at lag ${peak}`);
});

test('the learned response: a prior with no room for a second hump keeps to the prior\'s shape (regularisation)', () => {
  const truth = response([{ share: 0.5, medianMs: 30_000, sigma: 0.5 }, { share: 0.5, medianMs: 1_200_000, sigma: 0.4 }], 0.8);
  const slow = mass(learn(truth, 0.001).response(), 60, BINS);
  assert.ok(slow < 0.15, `slow wave ${slow.toFixed(3)}`);
});

test('the controller with a learned member: it joins the bank and plans like the others', () => {
  const controller = createInspectableController({ responseHorizonMs: 3_600_000 });
  let d = controller.update({ now: 0, sent: 0, gateway: { p95Ms: 150, p99Ms: 200, errorRatio: 0, rps: 400 } });
  for (let t = 1; t <= 60; t++) d = controller.update({ now: t * 10_000, sent: d.rate * 10, gateway: { p95Ms: 150, p99Ms: 200, errorRatio: 0, rps: 400 + 0.2 * t } });
  const s = controller.snapshot();
  assert.ok(s.members.some((m) => m.shape === 'learned'));
  assert.ok(d.rate > 0 && Number.isFinite(d.rate), `rate ${d.rate}`);
});
