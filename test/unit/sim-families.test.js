import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drawScenario, delayShapeOf, highestBaseline, FAMILIES, FAMILY_NAMES, worldSeed } from '../../sim/families.js';
import { resolveScenario } from '../../sim/scenario.js';
import { simulate } from '../../sim/simulate.js';
import { createWorld } from '../../sim/world.js';
import { delayCdf } from '../../sim/delay-kernel.js';
import { learningTimes, knownScenario } from '../../sim/strategies/informed-oracle.js';
import { calibrateOracleConfidence } from '../../sim/oracle-calibration.js';
import { informationLimit, blindBound, LATENCY_RESOLUTION } from '../../sim/information-limit.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('a draw is the same for the same seed, and another seed draws another world', () => {
  assert.deepEqual(drawScenario('mixed', 42), drawScenario('mixed', 42));
  assert.notDeepEqual(drawScenario('mixed', 42), drawScenario('mixed', 43));
  assert.equal(worldSeed('pareto', 7, 3), worldSeed('pareto', 7, 3));
  assert.notEqual(worldSeed('pareto', 7, 3), worldSeed('pareto', 8, 3));
  assert.notEqual(worldSeed('pareto', 7, 3), worldSeed('bimodal', 7, 3));
});

test('every family draws worlds within its documented ranges, and they resolve', () => {
  for (const family of FAMILY_NAMES) {
    for (let k = 0; k < 2; k++) {
      const raw = drawScenario(family, worldSeed(family, 99, k));
      const s = resolveScenario(raw, raw.name);
      const drawn = family === 'mixed' ? /** @type {string} */ (s.description.split(':')[0]) : family;
      assert.ok(drawn in FAMILIES, s.description);
      const where = `${s.name} (${s.description})`;
      const [pLo, pHi] = drawn === 'pareto' ? [0.2, 0.4] : [0.02, 0.4];
      assert.ok(s.wakeUp.openProbability >= pLo && s.wakeUp.openProbability <= pHi, where);
      assert.ok(s.gateway.processes >= 1 && s.gateway.processes <= 64, where);
      assert.ok(s.metrics.lagSeconds >= 0 && s.metrics.lagSeconds <= 120, where);
      assert.ok(s.maxSeconds <= 86_400, where);
      if (s.description.includes('bimodal delays')) {
        const [fast, slow] = s.wakeUp.openDelay;
        assert.ok(fast.medianSeconds >= 10 && fast.medianSeconds <= 50 && slow.medianSeconds >= 900 && slow.medianSeconds <= 2400, where);
      } else {
        for (const c of s.wakeUp.openDelay) assert.ok(c.medianSeconds >= 20 && c.medianSeconds <= 1200, where);
        // So the mixture's median lies in 20 s - 20 min too.
        assert.ok(delayCdf(s.wakeUp.openDelay, 20) <= 0.5 + 1e-9 && delayCdf(s.wakeUp.openDelay, 1200) >= 0.5 - 1e-9, where);
      }
      if (drawn === 'small') assert.ok(s.audience >= 1000 && s.audience <= 20_000, where);
      if (drawn === 'capacity-drop') {
        assert.ok(s.gateway.capacityChanges.length >= 1 && s.gateway.capacityChanges.length <= 2, where);
        for (const c of s.gateway.capacityChanges) assert.ok(c.factor >= 0.4 && c.factor <= 0.7 && !c.announced, where);
      } else {
        assert.equal(s.gateway.capacityChanges.length, 0, where);
      }
      if (drawn === 'baseline-jump') assert.ok(s.baseline.spikes.some((j) => j.factor >= 1.5 && j.factor <= 3 && j.durationSeconds >= 900), where);
      // Operator settings only: the load test's capacity and its ratio at the SLO, and the least
      // the users send as a dashboard shows it; nothing about the wake-up behaviour.
      assert.deepEqual(Object.keys(s.strategies.adaptive.controller), ['capacityRps', 'sloCapacityRatio', 'baseLoadRps']);
      // A low figure: the mean less two of its ±30% (about 0.55 × the mean, within e^(±0.9) of that).
      const users = /** @type {number} */ (s.strategies.adaptive.controller.baseLoadRps) / s.baseline.rps;
      assert.ok(users > 0.55 * Math.exp(-0.9) - 0.01 && users < 0.55 * Math.exp(0.9) + 0.01, `${where}: the users' figure is ${users.toFixed(2)} × the mean`);
      const model = createWorld(s, { massPerSecond: new Float64Array([1]) }).gatewayModel;
      const truth = model.rateAtP95(1, 0.8 * s.slo.p95Ms);
      const measured = /** @type {number} */ (s.strategies.adaptive.controller.capacityRps);
      assert.ok(measured > truth * 0.5 && measured < truth * 2, where);
      // The ratio is the true one, rounded down to 0.01 (never above the truth).
      const ratio = /** @type {number} */ (s.strategies.adaptive.controller.sloCapacityRatio);
      const trueRatio = model.rateAtP95(1, s.slo.p95Ms) / truth;
      assert.ok(ratio >= 1 && ratio <= Math.max(1, trueRatio) && ratio > trueRatio - 0.011, `${where}: ratio ${ratio}, true ${trueRatio}`);
    }
  }
});

test('the held-out and the confirmation seeds are fixed for every family, apart from the tuning seeds', () => {
  const seeds = JSON.parse(readFileSync(new URL('../../sim/held-out-seeds.json', import.meta.url), 'utf8'));
  assert.deepEqual(Object.keys(seeds.heldOut).sort(), [...FAMILY_NAMES].sort());
  for (const s of seeds.tuning) assert.ok(!Object.values(seeds.heldOut).includes(s));
  assert.match(seeds.comment, /2026-11-24/);
  // The confirmation seeds: every family, none shared with the other two sets.
  assert.deepEqual(Object.keys(seeds.confirmation).sort(), [...FAMILY_NAMES].sort());
  for (const s of Object.values(seeds.confirmation)) assert.ok(!Object.values(seeds.heldOut).includes(s) && !seeds.tuning.includes(s), `${s}`);
  assert.match(seeds.confirmationComment, /2026-11-28/);
});

/** A short campaign with a capacity drop 4 minutes in, for 10 minutes. */
const dropWorld = () => resolveScenario({
  name: 'drop',
  seed: 5,
  audience: 150_000,
  gateway: { capacityChanges: [{ atSeconds: 240, durationSeconds: 600, factor: 0.5 }] }
});

test('the informed oracle learns of an unannounced event one window plus the lag after it, and of its end the same way', () => {
  const s = dropWorld();
  assert.deepEqual(learningTimes(s), [260, 860]);
  assert.equal(knownScenario(s, 259).gateway.capacityChanges.length, 0);
  assert.equal(knownScenario(s, 260).gateway.capacityChanges[0].durationSeconds, Infinity);
  assert.equal(knownScenario(s, 860).gateway.capacityChanges[0].durationSeconds, 600);
  const announced = { ...s, gateway: { ...s.gateway, capacityChanges: [{ ...s.gateway.capacityChanges[0], announced: true }] } };
  assert.deepEqual(learningTimes(announced), []);
});

test('the informed oracle: the clairvoyant one without events or with them announced; on an unannounced drop, more windows over the SLO', () => {
  const drop = dropWorld();
  const oracle = simulate(drop, 'oracle');
  const informed = simulate(drop, 'informed-oracle');
  assert.ok(informed.completed && oracle.completed);
  // Its sends before it learns of the drop ignore it: their load lands on the reduced
  // capacity. (It may finish sooner than the clairvoyant oracle for that very reason:
  // the clairvoyant one holds back before the drop; docs/simulator.md.)
  assert.ok(informed.violatedWindows > oracle.violatedWindows, `${informed.violatedWindows} vs ${oracle.violatedWindows}`);

  const announced = { ...drop, gateway: { ...drop.gateway, capacityChanges: [{ ...drop.gateway.capacityChanges[0], announced: true }] } };
  assert.deepEqual({ ...simulate(announced, 'informed-oracle'), strategy: 'oracle', runtimeMs: 0 }, { ...simulate(announced, 'oracle'), runtimeMs: 0 });
  const quiet = resolveScenario({ name: 'quiet', seed: 5, audience: 150_000 });
  assert.deepEqual({ ...simulate(quiet, 'informed-oracle'), strategy: 'oracle', runtimeMs: 0 }, { ...simulate(quiet, 'oracle'), runtimeMs: 0 });
});

test('a drop\'s own margin holds only while the capacity is down as the oracle knows it: the informed oracle sends as if there were no drop until the metrics show it', () => {
  // A drop that comes while the campaign sends (learned at 80 s, its end at 680 s).
  const drop = resolveScenario({ name: 'early drop', seed: 5, audience: 400_000, gateway: { capacityChanges: [{ atSeconds: 60, durationSeconds: 600, factor: 0.7 }] } });
  const margins = { binSeconds: 10, confidence: 1.3, dropConfidence: 4 };
  const withDrop = { ...drop, strategies: { ...drop.strategies, oracle: margins } };
  const noDrop = { ...withDrop, gateway: { ...withDrop.gateway, capacityChanges: [] } };
  const sameMargin = { ...withDrop, strategies: { ...drop.strategies, oracle: { ...margins, dropConfidence: null } } };
  const [learned, ended] = learningTimes(withDrop);
  /** Sends per window over [from, to) of the campaign. @param {typeof drop} s @param {number} from @param {number} to */
  const sends = (s, from, to) => {
    const { series } = simulate(s, 'informed-oracle', { series: true });
    const out = /** @type {NonNullable<typeof series>} */ (series);
    return out.t.flatMap((t, k) => (t >= from && t + out.windowSeconds <= to ? [out.sendRate[k]] : []));
  };
  const before = sends(withDrop, 0, learned);
  assert.ok(before.length >= 8 && before.some((rate) => rate > 0));
  // With the drop's margin kept all campaign (as until 2026-12-01) it sent less from the start.
  assert.deepEqual(before, sends(noDrop, 0, learned));
  // Once the drop shows, its margin: less sent while it lasts than with the full-capacity margin.
  const total = (/** @type {number[]} */ rates) => rates.reduce((a, b) => a + b, 0);
  const during = total(sends(withDrop, learned, ended));
  assert.ok(during < total(sends(sameMargin, learned, ended)), `${during} sent per window during the drop`);

  // A drawn drop world: its margin at full capacity is the one its gateway needs there, not
  // the (here far larger) one at the lowest capacity, which is its drop margin.
  const raw = drawScenario('capacity-drop', 3801916175);
  const resolved = resolveScenario(raw, raw.name);
  const lowest = Math.min(...resolved.gateway.capacityChanges.map((c) => c.factor));
  const { confidence, dropConfidence } = resolved.strategies.oracle;
  assert.equal(confidence, calibrateOracleConfidence({ ...resolved, gateway: { ...resolved.gateway, capacityChanges: [] } }));
  assert.equal(dropConfidence, calibrateOracleConfidence(resolved, { factor: lowest }));
  assert.ok(/** @type {number} */ (dropConfidence) > confidence, `${dropConfidence} vs ${confidence}`);
});

test('a source without the request rate gives windows with rps null', () => {
  const s = resolveScenario({ name: 'probe', audience: 1000, warmupSeconds: 60, metrics: { reportsRps: false } });
  /** @type {Array<unknown>} */
  const seen = [];
  simulate(s, () => ({ name: 'watch', sendsAt: ({ t, remaining, observe }) => { const w = observe(); if (w) seen.push(w.rps); return t >= 0 ? Math.min(remaining, 100) : 0; } }));
  assert.ok(seen.length > 0 && seen.every((rps) => rps === null));
});

test('sim --family: bad input exits 2 and names the flag', async () => {
  const run = promisify(execFile);
  /** @type {Array<[string[], string]>} */
  const cases = [[['--family', 'nope'], '--family'], [['--family', 'pareto', '--count', '0'], '--count'], [['--family', 'pareto', '--seed', '-1'], '--seed'], [['--count', '3'], '--count']];
  for (const [args, flag] of cases) {
    await assert.rejects(run(process.execPath, ['sim/main.js', ...args], { cwd: ROOT }), (/** @type {any} */ err) => {
      assert.equal(err.code, 2, args.join(' '));
      assert.ok(err.stderr.includes(flag), err.stderr);
      return true;
    });
  }
});

test('the information limit: a stretched oracle schedule sends everything in stretch × the time, twins differ only as drawn, and a limited world is one its twin cannot yet be told from', () => {
  const family = 'small';
  const seed = worldSeed(family, 7, 0);
  const r = informationLimit(family, seed, { stretches: [1.15, 1.4], twins: ['gain', 'late'] });
  assert.equal(r.replayShares.length, 2);
  assert.equal(r.cases.length, 4);
  for (const c of r.cases) {
    assert.ok(Math.abs(c.finishSeconds - c.stretch * r.oracleSeconds) <= 2, `${c.twin} × ${c.stretch}: finished at ${c.finishSeconds} s, oracle ${r.oracleSeconds} s`);
    if (c.twinOracleSeconds === null) continue;
    // More load in the twin: its own oracle is no faster (a second of rounding aside).
    if (c.twin === 'gain') assert.ok(c.twinOracleSeconds >= r.oracleSeconds - 1, `gain twin's oracle ${c.twinOracleSeconds} s vs ${r.oracleSeconds} s`);
    if (c.limited) assert.ok(c.distinguishableSeconds === null || c.finishSeconds <= c.distinguishableSeconds);
    else assert.ok(c.twinOracleSeconds <= c.stretch * r.oracleSeconds || (c.distinguishableSeconds !== null && c.distinguishableSeconds < c.finishSeconds));
  }
  // The late twin's slow wave shows later than the gain twin's extra load.
  const seen = (/** @type {string} */ twin) => r.cases.find((c) => c.twin === twin && c.stretch === 1.15)?.distinguishableSeconds ?? Infinity;
  assert.ok(seen('late') > seen('gain'), `late ${seen('late')} s, gain ${seen('gain')} s`);
});

test('the fast twin opens FAST_FACTOR times sooner with the same requests, only where the family could have drawn it, and the burst that fits the late openers overloads it', () => {
  // A tuning world whose users open late (a median of 17 minutes): the oracle sends all 48 s.
  const seed = 1549811106;
  const raw = drawScenario('lognormal', seed);
  assert.equal(delayShapeOf(raw), 'lognormal');
  const r = informationLimit('lognormal', seed, { stretches: [1.4], twins: ['fast'] });
  assert.ok(r.oracleSeconds < 120, `oracle ${r.oracleSeconds} s`);
  const [c] = r.cases;
  assert.equal(c.twin, 'fast');
  assert.ok(c.twinOracleSeconds !== null, 'a twin within range');
  // The same sends, their load sooner: the twin's oracle needs far longer, the stretched
  // burst breaks the twin's SLO, and it is over before the two can be told apart.
  assert.ok(c.twinOracleSeconds > 1.4 * r.oracleSeconds, `twin oracle ${c.twinOracleSeconds} s vs ${r.oracleSeconds} s`);
  assert.ok(c.twinShare !== null && c.twinShare > 0.01, `the stretched burst on the twin: ${c.twinShare} of windows over the SLO`);
  assert.equal(c.limited, true);
  // Bimodal worlds have no fast twin: their slow wave would leave its drawn range.
  const bimodal = informationLimit('bimodal', worldSeed('bimodal', 7, 0), { stretches: [1.4], twins: ['fast'] });
  assert.equal(bimodal.cases[0].twinOracleSeconds, null);
});

test('a gain twin past one parameter\'s range splits the factor: requests per open to the top of its range, the rest on the open probability', () => {
  // small/72969879: 15.9% open, 3.55 requests each. × 10 fits neither alone (35.5 requests, 159%),
  // but 30 requests (× 8.45) and 18.8% open (× 1.18) do.
  const seed = 72969879;
  const raw = drawScenario('small', seed);
  assert.deepEqual([raw.wakeUp.openProbability, raw.wakeUp.requestsPerOpen], [0.1593, 3.55]);
  const split = informationLimit('small', seed, { stretches: [1.4], twins: ['gain'], factor: 10 });
  assert.ok(split.cases[0].twinOracleSeconds !== null, 'the × 10 twin is within range');
  assert.ok(split.cases[0].twinOracleSeconds >= split.oracleSeconds - 1, `twin ${split.cases[0].twinOracleSeconds} s, world ${split.oracleSeconds} s`);
  // × 30 needs 47.8% open even with 30 requests: out of range.
  assert.equal(informationLimit('small', seed, { stretches: [1.4], twins: ['gain'], factor: 30 }).cases[0].twinOracleSeconds, null);
});

test('the blind bound: sends made before any window can show their wake-ups must be safe on a twin too, which can make a short campaign slower for any controller', () => {
  // Tuning seed 11's exponential/1099343143: 758,693 devices, users opening at a median of
  // 14 minutes, 105 s of metrics lag; the informed oracle sends them all in 28 s. Their twin
  // opening 3 × sooner (as likely a draw) would be overloaded past its throughput by any
  // schedule that fast, and nothing tells the two apart for 115 s.
  const blind = blindBound('exponential', 1099343143, { twin: 'fast', factor: 3, room: 'throughput' });
  assert.equal(blind.blindSeconds, 115);
  assert.ok(blind.twinInRange);
  const plain = /** @type {number} */ (blind.plainSeconds);
  const guarded = /** @type {number} */ (blind.guardedSeconds);
  // The program without the twin is no slower than the simulated oracle (its finer bins), and the twin only slows it.
  assert.ok(plain <= blind.oracleSeconds, `plain ${plain} s, oracle ${blind.oracleSeconds} s`);
  assert.ok(guarded > 1.4 * blind.oracleSeconds, `guarded ${guarded} s, oracle ${blind.oracleSeconds} s`);
  assert.deepEqual(blind.limited, [true, true]);
  // A small campaign (13,568 devices, users opening at a median of 8 minutes) whose whole wake-up
  // load also fits its × 3 twin: the twin costs nothing.
  const small = blindBound('small', 1505658763, { twin: 'gain', factor: 3, room: 'slo' });
  assert.ok(small.twinInRange);
  assert.equal(small.guardedSeconds, small.plainSeconds);
  assert.deepEqual(small.limited, [false, false]);
  // A campaign longer than the blind time over (stretch − 1) is not computed: waiting out the
  // blind time and then sending the oracle's schedule is always within the stretch.
  const long = blindBound('lognormal', 2505856510, { twin: 'gain', factor: 3, oracleSeconds: 821 });
  assert.equal(long.guardedSeconds, null);
  assert.deepEqual(long.limited, [false, false]);
});

test('the late twin: told apart only once its late wave shows, at the earliest as if the whole audience had gone out at once; only where the family draws it', () => {
  // Tuning world lognormal/3915896670: one log-normal wave, 55 s of metrics lag, the informed
  // oracle 140 s. Its twin keeps that wave as half the requests and adds a slow one (20 min, σ
  // 0.5), as the log-normal family's mixtures are drawn. The first window plus the lag (65 s)
  // shows the campaign's wake-ups, the same in both; the slow wave shows minutes later.
  const late = blindBound('lognormal', 3915896670, { twin: 'late', factor: 2, room: 'slo' });
  assert.ok(late.twinInRange);
  assert.ok(late.blindSeconds > 4 * 65, `blind ${late.blindSeconds} s`);
  assert.ok(/** @type {number} */ (late.guardedSeconds) > 1.4 * late.oracleSeconds, `guarded ${late.guardedSeconds} s, oracle ${late.oracleSeconds} s`);
  assert.deepEqual(late.limited, [true, true]);
  // A bimodal world already has its slow wave, and the families draw no third: no twin.
  assert.equal(blindBound('bimodal', worldSeed('bimodal', 11, 0), { twin: 'late', factor: 2 }).twinInRange, false);
  // Nor where the first wave would keep a share the log-normal family does not draw (under 0.3).
  assert.equal(blindBound('lognormal', 3915896670, { twin: 'late', factor: 4 }).twinInRange, false);
});

test('the baseline twin: more users nobody pushed, within the drawn range; a request rate tells it apart in the first window, a latency-only source only through the p95', () => {
  // Every drawn baseline is within the highest the family could have drawn for its world.
  for (const family of FAMILY_NAMES) {
    for (let k = 0; k < 5; k++) {
      const raw = drawScenario(family, worldSeed(family, 7, k));
      assert.ok(raw.baseline.rps <= highestBaseline(raw) + 0.01, `${family} #${k}: ${raw.baseline.rps} over ${highestBaseline(raw)}`);
    }
  }
  // A source with the request rate (small/4192039601, 55 s of metrics lag): 30% more
  // baseline shows in the first window.
  const seed = 4192039601;
  const rated = informationLimit('small', seed, { stretches: [1.4], twins: ['baseline'] });
  assert.equal(rated.latencyOnly, false);
  const [seen] = rated.cases;
  assert.ok(seen.twinOracleSeconds !== null && seen.twinOracleSeconds >= rated.oracleSeconds, `less room, no faster an oracle: ${seen.twinOracleSeconds} s vs ${rated.oracleSeconds} s`);
  assert.equal(seen.distinguishableSeconds, 10 + drawScenario('small', seed).metrics.lagSeconds);
  // A latency-only source (tuning world pareto/1771603298, a 46-s burst): the p95 tells the
  // twin apart only after the burst is out, and the twin's own oracle needs 90 s, so the world
  // is limited; a p95 known ten times better (judged from the same simulations) tells it apart sooner.
  const probed = informationLimit('pareto', 1771603298, { stretches: [1.4], twins: ['baseline'], latencyResolutions: [LATENCY_RESOLUTION, 0.001] });
  assert.equal(probed.latencyOnly, true);
  const [blind] = probed.cases;
  assert.ok(blind.distinguishableSeconds !== null && blind.distinguishableSeconds > blind.finishSeconds, `told apart at ${blind.distinguishableSeconds} s, sent by ${blind.finishSeconds} s`);
  assert.ok(blind.twinOracleSeconds !== null && blind.twinOracleSeconds > 1.4 * probed.oracleSeconds);
  assert.equal(blind.limited, true);
  const [sharper] = probed.casesByResolution[1];
  assert.ok(sharper.distinguishableSeconds !== null && sharper.distinguishableSeconds < blind.distinguishableSeconds, `${sharper.distinguishableSeconds} s vs ${blind.distinguishableSeconds} s`);
});
