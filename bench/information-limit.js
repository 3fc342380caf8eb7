// The information limit of the hold-out targets (issue #11; sim/information-limit.js): on
// how many held-out worlds of the quiet families can no controller finish within 1.15 × (or
// 1.4 ×) the informed oracle without breaking the SLO on a twin world it cannot tell apart?
//
// `node bench/information-limit.js [count]` prints the markdown of its bench/RESULTS.md
// section; `npm run bench -- information-limit` appends it. The blind bound (no window can
// show a campaign's wake-ups before its length plus the lag): `node bench/information-limit.js
// blind` prints its section, `npm run bench -- blind-bound` appends it.
import { fileURLToPath } from 'node:url';
import { informationLimit, blindBound, FAST_FACTOR, LATENCY_RESOLUTION } from '../sim/information-limit.js';
import { worldSeed, drawScenario, heldOutSeeds } from '../sim/families.js';
import { resolveScenario } from '../sim/scenario.js';
import { simulate } from '../sim/simulate.js';
import { CONTROLLER_DEFAULTS } from '../shared/pacing/controller-options.js';
import { HOLDOUT_COUNT } from './holdout.js';

/** The families where nothing unannounced happens: the twin is the only thing unknown. */
const QUIET_FAMILIES = /** @type {const} */ (['lognormal', 'bimodal', 'pareto', 'exponential', 'small']);
const STRETCHES = [1.15, 1.4];
const TWINS = /** @type {const} */ (['gain', 'late', 'fast', 'baseline']);
/** A latency-only source's p95 known to LATENCY_RESOLUTION (generous), and to the noise the controller assumes. */
const RESOLUTIONS = [LATENCY_RESOLUTION, CONTROLLER_DEFAULTS.latencyNoise];

/** @param {{ count?: number }} [options] */
export function benchInformationLimit({ count = HOLDOUT_COUNT } = {}) {
  const started = performance.now();
  const seeds = heldOutSeeds();
  const options = { stretches: STRETCHES, twins: [...TWINS], latencyResolutions: RESOLUTIONS };
  const worlds = QUIET_FAMILIES.flatMap((family) => Array.from({ length: count }, (_, k) => {
    const world = informationLimit(family, worldSeed(family, seeds.heldOut[family], k), options);
    // Where the source sees latency only, also the cases with its p95 known only as well as the controller assumes.
    return { family, ...world, coarseCases: world.latencyOnly ? world.casesByResolution[1] : null };
  }));
  return { count, worlds, runtimeMs: Math.round(performance.now() - started) };
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** @param {ReturnType<typeof benchInformationLimit>} r */
export function formatInformationLimitSection(r) {
  const pct = (/** @type {number} */ n, /** @type {number} */ d) => (d ? `${((100 * n) / d).toFixed(0)}%` : '–');
  const rows = [];
  for (const family of [...QUIET_FAMILIES, 'all']) {
    const worlds = r.worlds.filter((w) => family === 'all' || w.family === family);
    for (const twin of TWINS) {
      for (const stretch of STRETCHES) {
        const cases = worlds.map((w) => w.cases.find((c) => c.twin === twin && c.stretch === stretch)).filter((c) => c !== undefined);
        const withTwin = cases.filter((c) => c.twinOracleSeconds !== null);
        const limited = cases.filter((c) => c.limited);
        const overTwin = withTwin.filter((c) => (c.twinShare ?? 0) > 0.01);
        const seen = withTwin.map((c) => c.distinguishableSeconds).filter((x) => x !== null);
        rows.push(`| ${family} | ${twin} | ${stretch} | ${worlds.length} | ${withTwin.length} | ${limited.length} (${pct(limited.length, worlds.length)}) | ` +
          `${seen.length ? `${median(seen).toFixed(0)} s` : '–'} | ${median(worlds.map((w) => w.oracleSeconds)).toFixed(0)} s | ` +
          `${overTwin.length} (${pct(overTwin.length, withTwin.length)}), median ${(100 * median(withTwin.map((c) => c.twinShare ?? 0))).toFixed(1)}% |`);
      }
    }
  }
  // By source: a world is limited at a stretch when any of its twins limits it.
  const limitedBy = (/** @type {typeof r.worlds[number]} */ w, /** @type {number} */ stretch, coarse = false) =>
    (coarse && w.coarseCases ? w.coarseCases : w.cases).some((c) => c.stretch === stretch && c.limited);
  const bySource = [];
  for (const [source, worlds, coarse] of /** @type {Array<[string, typeof r.worlds, boolean]>} */ ([
    ['request rate', r.worlds.filter((w) => !w.latencyOnly), false],
    [`latency only, p95 to ${100 * RESOLUTIONS[0]}%`, r.worlds.filter((w) => w.latencyOnly), false],
    [`latency only, p95 to ${100 * RESOLUTIONS[1]}%`, r.worlds.filter((w) => w.latencyOnly), true],
    [`all (latency only to ${100 * RESOLUTIONS[1]}%)`, r.worlds, true]
  ])) {
    bySource.push(`| ${source} | ${worlds.length} | ${STRETCHES.map((stretch) => {
      const n = worlds.filter((w) => limitedBy(w, stretch, coarse)).length;
      return `${n} (${pct(n, worlds.length)})`;
    }).join(' | ')} |`);
  }
  const own = r.worlds.flatMap((w) => w.replayShares);
  return [
    `### The information limit of the hold-out targets (\`bench/information-limit.js\`)`,
    `${r.count} held-out worlds per quiet family (sim/held-out-seeds.json), ${(r.runtimeMs / 1000).toFixed(0)} s. For each world w, the informed oracle's ` +
    `schedule stretched to 1.15 × and 1.4 × its time (the two targets), and four twins of w drawn as often as w itself: **gain** ` +
    `(× 1.3 requests per open), **late** (the same early wave, plus a slow wave at a 20-min median carrying 23% of the requests: × 1.3 in all) ` +
    `**fast** (the same requests, every open-delay median ÷ ${FAST_FACTOR}, where that stays within the family's range; none for bimodal, whose slow wave would leave it) ` +
    `and **baseline** (× 1.3 the users nobody pushed, where that stays within the drawn range). ` +
    `Where the world's source reports the request rate, w and its twin are told apart by it; where it sees latency only, by the windows' p95 as simulated in both, known to ${100 * RESOLUTIONS[0]}% (the table) or to the controller's assumed ${100 * RESOLUTIONS[1]}% (the second table). ` +
    `"Limited": the stretched schedule has sent its last device before w and its twin can be told apart (d′ = 1 over every metrics window, plus the lag), ` +
    `and the twin's own informed oracle needs longer than the stretch: there, every controller is either slower than the target on w or breaks the SLO on the twin. ` +
    `"Twin over": windows over the SLO when the stretched schedule of w runs on the twin (more than 1%).`, '',
    '| family | twin | stretch | worlds | twin in range | limited | w and twin told apart after (median) | T* of w (median) | twins over the SLO under the schedule |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows, '',
    'Worlds limited by any of their twins, by what the source reports:', '',
    `| source | worlds | ${STRETCHES.map((s) => `limited at ${s} ×`).join(' | ')} |`,
    `|---|---|${STRETCHES.map(() => '---').join('|')}|`,
    ...bySource, '',
    `The stretched schedules on w itself: median ${(100 * median(own)).toFixed(2)}% of windows over the SLO.`, ''
  ].join('\n');
}

/**
 * The blind bound's twins: a wake-up with more requests (× 3, 5, 10), one whose users open
 * FAST_FACTOR times sooner, both at once, and a late wave added to a one-wave world (× 2 and
 * × 3 the requests, the world's own wave unchanged); each only where the family could have drawn it.
 */
const BLIND_TWINS = /** @type {const} */ ([['gain', 3], ['gain', 5], ['gain', 10], ['fast', FAST_FACTOR], ['fast+gain', 3], ['fast+gain', 5], ['late', 2], ['late', 3]]);
const BLIND_ROOMS = /** @type {const} */ (['slo', 'throughput']);

/**
 * sim/information-limit.js blindBound on the held-out worlds of the quiet families, every twin
 * and room. The informed oracle is simulated once per world.
 * @param {{ count?: number }} [options]
 */
export function benchBlindBound({ count = HOLDOUT_COUNT } = {}) {
  const started = performance.now();
  const seeds = heldOutSeeds();
  const worlds = QUIET_FAMILIES.flatMap((family) => Array.from({ length: count }, (_, k) => {
    const seed = worldSeed(family, seeds.heldOut[family], k);
    const raw = drawScenario(family, seed);
    const scenario = resolveScenario(raw, raw.name);
    const oracleSeconds = /** @type {number} */ (simulate(scenario, 'informed-oracle').completionSeconds);
    /** @type {Record<string, ReturnType<typeof blindBound>>} */
    const twins = {};
    for (const [twin, factor] of BLIND_TWINS) {
      for (const room of BLIND_ROOMS) twins[`${twin} ${factor}/${room}`] = blindBound(family, seed, { twin, factor, room, oracleSeconds, stretches: STRETCHES });
    }
    return { family, seed, oracleSeconds, latencyOnly: !scenario.metrics.reportsRps, blindSeconds: scenario.metrics.windowSeconds + scenario.metrics.lagSeconds, twins };
  }));
  return { count, worlds, runtimeMs: Math.round(performance.now() - started) };
}

/** @param {ReturnType<typeof benchBlindBound>} r */
export function formatBlindBoundSection(r) {
  const pct = (/** @type {number} */ n) => `${((100 * n) / r.worlds.length).toFixed(1)}%`;
  const at = (/** @type {number} */ stretch) => STRETCHES.indexOf(stretch);
  const rows = [];
  for (const [twin, factor] of BLIND_TWINS) {
    for (const room of BLIND_ROOMS) {
      const cases = r.worlds.map((w) => w.twins[`${twin} ${factor}/${room}`]);
      const inRange = cases.filter((c) => c.twinInRange).length;
      const computed = cases.filter((c) => c.guardedSeconds !== null).length;
      rows.push(`| ${twin} × ${twin === 'fast' ? `1/${factor} delay` : factor} | ${room} | ${inRange} | ${computed} | ` +
        STRETCHES.map((s) => { const n = cases.filter((c) => c.limited[at(s)]).length; return `${n} (${pct(n)})`; }).join(' | ') + ' |');
    }
  }
  const any = (/** @type {string} */ room, /** @type {number} */ stretch) => r.worlds.filter((w) => Object.entries(w.twins).some(([k, c]) => k.endsWith(`/${room}`) && c.limited[at(stretch)]));
  const short = r.worlds.filter((w) => w.oracleSeconds * (Math.max(...STRETCHES) - 1) < w.blindSeconds).length;
  const byFamily = QUIET_FAMILIES.map((family) => `${family} ${any('throughput', 1.4).filter((w) => w.family === family).length}`).join(', ');
  return [
    '### The blind bound (`bench/information-limit.js`, `blindBound` in sim/information-limit.js)',
    `${r.count} held-out worlds per quiet family (sim/held-out-seeds.json), ${(r.runtimeMs / 1000).toFixed(0)} s; no controller runs. ` +
    'No metrics window showing a campaign\'s wake-ups can be read before the window\'s length plus the lag, so every controller sends the same in a world and ' +
    'in its twins (same gateway, baseline and audience) until then, and those sends\' load on the twin must fit the twin by itself. ' +
    'A late twin differs only in a wave 20 minutes later, so its blind time lasts until that wave could first show: the detectability of the difference reaching 1, plus the lag, had the whole audience gone out in the first second. ' +
    'The smallest time that sends the world\'s audience within its own room (the oracle\'s program) while its blind sends also fit the twin is a lower bound for every such controller. ' +
    '"Limited": that bound is over the stretch × the informed oracle\'s simulated time. Room: `slo`, the twin\'s SLO capacity as the oracle plans with it (windows over the SLO); ' +
    '`throughput`, its full-CPU throughput (a queue that grows for the bin). ' +
    `Only campaigns shorter than the blind time over (stretch − 1) can be limited (${short} of ${r.worlds.length} here); twins only where the family could draw them.`, '',
    `| twin | room | twin in range | computed | ${STRETCHES.map((s) => `limited at ${s} ×`).join(' | ')} |`,
    `|---|---|---|---|${STRETCHES.map(() => '---').join('|')}|`,
    ...rows, '',
    `Limited by any of these twins: ${STRETCHES.map((s) => `at ${s} × ${any('slo', s).length} worlds (${pct(any('slo', s).length)}) with the SLO room, ${any('throughput', s).length} (${pct(any('throughput', s).length)}) with the throughput`).join('; ')}. ` +
    `At 1.4 × with the throughput, by family: ${byFamily}.`, ''
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === 'blind') {
    console.log(formatBlindBoundSection(benchBlindBound()));
    process.exit(0);
  }
  const count = process.argv[2] ? Number(process.argv[2]) : HOLDOUT_COUNT;
  if (!Number.isInteger(count) || count < 1) {
    console.error(`information-limit: the count must be a whole number ≥ 1, got ${process.argv[2]}`);
    process.exit(2);
  }
  console.log(formatInformationLimitSection(benchInformationLimit({ count })));
}
