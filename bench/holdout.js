// The hold-out evaluation (issue #11): the adaptive strategy against the informed and the
// clairvoyant oracle on random worlds of every family (sim/families.js), drawn from the
// held-out seeds fixed in sim/held-out-seeds.json before any tuning, and, beside them, from
// the first tuning seed. The targets are judged on the held-out worlds only; the tuning
// figures show how far tuning on other worlds carries over.
//
// `node bench/holdout.js [count]` prints the markdown of its bench/RESULTS.md section;
// `npm run bench -- holdout` appends it. `node bench/holdout.js --confirmation [count]` runs the
// confirmation seeds instead: once, for a controller that meets every target on the held-out
// seeds (sim/held-out-seeds.json says why).
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { evaluateFamily, checkTargets, summarise } from '../sim/family-evaluation.js';
import { FAMILY_NAMES, heldOutSeeds } from '../sim/families.js';

/** Worlds per family and seed: 2 × 8 × 25 worlds take about 6 minutes on the 2-core bench machine. */
export const HOLDOUT_COUNT = 25;

/** The seeds a run judges the targets on: which set, and how the section names it. */
const SEED_SETS = Object.freeze({
  heldOut: { title: 'Held-out seeds', worlds: 'held-out worlds', about: 'the held-out seeds of sim/held-out-seeds.json (fixed on 2026-11-24 before any tuning; never tune on them)' },
  confirmation: { title: 'Confirmation seeds', worlds: 'confirmation worlds', about: 'the confirmation seeds of sim/held-out-seeds.json (drawn on 2026-11-28, for one run of a controller that meets every target on the held-out seeds)' }
});

/**
 * @param {{ count?: number, families?: readonly string[], set?: keyof typeof SEED_SETS }} [options]
 */
export function benchHoldout({ count = HOLDOUT_COUNT, families = FAMILY_NAMES, set = 'heldOut' } = {}) {
  const started = performance.now();
  const seeds = heldOutSeeds();
  const tuningSeed = seeds.tuning[0];
  const rows = families.map((family) => {
    const heldOut = evaluateFamily(family, { count, seed: seeds[set][family] });
    const tuning = evaluateFamily(family, { count, seed: tuningSeed });
    return { family, heldOut, tuning, targets: checkTargets(heldOut.summary), tuningTargets: checkTargets(tuning.summary) };
  });
  // Every family's worlds together (mixed is a family of its own and counts once).
  const allHeldOut = summarise(rows.flatMap((r) => r.heldOut.rows));
  const allTuning = summarise(rows.flatMap((r) => r.tuning.rows));
  return {
    count,
    set,
    tuningSeed,
    rows,
    all: { heldOut: allHeldOut, tuning: allTuning, targets: checkTargets(allHeldOut), tuningTargets: checkTargets(allTuning) },
    allMet: checkTargets(allHeldOut).every((t) => t.met) && rows.every((r) => r.targets.every((t) => t.met)),
    runtimeMs: Math.round(performance.now() - started)
  };
}

/** @param {number} x */
const times = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'not done');
/** @param {number} share */
const percent = (share) => `${(share * 100).toFixed(2)}%`;

/**
 * The markdown section for a benchHoldout result.
 * @param {ReturnType<typeof benchHoldout>} r
 */
export function formatHoldoutSection(r) {
  /** @param {import('../sim/family-evaluation.js').Summary} s @param {ReturnType<typeof checkTargets>} t */
  const cells = (s, t) => {
    const mark = (/** @type {number} */ i) => (t[i].met ? '' : ' **NOT met**');
    return [
      `${times(s.informedRatio.median)}${mark(0)}`,
      `${times(s.informedRatio.p90)}${mark(1)}`,
      times(s.informedRatio.max),
      `${times(s.oracleRatio.median)} / ${times(s.oracleRatio.p90)}`,
      `${percent(s.quiet.adaptiveShare)} (${s.quiet.worlds}; oracle ${percent(s.quiet.informedShare)})${mark(2)}`,
      s.eventful.worlds ? `${s.eventful.points >= 0 ? '+' : ''}${s.eventful.points.toFixed(2)} (${s.eventful.worlds}; ${percent(s.eventful.adaptiveShare)} vs ${percent(s.eventful.informedShare)})${mark(3)}` : '—',
      `${s.errorWorlds}${mark(4)}`,
      `${s.notFinished}${s.oracleFailures ? ` (+${s.oracleFailures} left out: an oracle's program did not converge)` : ''}`
    ];
  };
  const header = '| family | worlds | median × informed | p90 × informed | max | × clairvoyant (median / p90) | SLO windows over, quiet worlds | points over the informed oracle, eventful worlds | error worlds | not finished |';
  const lines = [
    `### Hold-out evaluation: the adaptive strategy on random worlds (\`bench/holdout.js\`)`,
    `${r.count} worlds per family on ${SEED_SETS[r.set].about}, ` +
    `and beside them ${r.count} worlds per family from tuning seed ${r.tuningSeed}. Adaptive, clairvoyant oracle and informed oracle on every world ` +
    `(docs/simulator.md, "Scenario families"); ${(r.runtimeMs / 1000).toFixed(0)} s for everything below.`, '',
    'Targets, on the held-out worlds: median completion ≤ 1.15 × the informed oracle, p90 ≤ 1.4 ×; windows over the SLO ≤ 1% in quiet worlds ' +
    '(nothing unannounced happens; pooled over their windows), within 2 points of the informed oracle in eventful ones; no gateway errors in a world where ' +
    'the informed oracle has none ("error worlds"). A world the adaptive strategy does not finish within its maxSeconds counts as infinitely slow ("not done").', '',
    `**${SEED_SETS[r.set].title}**`, '', header, '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.family} | ${x.heldOut.count} | ${cells(x.heldOut.summary, x.targets).join(' | ')} |`),
    `| **all** | ${r.all.heldOut.worlds} | ${cells(r.all.heldOut, r.all.targets).join(' | ')} |`, '',
    `Targets on all ${SEED_SETS[r.set].worlds}: ${r.all.targets.map((t) => `${t.name} ${t.value === null ? 'not done' : t.value.toFixed(2)} (≤ ${t.limit}): ${t.met ? 'met' : 'NOT met'}`).join('; ')}.`, '',
    `**Tuning seed ${r.tuningSeed}** (for comparison; the targets are not judged here)`, '', header, '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.family} | ${x.tuning.count} | ${cells(x.tuning.summary, x.tuningTargets).join(' | ')} |`),
    `| **all** | ${r.all.tuning.worlds} | ${cells(r.all.tuning, r.all.tuningTargets).join(' | ')} |`, '',
    `The informed oracle against the clairvoyant one (completion, all held-out worlds): median ${times(r.all.heldOut.informedVsOracle.median)}, ` +
    `p90 ${times(r.all.heldOut.informedVsOracle.p90)}; eventful worlds over the SLO: informed ${percent(r.all.heldOut.eventful.informedShare)}, clairvoyant ${percent(r.all.heldOut.eventful.oracleShare)}.`, ''
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const set = args[0] === '--confirmation' ? 'confirmation' : 'heldOut';
  if (set === 'confirmation') args.shift();
  const count = args[0] ? Number(args[0]) : HOLDOUT_COUNT;
  if (!Number.isInteger(count) || count < 1 || args.length > 1) {
    console.error(`holdout: usage: node bench/holdout.js [--confirmation] [count ≥ 1], got ${process.argv.slice(2).join(' ') || 'nothing'}`);
    process.exit(2);
  }
  const r = benchHoldout({ count, set });
  console.log(`\n## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC — ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ` +
    `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`);
  console.log(formatHoldoutSection(r));
}
