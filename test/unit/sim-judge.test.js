import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { heldOutWorlds, judgeWorlds, compare } from '../../sim/judge.js';
import { worldSeed, FAMILY_NAMES } from '../../sim/families.js';
import { summarise } from '../../sim/family-evaluation.js';

const run = promisify(execFile);
const script = new URL('../../sim/judge.js', import.meta.url).pathname;

test('the judge: both controllers on the same worlds with the same oracles, and how the variant moved them', () => {
  // Tuning worlds stand in for the held-out ones (the judge takes any worlds): the small family
  // under seed 11, whose informed oracle sends them within a minute or two.
  const worlds = [1, 2].map((k) => ({ family: 'small', seed: worldSeed('small', 11, k) }));
  const pairs = judgeWorlds(worlds, {}, { maxRate: 7 });
  assert.equal(pairs.length, 2);
  for (const { base, variant } of pairs) {
    assert.equal(base.seed, variant.seed);
    assert.deepEqual(variant.informed, base.informed, 'the oracles ran once');
    assert.ok(base.adaptive.completionSeconds !== null && variant.adaptive.completionSeconds !== null);
    assert.ok(variant.adaptive.completionSeconds >= base.adaptive.completionSeconds, 'capped at 7 sends/s, no faster');
  }
  const result = compare(pairs);
  assert.equal(result.worlds, 2);
  assert.equal(result.faster, 0);
  assert.equal(result.slower, pairs.filter((p) => /** @type {number} */ (p.variant.informedRatio) > 1.01 * /** @type {number} */ (p.base.informedRatio)).length);
  assert.ok(result.slower >= 1, 'a 7/s cap slows a campaign the oracle sends in a minute');
  assert.ok(Number(result.variant['median × informed oracle']) > Number(result.base['median × informed oracle']));
});

test('the held-out worlds: count of each family, from sim/held-out-seeds.json', () => {
  const worlds = heldOutWorlds(2);
  assert.equal(worlds.length, 2 * FAMILY_NAMES.length);
  assert.deepEqual([...new Set(worlds.map((w) => w.family))], [...FAMILY_NAMES]);
  assert.equal(new Set(worlds.map((w) => w.seed)).size, worlds.length);
});

test('the judge refuses a run without a variant, and bad options, with exit code 2', async () => {
  await assert.rejects(run(process.execPath, [script]), (e) => /** @type {any} */ (e).code === 2 && /--options is required/.test(/** @type {any} */ (e).stderr));
  await assert.rejects(run(process.execPath, [script, '--options', '{"maxrate":7}']), (e) => /** @type {any} */ (e).code === 2 && /maxrate is unknown/.test(/** @type {any} */ (e).stderr));
  await assert.rejects(run(process.execPath, [script, '--options', '{}', '--count', '0']), (e) => /** @type {any} */ (e).code === 2 && /--count must be a whole number/.test(/** @type {any} */ (e).stderr));
});

/**
 * A world's row: the informed oracle took 100 s without errors; the adaptive run took `seconds`.
 * @param {number} seed @param {number} share @param {number} seconds @param {number} [errors]
 */
const row = (seed, share, seconds, errors = 0) => /** @type {import('../../sim/family-evaluation.js').WorldRow} */ ({
  seed, description: '', audience: 1000, eventful: false, runtimeMs: 0, informedRatio: seconds / 100, oracleRatio: seconds / 100,
  adaptive: { completionSeconds: seconds, sloViolationShare: share, violatedWindows: Math.round(share * 100), evaluatedWindows: 100, gatewayErrors: errors },
  oracle: { completionSeconds: 100, sloViolationShare: 0, violatedWindows: 0, evaluatedWindows: 100, gatewayErrors: 0 },
  informed: { completionSeconds: 100, sloViolationShare: 0, violatedWindows: 0, evaluatedWindows: 100, gatewayErrors: 0 }
});

test('the judge names the worlds that went from under 5% of their windows over to over 20%', () => {
  const result = compare([
    { family: 'bimodal', base: row(1, 0.04, 150), variant: row(1, 0.21, 140) },  // jumped
    { family: 'pareto', base: row(2, 0.05, 150), variant: row(2, 0.5, 150) },    // was not under 5%
    { family: 'lognormal', base: row(3, 0, 150), variant: row(3, 0.2, 200) }     // not over 20%
  ]);
  assert.deepEqual(result.jumped, ['bimodal/1 4.0% → 21.0%']);
  assert.equal(result.faster, 1);
  assert.equal(result.slower, 1);
});

test('a world with gateway errors the informed oracle avoids counts as not finished in the ratios, however early it ended', () => {
  const clean = [row(1, 0, 120), row(2, 0, 130), row(3, 0, 140)];
  const before = summarise([...clean, row(4, 0.3, 110, 0)]);
  const flooded = summarise([...clean, row(4, 0.3, 110, 5000)]);
  assert.equal(before.informedRatio.median, 1.25, 'the early world counts as fastest');
  assert.equal(flooded.errorWorlds, 1);
  assert.equal(flooded.informedRatio.median, 1.35, 'the flooded world sorts last');
  assert.equal(flooded.informedRatio.max, Infinity);
  const informedErrors = row(4, 0.3, 110, 5000);
  informedErrors.informed.gatewayErrors = 10;
  assert.equal(summarise([...clean, informedErrors]).informedRatio.median, 1.25, 'not where the informed oracle has errors too');
});
