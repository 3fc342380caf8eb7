#!/usr/bin/env node
// Tuning runs: the adaptive strategy with extra controller options on the worlds of a tuning
// seed, against the oracles' runs of the same worlds, which do not depend on the controller
// and are cached (bench/out/tune/). A variant of 200 worlds then takes minutes instead of a
// quarter of an hour, which is what comparing a few variants side by side needs.
//
//   node sim/tune.js --seed 12 [--options '{"missShare":0}'] [--count 25] [--families lognormal,pareto]
//
// Prints one JSON line: the hold-out summary (sim/family-evaluation.js) of the variant, and
// writes its rows beside the cache for a world-by-world comparison. It refuses the held-out
// seeds of sim/held-out-seeds.json: those are for judging, once, never for choosing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { worldSeed, FAMILY_NAMES } from './families.js';
import { evaluateWorld, summarise, checkTargets } from './family-evaluation.js';

/** Where the oracles' runs and each variant's rows are kept (git ignores bench/out). */
const CACHE_DIR = new URL('../bench/out/tune/', import.meta.url);

/**
 * @param {{ seed: number, options?: Record<string, number>, count?: number, families?: readonly string[], cacheDir?: URL }} args
 */
export function tune({ seed, options = {}, count = 25, families = FAMILY_NAMES, cacheDir = CACHE_DIR }) {
  const heldOut = Object.values(JSON.parse(readFileSync(new URL('./held-out-seeds.json', import.meta.url), 'utf8')).heldOut);
  if (heldOut.includes(seed)) throw new RangeError(`seed ${seed} is a held-out seed (sim/held-out-seeds.json): tune on the tuning seeds`);
  mkdirSync(cacheDir, { recursive: true });
  /** @type {import('./family-evaluation.js').WorldRow[]} */
  const rows = [];
  for (const family of families) {
    const cacheFile = new URL(`oracles-${family}-${seed}-${count}.json`, cacheDir);
    /** @type {Record<string, { oracle: import('./family-evaluation.js').Run, informed: import('./family-evaluation.js').Run }>} */
    const cache = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : {};
    for (let k = 0; k < count; k++) {
      const world = worldSeed(family, seed, k);
      const row = evaluateWorld(family, world, { controller: options, oracles: cache[world] });
      cache[world] ??= { oracle: row.oracle, informed: row.informed };
      rows.push(row);
    }
    writeFileSync(cacheFile, JSON.stringify(cache));
  }
  // Named by the options and the families, so that runs side by side on other families keep their own rows.
  const variant = createHash('sha1').update(JSON.stringify(options)).digest('hex').slice(0, 8);
  const part = families === FAMILY_NAMES ? '' : `-${createHash('sha1').update(families.join(',')).digest('hex').slice(0, 6)}`;
  writeFileSync(new URL(`rows-${seed}-${variant}${part}.json`, cacheDir), JSON.stringify(rows));
  return { summary: summarise(rows), rows };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, options: { type: 'string', default: '{}' }, count: { type: 'string', default: '25' }, families: { type: 'string' } } });
  const seed = Number(values.seed);
  if (!Number.isInteger(seed)) {
    console.error('usage: node sim/tune.js --seed N [--options JSON] [--count 25] [--families a,b]');
    process.exit(2);
  }
  const options = JSON.parse(values.options);
  let summary;
  try {
    ({ summary } = tune({ seed, options, count: Number(values.count), families: values.families ? values.families.split(',') : FAMILY_NAMES }));
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    console.error(`tune: ${err.message}`);
    process.exit(2);
  }
  const targets = Object.fromEntries(checkTargets(summary).map((t) => [t.name, t.value === null ? null : Number(t.value.toFixed(3))]));
  console.log(JSON.stringify({ seed, options, ...targets, notFinished: summary.notFinished, oracleFailures: summary.oracleFailures }));
}
