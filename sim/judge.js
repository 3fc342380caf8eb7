#!/usr/bin/env node
// The held-out judgement of a controller variant (issue #11): the variant and the controller
// it would replace, side by side on the worlds of sim/held-out-seeds.json's held-out seeds,
// with the same oracles' runs for both (they do not depend on the controller). The worlds are
// shared between worker threads, one per core up to `--workers`: 200 worlds take about 4
// minutes on the 2-core bench machine.
//
//   node sim/judge.js --options '{"noiseMarginZ":2}' [--base '{}'] [--count 25] [--workers 2] [--warmup 300] [--base-warmup 300]
//
// --warmup sets how long both controllers read the gateway before the campaign (the drawn
// worlds' hour otherwise, sim/families.js GOVERNOR_HISTORY_SECONDS); --base-warmup gives the
// base its own, to judge the same controller after a short and a long history (--options '{}').
//
// Prints one JSON line per controller (its hold-out summary against the targets, as
// sim/tune.js prints it), then one comparing them world by world: how many finished faster or
// slower, and which worlds went from under 5% of their windows over the SLO to over 20% (the
// four-run rule's last check, bench/RESULTS.md). Every run is a judgement of
// the held-out seeds: run it once, for a variant that has passed a rule written before its
// tuning runs (sim/tune.js), and record it in bench/RESULTS.md with how many versions the
// held-out seeds have judged.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { FAMILY_NAMES, worldSeed, heldOutSeeds, warmupArgument } from './families.js';
import { evaluateWorld, summarise, targetValues } from './family-evaluation.js';
import { parseControllerOptions } from '../shared/pacing/controller-options.js';
import { InputError } from '../shared/errors.js';

/** @typedef {import('./family-evaluation.js').WorldRow} WorldRow */
/** @typedef {{ family: string, seed: number }} World */
/** @typedef {{ family: string, base: WorldRow, variant: WorldRow }} Pair */

/** A world whose share of windows over the SLO goes from under JUMP_FROM to over JUMP_TO has jumped. */
const JUMP_FROM = 0.05;
const JUMP_TO = 0.2;

/**
 * The held-out worlds: `count` of each family, in sim/held-out-seeds.json's order.
 * @param {number} count
 * @returns {World[]}
 */
export function heldOutWorlds(count) {
  const { heldOut } = heldOutSeeds();
  return FAMILY_NAMES.flatMap((family) => Array.from({ length: count }, (_, k) => ({ family, seed: worldSeed(family, heldOut[family], k) })));
}

/**
 * Both controllers on some worlds; the oracles run once per world.
 * @param {World[]} worlds
 * @param {Record<string, unknown>} base
 * @param {Record<string, unknown>} variant
 * @param {{ base?: number, variant?: number }} [warmupSeconds]  each one's warm-up, when not the drawn worlds'
 * @returns {Pair[]}
 */
export function judgeWorlds(worlds, base, variant, warmupSeconds = {}) {
  return worlds.map(({ family, seed }) => {
    const first = evaluateWorld(family, seed, { controller: base, warmupSeconds: warmupSeconds.base });
    return { family, base: first, variant: evaluateWorld(family, seed, { controller: variant, oracles: first, warmupSeconds: warmupSeconds.variant }) };
  });
}

/**
 * The two summaries and how the variant's worlds moved: faster or slower by more than 1%, and
 * the worlds that jumped from under 5% of their windows over the SLO to over 20%.
 * @param {Pair[]} pairs
 */
export function compare(pairs) {
  const line = (/** @type {WorldRow[]} */ rows) => targetValues(summarise(rows));
  let faster = 0;
  let slower = 0;
  /** @type {string[]} */
  const jumped = [];
  for (const { family, base, variant } of pairs) {
    const [from, to] = [base.adaptive.sloViolationShare, variant.adaptive.sloViolationShare];
    if (from < JUMP_FROM && to > JUMP_TO) jumped.push(`${family}/${base.seed} ${(100 * from).toFixed(1)}% → ${(100 * to).toFixed(1)}%`);
    if (base.informedRatio === null || variant.informedRatio === null) continue;
    if (variant.informedRatio < 0.99 * base.informedRatio) faster++;
    else if (variant.informedRatio > 1.01 * base.informedRatio) slower++;
  }
  return { base: line(pairs.map((p) => p.base)), variant: line(pairs.map((p) => p.variant)), worlds: pairs.length, faster, slower, jumped };
}

if (!isMainThread) {
  const { worlds, base, variant, warmupSeconds } = /** @type {{ worlds: World[], base: Record<string, unknown>, variant: Record<string, unknown>, warmupSeconds: { base?: number, variant?: number } }} */ (workerData);
  parentPort?.postMessage(judgeWorlds(worlds, base, variant, warmupSeconds));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const usage = 'usage: node sim/judge.js --options JSON [--base JSON] [--count 25] [--workers 2] [--warmup SECONDS] [--base-warmup SECONDS]';
  try {
    const { values } = parseArgs({ options: { options: { type: 'string' }, base: { type: 'string', default: '{}' }, count: { type: 'string', default: '25' }, workers: { type: 'string', default: '2' }, warmup: { type: 'string' }, 'base-warmup': { type: 'string' } } });
    if (values.options === undefined) throw new InputError(`--options is required: the variant to judge\n${usage}`);
    const variant = parseControllerOptions(values.options);
    const base = parseControllerOptions(values.base);
    const count = Number(values.count);
    const workers = Math.min(Number(values.workers), os.availableParallelism());
    if (!Number.isInteger(count) || count < 1) throw new InputError(`--count must be a whole number ≥ 1, got ${values.count}\n${usage}`);
    if (!Number.isInteger(workers) || workers < 1) throw new InputError(`--workers must be a whole number ≥ 1, got ${values.workers}\n${usage}`);
    const warmupSeconds = { variant: warmupArgument('--warmup', values.warmup), base: warmupArgument('--base-warmup', values['base-warmup'] ?? values.warmup) };
    const worlds = heldOutWorlds(count);
    // Dealt out in turn, so that each worker gets a share of every family's slow worlds.
    const shares = Array.from({ length: workers }, (_, w) => worlds.filter((_, i) => i % workers === w));
    const parts = await Promise.all(shares.map((share) => new Promise((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { worlds: share, base, variant, warmupSeconds } });
      worker.once('message', resolve);
      worker.once('error', reject);
    })));
    const result = compare(/** @type {Pair[]} */ (parts.flat()));
    console.log(JSON.stringify({ controller: 'base', options: base, warmupSeconds: warmupSeconds.base ?? null, ...result.base }));
    console.log(JSON.stringify({ controller: 'variant', options: variant, warmupSeconds: warmupSeconds.variant ?? null, ...result.variant }));
    console.log(JSON.stringify({ worlds: result.worlds, faster: result.faster, slower: result.slower, jumped: result.jumped }));
  } catch (error) {
    process.stderr.write(`judge: ${/** @type {Error} */ (error).message}\n`);
    const code = /** @type {{ code?: string }} */ (error).code;
    process.exitCode = error instanceof InputError || code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
  }
}
