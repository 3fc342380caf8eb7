#!/usr/bin/env node
// `node sim/trace-world.js FAMILY SEED [--options JSON] [--knows LIST] [--warmup S] [--noise N] [--every S] [--from S] [--to S]`:
// one drawn world (sim/families.js; SEED is the world's own seed, as sim/tune.js's rows and
// bench/RESULTS.md name worlds, "exponential/998530334") run with the adaptive strategy and
// printed decision by decision: the rate and its reason, the window the controller read, its
// capacity estimate, and the bank member whose plan set the rate, with that member's caution,
// requests per send, baseline and room. Above the decisions, what the controller was not told:
// the world's true wake-up, gateway and metrics, and the informed oracle's time. It answers
// "where does this world's time go?" in a second; --options runs the same world with changed
// controller options, --knows tells it what sim/tune.js --knows tells it (wake-up, gateway,
// request-rate: the world's truth), and --noise runs the noise stream sim/tune.js --noise
// runs. It refuses the worlds of the held-out and confirmation seeds (sim/held-out-seeds.json):
// those are for judging, never for looking into while tuning.
import { parseArgs } from 'node:util';
import { InputError } from '../shared/errors.js';
import { parseControllerOptions } from '../shared/pacing/controller-options.js';
import { drawScenario, worldSeed, heldOutSeeds, warmupArgument, FAMILY_NAMES } from './families.js';
import { resolveScenario } from './scenario.js';
import { simulate } from './simulate.js';
import { createAdaptiveStrategy } from './strategies/adaptive.js';
import { knownSettings, checkKnowledge, KNOWLEDGE } from './tune.js';
import { useNoiseStream } from './family-evaluation.js';

/** How many worlds of each held-out or confirmation base seed are refused (runs draw 25-200). */
const GUARDED_WORLDS = 1000;

/** @typedef {import('./strategies/adaptive.js').AdaptiveDecision} AdaptiveDecision */

/**
 * Throws when the world is one a held-out or confirmation run draws.
 * @param {string} family @param {number} seed
 */
export function refuseHeldOut(family, seed) {
  const { heldOut, confirmation } = heldOutSeeds();
  for (const [set, bases] of /** @type {Array<[string, Record<string, number>]>} */ ([['held-out', heldOut], ['confirmation', confirmation]])) {
    const base = bases[family];
    if (base === undefined) continue;
    for (let k = 0; k < GUARDED_WORLDS; k++) {
      if (worldSeed(family, base, k) === seed) throw new InputError(`${family}/${seed} is world ${k} of the ${set} seed ${base} (sim/held-out-seeds.json): trace tuning worlds instead`);
    }
  }
}

/**
 * Runs one world with the adaptive strategy, and the informed oracle beside it.
 * @param {string} family
 * @param {number} seed
 * @param {{ options?: Record<string, unknown>, knows?: readonly string[], warmupSeconds?: number, noise?: number }} [variant]  controller options added to the world's
 *   operator settings, what of the world's truth it is told (sim/tune.js KNOWLEDGE), how long it reads the gateway before the campaign,
 *   and the noise stream (sim/tune.js --noise; 0: the drawn one)
 */
export function traceWorld(family, seed, { options = {}, knows = [], warmupSeconds, noise = 0 } = {}) {
  if (!FAMILY_NAMES.includes(family)) throw new InputError(`family ${family} is unknown; known: ${FAMILY_NAMES.join(', ')}`);
  if (!Number.isInteger(seed) || seed < 0) throw new InputError(`the world's seed must be a whole number ≥ 0, got ${seed}`);
  checkKnowledge(knows);
  refuseHeldOut(family, seed);
  const raw = drawScenario(family, seed);
  useNoiseStream(raw, noise);
  const adaptive = /** @type {{ controller: Record<string, unknown> }} */ (raw.strategies.adaptive);
  adaptive.controller = { ...adaptive.controller, ...knownSettings(raw, knows, /** @type {number | undefined} */ (options.setpointRatio)), ...options };
  if (knows.includes('request-rate')) raw.metrics.reportsRps = true;
  if (warmupSeconds !== undefined) raw.warmupSeconds = warmupSeconds;
  const scenario = resolveScenario(raw, raw.name);
  /** @type {AdaptiveDecision[]} */
  const decisions = [];
  const run = simulate(scenario, (s, world) => createAdaptiveStrategy(s, world, { onDecision: (d) => decisions.push(d) }));
  const informed = simulate(scenario, 'informed-oracle');
  return { scenario, controller: adaptive.controller, run, informedSeconds: informed.completionSeconds, decisions };
}

/**
 * What the controller was not told, in a few lines.
 * @param {ReturnType<typeof traceWorld>} trace
 */
export function describeWorld({ scenario, controller, run, informedSeconds }) {
  const { wakeUp, gateway, metrics, slo, baseline } = scenario;
  const delays = wakeUp.openDelay.map((d) => `${Math.round(d.share * 100)}% ${d.kind} ${d.medianSeconds} s${'sigma' in d ? ` σ ${d.sigma}` : ''}`).join(' + ');
  const ratio = run.completionSeconds !== null && informedSeconds ? (run.completionSeconds / informedSeconds).toFixed(2) : '–';
  return [
    scenario.description,
    `wake-up: ${scenario.audience} devices, ${(wakeUp.openProbability * wakeUp.requestsPerOpen).toFixed(3)} requests per send (${(wakeUp.openProbability * 100).toFixed(1)}% × ${wakeUp.requestsPerOpen}), open delay ${delays}`,
    `gateway: ${gateway.processes} × ${gateway.serviceMs} ms (${gateway.queueing}), ${gateway.downstreamMs} ms downstream, SLO p95 ${slo.p95Ms} ms; baseline ${Math.round(baseline.rps)} requests/s; metrics ${metrics.windowSeconds}-s windows, ${metrics.lagSeconds} s lag, ${metrics.reportsRps ? 'with' : 'without'} the request rate`,
    `operator settings: ${JSON.stringify(controller)}`,
    `adaptive ${run.completionSeconds ?? 'not finished'} s, ${run.violatedWindows}/${run.evaluatedWindows} windows over the SLO, ${run.gatewayErrors} gateway errors; informed oracle ${informedSeconds ?? '–'} s; ratio ${ratio}`
  ];
}

/** One decision on one line. @param {AdaptiveDecision} d */
export function formatDecision({ t, remaining, gateway, decision, snapshot: s }) {
  const n = (/** @type {number | null | undefined} */ x, digits = 0) => (x === null || x === undefined ? '–' : x.toFixed(digits));
  const b = s.binding;
  const member = b === null
    ? 'no member plans yet'
    : `${b.shape} z ${n(b.z, 2)} ${n(b.requestsPerSend, 3)} ± ${n(b.requestsPerSendSd, 3)} per send, baseline ${n(b.baseline)}, X* ${n(b.maxUnitLoad)}, plan ${n(b.plannedRate)}/s`;
  return `${n(t).padStart(6)} ${n(decision.rate, 1).padStart(8)}/s ${decision.reason.padEnd(17)} left ${String(remaining).padStart(8)} | p95 ${n(gateway?.p95Ms).padStart(5)} rps ${n(gateway?.rps).padStart(6)} | capacity ${n(s.capacity)} (plan fills ${n(s.plannedCapacityRps)}) | ${member} | likeliest ${s.shape}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const usage = `usage: node sim/trace-world.js ${FAMILY_NAMES.join('|')} SEED [--options JSON] [--knows ${KNOWLEDGE.join(',')}] [--warmup S] [--noise N] [--every S] [--from S] [--to S]`;
  try {
    const { values, positionals } = parseArgs({ allowPositionals: true, options: { options: { type: 'string' }, knows: { type: 'string' }, warmup: { type: 'string' }, noise: { type: 'string', default: '0' }, every: { type: 'string', default: '10' }, from: { type: 'string', default: '0' }, to: { type: 'string' } } });
    if (positionals.length !== 2) throw new InputError(usage);
    const [every, from] = [Number(values.every), Number(values.from)];
    const to = values.to === undefined ? Infinity : Number(values.to);
    if (!(every > 0) || !Number.isFinite(from) || Number.isNaN(to)) throw new InputError(`--every must be > 0, --from and --to numbers of seconds\n${usage}`);
    const warmupSeconds = warmupArgument('--warmup', values.warmup);
    const trace = traceWorld(positionals[0], Number(positionals[1]), {
      options: values.options === undefined ? {} : parseControllerOptions(values.options),
      knows: values.knows ? values.knows.split(',') : [],
      warmupSeconds,
      noise: Number(values.noise)
    });
    for (const line of describeWorld(trace)) process.stdout.write(`${line}\n`);
    process.stdout.write('t s, rate, reason, devices left | the window read | capacity at the setpoint (what the plan fills) | the member whose plan set the rate: its shape, caution z, requests per send, baseline, X* (the push load it allows, per request per send) and plan | the likeliest member\n');
    // Up to the decision that finds every device sent: the reserve rate after it is no campaign's.
    const end = trace.decisions.findIndex((d) => d.t >= 0 && d.remaining === 0);
    for (const d of end === -1 ? trace.decisions : trace.decisions.slice(0, end + 1)) {
      if (d.t >= from && d.t <= to && d.t % every === 0) process.stdout.write(`${formatDecision(d)}\n`);
    }
  } catch (error) {
    process.stderr.write(`trace-world: ${/** @type {Error} */ (error).message}\n`);
    process.exitCode = error instanceof InputError ? 2 : 1;
  }
}
