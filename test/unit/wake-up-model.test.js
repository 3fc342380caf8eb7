import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  binKernel, cumulativeKernel, medianRequestDelayMs, normalCdf, normalQuantile, openDelayCdf, openDelayQuantile, predictLoad, requestTimeMassPerSecond
} from '../../shared/pacing/wake-up-model.js';
import { createLoadLedger } from '../../shared/pacing/load-ledger.js';

/** @type {import('../../shared/pacing/wake-up-model.js').WakeUpShape} */
const shape = { openDelay: [{ share: 1, medianMs: 90_000, sigma: 1 }], session: { kind: 'uniform', lengthMs: 60_000 } };
const sum = (/** @type {ArrayLike<number>} */ xs) => Array.from(xs).reduce((s, x) => s + x, 0);

test('the normal CDF is accurate to the 1e-6 the kernels need', () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
  assert.ok(Math.abs(normalCdf(1.6448536) - 0.95) < 1e-6);
  assert.ok(Math.abs(normalCdf(-2.3263479) - 0.01) < 1e-6);
});

test('the normal quantile inverts the CDF', () => {
  for (const p of [1e-4, 0.0228, 0.1, 0.5, 0.9, 0.99545]) assert.ok(Math.abs(normalCdf(normalQuantile(p)) - p) < 1e-6, `p = ${p}`);
  assert.ok(Math.abs(normalQuantile(0.97725) - 2) < 1e-4);
  assert.throws(() => normalQuantile(1), RangeError);
});

test('a log-normal open delay has its median where configured and its quantiles invert its CDF', () => {
  const c = [{ share: 1, medianMs: 600_000, sigma: 1.1 }];
  assert.ok(Math.abs(openDelayCdf(c, 600_000) - 0.5) < 1e-9);
  const q95 = openDelayQuantile(c, 0.95);
  assert.ok(Math.abs(q95 / (600_000 * Math.exp(1.6448536 * 1.1)) - 1) < 1e-4);
  // A mixture's CDF is the share-weighted CDF of its parts.
  const mix = [{ share: 3, medianMs: 60_000, sigma: 1 }, { share: 1, medianMs: 900_000, sigma: 1 }];
  assert.ok(Math.abs(openDelayCdf(mix, 60_000) - (0.75 * 0.5 + 0.25 * openDelayCdf([mix[1]], 60_000))) < 1e-9);
});

test('one send\'s requests sum to one and arrive on average after the mean open delay plus half a session', () => {
  // A tail cut of 1e-6 (the default 1e-3 trims the log-normal's long tail, and the mean with it).
  const mass = requestTimeMassPerSecond(shape, { tailMass: 1e-6 });
  assert.ok(Math.abs(sum(mass) - 1) < 1e-9);
  let mean = 0;
  for (let i = 0; i < mass.length; i++) mean += (i + 0.5) * mass[i];
  const expected = 90 * Math.exp(0.5) + 30; // log-normal mean + uniform session mean, in seconds
  assert.ok(Math.abs(mean / expected - 1) < 0.02, `mean ${mean.toFixed(1)} s, expected about ${expected.toFixed(1)} s`);
  // The median request delay is later than the median open (requests follow the open).
  const median = medianRequestDelayMs(mass);
  assert.ok(median > 90_000 && median < 150_000, `median ${median} ms`);
});

test('an exponential session has the same total and a longer tail than a uniform one of the same mean', () => {
  const uniform = requestTimeMassPerSecond({ openDelay: shape.openDelay, session: { kind: 'uniform', lengthMs: 80_000 } });
  const exponential = requestTimeMassPerSecond({ openDelay: shape.openDelay, session: { kind: 'exponential', meanMs: 40_000 } });
  assert.ok(Math.abs(sum(exponential) - 1) < 1e-9);
  assert.ok(exponential.length > uniform.length);
});

test('binning keeps the mass, and the cumulative kernel ends at one', () => {
  const mass = requestTimeMassPerSecond(shape);
  const kernel = binKernel(mass, 10);
  assert.ok(Math.abs(sum(kernel) - 1) < 1e-9);
  const cumulative = cumulativeKernel(kernel);
  assert.ok(Math.abs(cumulative[cumulative.length - 1] - 1) < 1e-9);
  for (let j = 1; j < cumulative.length; j++) assert.ok(cumulative[j] >= cumulative[j - 1]);
});

test('sending at a constant rate makes the predicted load settle at requests-per-send × rate', () => {
  const mass = requestTimeMassPerSecond(shape);
  const seconds = mass.length + 600;
  const sends = new Float64Array(seconds).fill(400);
  const load = predictLoad(sends, mass, 1.5, seconds);
  assert.ok(Math.abs(load[seconds - 1] - 600) < 1e-6);
  // ... and it rises to that level with the kernel's shape: a quarter of the way after about a minute.
  assert.ok(load[30] < 0.1 * 600 && load[600] > 0.8 * 600);
});

test('the load ledger predicts the same load as a direct convolution, bin by bin', () => {
  const mass = requestTimeMassPerSecond(shape);
  const kernel = binKernel(mass, 10);
  const ledger = createLoadLedger({ kernel, binMs: 10_000, pastBins: 5 });
  const seconds = 900;
  const sends = new Float64Array(seconds);
  for (let t = 0; t < 300; t++) sends[t] = t < 100 ? 200 : 50; // 100 s at 200/s, then 200 s at 50/s
  for (let b = 0; b < 30; b++) {
    ledger.advanceTo(b + 1);
    let count = 0;
    for (let t = b * 10; t < b * 10 + 10; t++) count += sends[t];
    ledger.addSends(b * 10_000, (b + 1) * 10_000, count);
  }
  const direct = predictLoad(sends, mass, 1, seconds + mass.length);
  for (const bin of [31, 35, 40, 60, 80]) {
    let mean = 0;
    for (let t = bin * 10; t < bin * 10 + 10; t++) mean += direct[t] / 10;
    assert.ok(Math.abs(ledger.at(bin) - mean) < 1e-6 * Math.max(1, mean), `bin ${bin}: ledger ${ledger.at(bin)} vs direct ${mean}`);
  }
  // Past bins stay readable for the estimator; those beyond pastBins read as 0.
  assert.ok(ledger.at(28) > 0);
  assert.equal(ledger.at(20), 0);
  assert.ok(Math.abs(ledger.meanOver(300_000, 320_000) - (ledger.at(30) + ledger.at(31)) / 2) < 1e-9);
});
