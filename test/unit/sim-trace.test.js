import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { traceWorld, describeWorld, formatDecision, refuseHeldOut } from '../../sim/trace-world.js';
import { worldSeed } from '../../sim/families.js';
import { evaluateWorld } from '../../sim/family-evaluation.js';
import { parseControllerOptions } from '../../shared/pacing/controller-options.js';
import { InputError } from '../../shared/errors.js';

const run = promisify(execFile);
const script = new URL('../../sim/trace-world.js', import.meta.url).pathname;
/** A tuning world: world 1 of the small family under tuning seed 11 (the informed oracle 11 s). */
const WORLD = worldSeed('small', 11, 1);

test('a traced world: what the controller was not told, then every decision with the member whose plan set the rate', () => {
  const trace = traceWorld('small', WORLD);
  const [description, wakeUp, gateway, settings, result] = describeWorld(trace);
  assert.match(description, /^small:/);
  const truth = trace.scenario.wakeUp.openProbability * trace.scenario.wakeUp.requestsPerOpen;
  assert.ok(wakeUp.includes(`${truth.toFixed(3)} requests per send`), wakeUp);
  assert.ok(gateway.includes(`SLO p95 ${trace.scenario.slo.p95Ms} ms`), gateway);
  assert.match(settings, /capacityRps/);
  assert.match(result, new RegExp(`adaptive ${trace.run.completionSeconds} s.*informed oracle ${trace.informedSeconds} s`));
  // One decision per control interval from the warm-up on, each with the window it read.
  const interval = trace.scenario.strategies.adaptive.controlIntervalSeconds;
  assert.ok(trace.run.completionSeconds !== null && trace.decisions.length > trace.run.completionSeconds / interval);
  for (let i = 1; i < trace.decisions.length; i++) assert.equal(trace.decisions[i].t - trace.decisions[i - 1].t, interval);
  const sending = trace.decisions.filter((d) => d.t >= 0 && d.remaining > 0);
  assert.ok(sending.length > 0);
  for (const d of sending) {
    const line = formatDecision(d);
    assert.ok(line.includes(d.decision.reason), line);
    if (d.snapshot.binding) {
      assert.ok(line.includes(d.snapshot.binding.shape), line);
      // The member named is the counted one with the lowest plan.
      const counted = d.snapshot.members.filter((m) => m.z !== null);
      assert.equal(d.snapshot.binding.plannedRate, Math.min(...counted.map((m) => m.plannedRate)));
    }
  }
  assert.ok(sending.some((d) => d.snapshot.binding !== null && d.decision.reason === 'plan'), 'the plan set some rates, and the trace names its member');
});

test('--options change the traced controller, and only known options are taken', () => {
  const capped = traceWorld('small', WORLD, { options: parseControllerOptions('{"maxRate":7}') });
  assert.ok(capped.decisions.every((d) => d.decision.rate <= 7), 'every decision within the changed maxRate');
  assert.equal(capped.controller.maxRate, 7);
  assert.throws(() => parseControllerOptions('{"maxrate":7}'), (e) => e instanceof InputError && /controller option maxrate is unknown/.test(e.message));
  assert.throws(() => parseControllerOptions('{"maxRate":"fast"}'), (e) => e instanceof InputError && /maxRate must be a finite number/.test(e.message));
  assert.throws(() => parseControllerOptions('[1]'), /a JSON object of controller options/);
  assert.throws(() => parseControllerOptions('{'), /a JSON object of controller options/);
});

test('--knows tells the traced controller what sim/tune.js --knows tells it, and only known parts are taken', () => {
  const told = traceWorld('small', WORLD, { knows: ['wake-up', 'request-rate'] });
  const truth = told.scenario.wakeUp;
  assert.equal(told.controller.openProbability, truth.openProbability);
  assert.equal(told.controller.requestsPerOpen, truth.requestsPerOpen);
  assert.equal(told.scenario.metrics.reportsRps, true);
  // An option given beside it wins, as in sim/tune.js.
  assert.equal(traceWorld('small', WORLD, { knows: ['wake-up'], options: { openProbability: 0.5 } }).controller.openProbability, 0.5);
  assert.throws(() => traceWorld('small', WORLD, { knows: ['everything'] }), (e) => e instanceof InputError && /--knows everything: known are wake-up, gateway, request-rate/.test(e.message));
});

test('--warmup runs the traced controller that long before the campaign, which starts as before', () => {
  const short = traceWorld('small', WORLD, { warmupSeconds: 300 });
  const long = traceWorld('small', WORLD);
  const interval = short.scenario.strategies.adaptive.controlIntervalSeconds;
  // The drawn worlds' own warm-up is the governor's hour (sim/families.js).
  assert.equal(long.decisions[0].t, -3600);
  assert.equal(short.decisions[0].t, -300);
  assert.equal(long.decisions.filter((d) => d.t < 0).length, 3600 / interval);
  // The campaign's own noise is the same: the informed oracle, which reads no metrics, takes as long.
  assert.equal(long.informedSeconds, short.informedSeconds);
});

test('--noise traces the noise stream sim/tune.js --noise runs, and only a whole number ≥ 0', () => {
  // The oracles' runs do not depend on the stream's adaptive run: given, they are not solved again.
  const none = { completionSeconds: 1, sloViolationShare: 0, violatedWindows: 0, evaluatedWindows: 0, gatewayErrors: 0 };
  const traced = traceWorld('small', WORLD, { noise: 1 });
  const { adaptive } = evaluateWorld('small', WORLD, { noise: 1, oracles: { oracle: none, informed: none } });
  const outcome = (/** @type {{ completionSeconds: number | null, violatedWindows: number, evaluatedWindows: number, gatewayErrors: number }} */ r) => [r.completionSeconds, r.violatedWindows, r.evaluatedWindows, r.gatewayErrors];
  assert.deepEqual(outcome(traced.run), outcome(adaptive));
  // Another stream is other noise: the windows the controller read differ.
  const drawn = traceWorld('small', WORLD);
  assert.notDeepEqual(traced.decisions.slice(0, 20).map((d) => d.gateway?.p95Ms), drawn.decisions.slice(0, 20).map((d) => d.gateway?.p95Ms));
  for (const noise of [-1, 1.5, 2 ** 31]) assert.throws(() => traceWorld('small', WORLD, { noise }), (e) => e instanceof InputError && /--noise must be a whole number ≥ 0/.test(e.message));
});

test('the held-out and confirmation worlds are refused; tuning worlds are not', () => {
  const seeds = JSON.parse(readFileSync(new URL('../../sim/held-out-seeds.json', import.meta.url), 'utf8'));
  assert.throws(() => refuseHeldOut('lognormal', worldSeed('lognormal', seeds.heldOut.lognormal, 3)), (e) => e instanceof InputError && /world 3 of the held-out seed/.test(e.message));
  assert.throws(() => refuseHeldOut('mixed', worldSeed('mixed', seeds.confirmation.mixed, 0)), /world 0 of the confirmation seed/);
  assert.doesNotThrow(() => refuseHeldOut('small', WORLD));
});

test('the command line: a traced world on stdout, bad input named with exit code 2', async () => {
  const { stdout } = await run(process.execPath, [script, 'small', String(WORLD), '--every', '30']);
  const lines = stdout.trim().split('\n');
  assert.match(lines[0], /^small:/);
  assert.ok(lines.slice(6).length > 0 && lines.slice(6).every((l) => Number(l.trim().split(/\s+/)[0]) % 30 === 0), stdout);
  for (const args of [['smol', '1'], ['small', String(WORLD), '--options', '{"nope":1}'], ['small'], ['small', String(WORLD), '--every', '0'], ['small', String(WORLD), '--warmup', '15']]) {
    await assert.rejects(run(process.execPath, [script, ...args]), (e) => /** @type {{ code: number }} */ (e).code === 2 && /trace-world: /.test(/** @type {{ stderr: string }} */ (e).stderr), args.join(' '));
  }
});
