import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tune, knownSettings, loadTestAt } from '../../sim/tune.js';
import { evaluateFamily, evaluateWorld } from '../../sim/family-evaluation.js';
import { drawScenario, worldSeed } from '../../sim/families.js';
import { createGatewayModel } from '../../sim/gateway-model.js';

test('tuning runs refuse the held-out seeds and the confirmation seeds', () => {
  assert.throws(() => tune({ seed: 104829, count: 1, families: ['small'] }), /held-out seed/);
  assert.throws(() => tune({ seed: 572925, count: 1, families: ['small'] }), /confirmation seed/);
});

test('a tuning run with no extra options gives the evaluation\'s own results, and caches the oracles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tune-'));
  try {
    const cacheDir = pathToFileURL(`${dir}/`);
    const first = tune({ seed: 12, count: 2, families: ['small'], cacheDir });
    const again = tune({ seed: 12, count: 2, families: ['small'], cacheDir });
    const reference = evaluateFamily('small', { count: 2, seed: 12 }).rows;
    assert.deepEqual(first.rows.map((r) => [r.seed, r.adaptive, r.oracle, r.informed]), reference.map((r) => [r.seed, r.adaptive, r.oracle, r.informed]));
    assert.deepEqual(again.rows.map((r) => r.informedRatio), first.rows.map((r) => r.informedRatio));
    assert.ok(readdirSync(dir).includes('oracles-small-12-2.json'));
    // An option reaches the controller: no capacity to fill means a much slower campaign.
    const starved = tune({ seed: 12, count: 2, families: ['small'], cacheDir, options: { maxRate: 1 } });
    assert.ok(starved.rows.every((r, i) => (r.adaptive.completionSeconds ?? Infinity) >= (first.rows[i].adaptive.completionSeconds ?? 0)));
    assert.ok(starved.rows.some((r, i) => (r.adaptive.completionSeconds ?? Infinity) > 2 * (first.rows[i].adaptive.completionSeconds ?? 0)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--noise runs the same worlds with another noise stream, with that stream\'s own oracles\' cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tune-'));
  try {
    const cacheDir = pathToFileURL(`${dir}/`);
    const drawn = tune({ seed: 12, count: 2, families: ['small'], cacheDir });
    const other = tune({ seed: 12, count: 2, families: ['small'], cacheDir, noise: 1 });
    assert.ok(readdirSync(dir).includes('oracles-small-12-2-noise1.json'));
    // The same worlds (their descriptions), with other noise: some run differs.
    assert.deepEqual(other.rows.map((r) => r.description), drawn.rows.map((r) => r.description));
    assert.notDeepEqual(other.rows.map((r) => [r.adaptive, r.informed]), drawn.rows.map((r) => [r.adaptive, r.informed]));
    assert.deepEqual(tune({ seed: 12, count: 2, families: ['small'], cacheDir, noise: 1 }).rows.map((r) => r.adaptive), other.rows.map((r) => r.adaptive));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--knows tells the controller the drawn world\'s wake-up and gateway', () => {
  let k = 0;
  let raw = drawScenario('lognormal', worldSeed('lognormal', 12, k));
  while (raw.wakeUp.openDelay.length > 1) raw = drawScenario('lognormal', worldSeed('lognormal', 12, ++k));
  const [delay] = raw.wakeUp.openDelay;
  const known = knownSettings(raw, ['wake-up', 'gateway']);
  assert.equal(known.openProbability, raw.wakeUp.openProbability);
  assert.equal(known.requestsPerOpen, raw.wakeUp.requestsPerOpen);
  // One log-normal component: its own median and σ come back from the CDF's quantiles.
  assert.ok(Math.abs(known.openDelayMedianMs / (delay.medianSeconds * 1000) - 1) < 1e-3, `median ${known.openDelayMedianMs}`);
  assert.ok(Math.abs(known.openDelaySigma / delay.sigma - 1) < 1e-2, `sigma ${known.openDelaySigma} vs ${delay.sigma}`);
  const trueCapacity = createGatewayModel(raw.gateway).rateAtP95(1, 0.8 * raw.slo.p95Ms);
  assert.equal(known.capacityRps, trueCapacity);
  // The operator's figure is a load test's, off by its error; the known one is not.
  assert.notEqual(raw.strategies.adaptive.controller.capacityRps, Math.round(trueCapacity * 10) / 10);
  assert.deepEqual(Object.keys(knownSettings(raw, ['gateway'])), ['capacityRps']);
  assert.equal(knownSettings(raw, ['gateway'], 1).capacityRps, createGatewayModel(raw.gateway).rateAtP95(1, raw.slo.p95Ms));
  assert.throws(() => tune({ seed: 12, count: 1, families: ['small'], knows: ['future'] }), /--knows future/);
});

test('--knows request-rate gives a latency-only world\'s source the request rate, and leaves the oracles as they were', () => {
  let k = 0;
  while (drawScenario('small', worldSeed('small', 12, k)).metrics.reportsRps) k++;
  const world = worldSeed('small', 12, k);
  const drawn = evaluateWorld('small', world);
  const told = evaluateWorld('small', world, { reportsRps: true });
  // The oracles do not read the metrics source, so tune.js may share their cached runs.
  assert.deepEqual(told.oracle, drawn.oracle);
  assert.deepEqual(told.informed, drawn.informed);
  // The controller does: with the request rate it reads the wake-up load directly.
  assert.notEqual(told.adaptive.completionSeconds, drawn.adaptive.completionSeconds);
  const dir = mkdtempSync(join(tmpdir(), 'tune-'));
  try {
    const rows = tune({ seed: 12, count: k + 1, families: ['small'], knows: ['request-rate'], cacheDir: pathToFileURL(`${dir}/`) }).rows;
    assert.deepEqual(rows[k].adaptive, told.adaptive);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a variant that moves the setpoint gets the operator\'s load test at its own setpoint, with the same error', () => {
  const raw = drawScenario('lognormal', worldSeed('lognormal', 12, 0));
  const model = createGatewayModel(raw.gateway);
  const drawn = raw.strategies.adaptive.controller.capacityRps;
  assert.deepEqual(loadTestAt(raw, undefined), {});
  assert.deepEqual(loadTestAt(raw, 0.8), {});
  const { capacityRps, sloCapacityRatio } = loadTestAt(raw, 1);
  const atSlo = model.rateAtP95(1, raw.slo.p95Ms);
  const atSetpoint = model.rateAtP95(1, 0.8 * raw.slo.p95Ms);
  assert.ok(atSlo > atSetpoint);
  // The drawn error (drawn / the true capacity at 0.8 × the SLO) carries over.
  assert.ok(Math.abs(capacityRps / atSlo - drawn / atSetpoint) < 1e-9, `${capacityRps} at the SLO, drawn ${drawn}`);
  // At the SLO the capacity at the SLO is the capacity at the setpoint: the ratio is 1.
  assert.ok(raw.strategies.adaptive.controller.sloCapacityRatio > 1.01);
  assert.ok(Math.abs(sloCapacityRatio - 1) < 0.011, `ratio ${sloCapacityRatio} at a setpoint on the SLO`);
});
