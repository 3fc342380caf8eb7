import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tune } from '../../sim/tune.js';
import { evaluateFamily } from '../../sim/family-evaluation.js';

test('tuning runs refuse the held-out seeds', () => {
  assert.throws(() => tune({ seed: 104829, count: 1, families: ['small'] }), /held-out seed/);
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
