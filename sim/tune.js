#!/usr/bin/env node
// Tuning runs: the adaptive strategy with extra controller options on the worlds of a tuning
// seed, against the oracles' runs of the same worlds, which do not depend on the controller
// and are cached (bench/out/tune/). A variant of 200 worlds then takes minutes instead of a
// quarter of an hour, which is what comparing a few variants side by side needs.
//
//   node sim/tune.js --seed 12 [--options '{"missShare":0}'] [--count 25] [--families lognormal,pareto] [--knows wake-up,gateway,request-rate] [--warmup 300] [--noise 1]
//
// --knows gives the controller what an operator cannot know, world by world, to measure what
// the gap to the informed oracle is made of: `wake-up` the true open probability, requests
// per open, open-delay median and spread and session length, with a tight prior; `gateway`
// the true capacity at the setpoint instead of a load test's (±15%); `request-rate` a metrics
// source that reports the gateway's request rate in every world (none sees latency only).
// --warmup sets how long the controller reads the gateway before the campaign starts (the
// drawn worlds' hour otherwise: sim/families.js GOVERNOR_HISTORY_SECONDS); the oracles' runs
// do not depend on it. --noise N runs the same worlds with another noise stream (the world's
// noise seed XOR N), with the oracles' runs of that stream: a difference between two variants
// that does not hold in two or three streams is the noise's (bench/RESULTS.md 2026-12-06 13:45).
//
// Prints one JSON line: the hold-out summary (sim/family-evaluation.js) of the variant, and
// writes its rows beside the cache for a world-by-world comparison. It refuses the held-out
// and the confirmation seeds of sim/held-out-seeds.json: those are for judging, never for
// choosing.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { worldSeed, drawScenario, heldOutSeeds, warmupArgument, FAMILY_NAMES, OPERATOR_SETPOINT_RATIO } from './families.js';
import { evaluateWorld, summarise, targetValues } from './family-evaluation.js';
import { delayQuantileSeconds } from './delay-kernel.js';
import { createGatewayModel } from './gateway-model.js';
import { CONTROLLER_DEFAULTS, parseControllerOptions } from '../shared/pacing/controller-options.js';
import { InputError } from '../shared/errors.js';

/** What --knows can tell the controller. */
export const KNOWLEDGE = Object.freeze(['wake-up', 'gateway', 'request-rate']);
/** The prior's uncertainty factor when the wake-up is known: ±10% at the bank's confidence. */
const KNOWN_PRIOR_UNCERTAINTY = 1.1;

/** Where the oracles' runs and each variant's rows are kept (git ignores bench/out). */
const CACHE_DIR = new URL('../bench/out/tune/', import.meta.url);

/**
 * @param {{ seed: number, options?: Partial<import('../shared/pacing/controller-options.js').ControllerOptions>, count?: number, families?: readonly string[], knows?: readonly string[], warmupSeconds?: number, noise?: number, cacheDir?: URL }} args
 */
export function tune({ seed, options = {}, count = 25, families = FAMILY_NAMES, knows = [], warmupSeconds, noise = 0, cacheDir = CACHE_DIR }) {
  checkKnowledge(knows);
  const { heldOut, confirmation } = heldOutSeeds();
  if (Object.values(heldOut).includes(seed)) throw new RangeError(`seed ${seed} is a held-out seed (sim/held-out-seeds.json): tune on the tuning seeds`);
  if (Object.values(confirmation).includes(seed)) throw new RangeError(`seed ${seed} is a confirmation seed (sim/held-out-seeds.json): tune on the tuning seeds`);
  mkdirSync(cacheDir, { recursive: true });
  /** @type {import('./family-evaluation.js').WorldRow[]} */
  const rows = [];
  for (const family of families) {
    const cacheFile = new URL(`oracles-${family}-${seed}-${count}${noise === 0 ? '' : `-noise${noise}`}.json`, cacheDir);
    /** @type {Record<string, { judge?: string, oracle: import('./family-evaluation.js').Run, informed: import('./family-evaluation.js').Run }>} */
    const cache = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : {};
    for (let k = 0; k < count; k++) {
      const world = worldSeed(family, seed, k);
      const raw = drawScenario(family, world);
      const controller = { ...loadTestAt(raw, options.setpointRatio), ...knownSettings(raw, knows, options.setpointRatio), ...options };
      // A cached run counts only for the oracles' margins it was run with, and a failed one
      // (a program that did not converge) is tried again.
      const judge = JSON.stringify(raw.strategies.oracle);
      const entry = cache[world];
      const cached = entry?.judge === judge && !entry.oracle.failed && !entry.informed.failed ? entry : undefined;
      const row = evaluateWorld(family, world, { controller, oracles: cached, reportsRps: knows.includes('request-rate') || undefined, warmupSeconds, noise });
      if (!cached) cache[world] = { judge, oracle: row.oracle, informed: row.informed };
      rows.push(row);
    }
    writeFileSync(cacheFile, JSON.stringify(cache));
  }
  // Named by the options and the families, so that runs side by side on other families keep their own rows.
  const named = { options, ...(knows.length > 0 && { knows }), ...(warmupSeconds !== undefined && { warmupSeconds }), ...(noise !== 0 && { noise }) };
  const variant = createHash('sha1').update(JSON.stringify(Object.keys(named).length > 1 ? named : options)).digest('hex').slice(0, 8);
  const part = families === FAMILY_NAMES ? '' : `-${createHash('sha1').update(families.join(',')).digest('hex').slice(0, 6)}`;
  writeFileSync(new URL(`rows-${seed}-${variant}${part}.json`, cacheDir), JSON.stringify(rows));
  return { summary: summarise(rows), rows };
}

/**
 * The operator's load test, taken at the controller's setpoint: a variant that moves the
 * setpoint gets the capacity there, with the same drawn error as the world's own load test
 * (sim/families.js takes it at the default setpoint, 0.8 × the SLO), and the capacity at the
 * SLO over it.
 * @param {Record<string, any>} raw  drawScenario's world
 * @param {number} [setpointRatio]
 * @returns {Record<string, number>}
 */
export function loadTestAt(raw, setpointRatio) {
  if (setpointRatio === undefined || setpointRatio === OPERATOR_SETPOINT_RATIO) return {};
  const model = createGatewayModel(raw.gateway);
  const ratio = model.rateAtP95(1, setpointRatio * raw.slo.p95Ms) / model.rateAtP95(1, OPERATOR_SETPOINT_RATIO * raw.slo.p95Ms);
  const { capacityRps, sloCapacityRatio } = raw.strategies.adaptive.controller;
  return { capacityRps: capacityRps * ratio, sloCapacityRatio: Math.max(1, sloCapacityRatio / ratio) };
}

/**
 * Throws an InputError naming the first part of `knows` that is not in KNOWLEDGE.
 * @param {readonly string[]} knows
 */
export function checkKnowledge(knows) {
  for (const k of knows) if (!KNOWLEDGE.includes(k)) throw new InputError(`--knows ${k}: known are ${KNOWLEDGE.join(', ')}`);
}

/**
 * The controller options that tell it the truth about a drawn world.
 * @param {Record<string, any>} raw  drawScenario's world
 * @param {readonly string[]} knows  parts of KNOWLEDGE
 * @param {number} [setpointRatio]   the controller's, when an option sets it
 */
export function knownSettings(raw, knows, setpointRatio = CONTROLLER_DEFAULTS.setpointRatio) {
  /** @type {Record<string, number>} */
  const known = {};
  if (knows.includes('wake-up')) {
    const { openDelay } = raw.wakeUp;
    const quantile = (/** @type {number} */ q) => delayQuantileSeconds(openDelay, q);
    Object.assign(known, {
      openProbability: raw.wakeUp.openProbability,
      requestsPerOpen: raw.wakeUp.requestsPerOpen,
      openDelayMedianMs: quantile(0.5) * 1000,
      // The log-normal with the mixture's median and its 16th-84th percentile spread.
      openDelaySigma: Math.max(0.1, Math.log(quantile(0.8413) / quantile(0.1587)) / 2),
      sessionMs: raw.wakeUp.sessionMeanSeconds * 1000,
      priorUncertainty: KNOWN_PRIOR_UNCERTAINTY
    });
  }
  if (knows.includes('gateway')) known.capacityRps = createGatewayModel(raw.gateway).rateAtP95(1, setpointRatio * raw.slo.p95Ms);
  return known;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, options: { type: 'string', default: '{}' }, count: { type: 'string', default: '25' }, families: { type: 'string' }, knows: { type: 'string' }, warmup: { type: 'string' }, noise: { type: 'string', default: '0' } } });
  const seed = Number(values.seed);
  const noise = Number(values.noise);
  if (!Number.isInteger(seed)) {
    console.error(`usage: node sim/tune.js --seed N [--options JSON] [--count 25] [--families a,b] [--knows ${KNOWLEDGE.join(',')}] [--warmup SECONDS] [--noise N, a whole number ≥ 0]`);
    process.exit(2);
  }
  let summary;
  let options;
  let warmupSeconds;
  try {
    warmupSeconds = warmupArgument('--warmup', values.warmup);
    options = parseControllerOptions(values.options);
    ({ summary } = tune({ seed, options, count: Number(values.count), families: values.families ? values.families.split(',') : FAMILY_NAMES, knows: values.knows ? values.knows.split(',') : [], warmupSeconds, noise }));
  } catch (err) {
    if (!(err instanceof RangeError || err instanceof InputError)) throw err;
    console.error(`tune: ${err.message}`);
    process.exit(2);
  }
  console.log(JSON.stringify({ seed, options, knows: values.knows ?? null, ...(warmupSeconds !== undefined && { warmupSeconds }), ...(noise !== 0 && { noise }), ...targetValues(summary) }));
}
