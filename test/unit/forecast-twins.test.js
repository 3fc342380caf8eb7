// The forecast bench's calm twins (bench/forecast-accuracy.js): the same day without its
// unannounced events, to tell what a forecast at launch could not know from what it got wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveScenario } from '../../sim/scenario.js';
import { simulate } from '../../sim/simulate.js';
import { calmTwin, quietDay } from '../../sim/second-campaign.js';
import { summariseForecasts } from '../../bench/forecast-accuracy.js';

/** 100,000 devices; the gateway loses half its capacity 120 s in, unannounced, for 10 minutes. */
const eventDay = () => resolveScenario({
  name: 'drop',
  audience: 100_000,
  seed: 7,
  gateway: { capacityChanges: [{ atSeconds: 120, durationSeconds: 600, factor: 0.5 }, { atSeconds: 900, durationSeconds: 60, factor: 0.9, announced: true }] },
  baseline: { spikes: [{ atSeconds: 60, durationSeconds: 30, factor: 1.5 }] }
});

test('the calm twin keeps the seed and the announced events, and drops only the unannounced ones', () => {
  const day = eventDay();
  const calm = calmTwin(day);
  assert.equal(calm.seed, day.seed);
  assert.deepEqual(calm.gateway.capacityChanges, [day.gateway.capacityChanges[1]]);
  assert.deepEqual(calm.baseline.spikes, []);
  const quiet = quietDay(day);
  assert.notEqual(quiet.seed, day.seed, 'another day has its own noise');
  assert.deepEqual(quiet.gateway.capacityChanges, calm.gateway.capacityChanges);
});

test('until its first event the calm twin is the same run: what a forecast at launch sees is the same', () => {
  const day = eventDay();
  const withEvent = simulate(day, 'adaptive', { series: true }).series;
  const calm = simulate(calmTwin(day), 'adaptive', { series: true }).series;
  const trace = (/** @type {any} */ s) => /** @type {Array<Record<string, number>>} */ (s.trace);
  const before = (/** @type {any} */ s) => trace(s).filter((x) => x.t < 60).map((x) => [x.t, x.rate]);
  assert.ok(before(withEvent).length > 5);
  assert.deepEqual(before(withEvent), before(calm));
  const after = (/** @type {any} */ s) => trace(s).filter((x) => x.t >= 60 && x.t < 400).map((x) => x.rate);
  assert.notDeepEqual(after(withEvent), after(calm), 'the spike and the drop change the decisions');
});

test('summariseForecasts counts the pairs no single forecast can get both of within ±20%', () => {
  const run = (/** @type {number | null} */ actual, /** @type {number} */ forecast, /** @type {number | null | undefined} */ calmActual) => ({
    audience: 1, actualSeconds: actual, forecastSeconds: forecast, modelSeconds: forecast, calibration: null, lowSeconds: 0, highSeconds: 0,
    ratio: actual ? forecast / actual : null, inRange: false, eventful: calmActual !== undefined,
    calm: calmActual === undefined ? null : { actualSeconds: calmActual, forecastSeconds: forecast, ratio: calmActual ? forecast / calmActual : null }
  });
  const s = summariseForecasts([
    run(100, 100, undefined), // quiet, right
    run(200, 100, 100),       // the event doubled it: apart; right on the calm twin only
    run(140, 100, 100),       // 1.4×: not apart (120 is within ±20% of both), but exact-on-calm misses the event day
    run(110, 100, 100),       // 1.1×: exact-on-calm is within ±20% of the event day
    run(null, 100, 100),      // the event day never finished: apart
    run(null, 100, null)      // neither finished: not apart
  ]);
  assert.equal(s.twins.pairs, 5);
  assert.equal(s.twins.calmWithin, 4);
  assert.equal(s.twins.apart, 2);
  assert.equal(s.twins.calmExactWithin, 2, '200: no, 140: no, 110: yes, one unfinished: no, both unfinished: yes');
  assert.equal(s.within, 2, 'runs 1 and 4');
});
