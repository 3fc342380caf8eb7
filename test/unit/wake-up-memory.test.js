// Memory across campaigns (shared/pacing/wake-up-memory.js): the next campaign's prior from
// what earlier ones learned, decayed with age, per message kind, the configured prior last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryEntryOf, priorFromMemory } from '../../shared/pacing/wake-up-memory.js';
import { secondCampaign } from '../../sim/second-campaign.js';
import { loadScenario } from '../../sim/scenario.js';
import { createModelBank } from '../../shared/pacing/model-bank.js';
import { resolveControllerOptions } from '../../shared/pacing/controller-options.js';

const CONFIGURED = { openProbability: 0.1, requestsPerOpen: 15, priorUncertainty: 3, confidence: 2, openDelayMedianMs: 90_000, openDelaySigma: 1 };
const DAY = 86_400_000;
const entry = (/** @type {Partial<import('../../shared/pacing/wake-up-memory.js').MemoryEntry>} */ e) =>
  ({ at: 0, kind: null, sends: 100_000, requestsPerSend: 4.5, requestsPerSendSd: 0.2, medianFactor: 1.2, sigmaFactor: 1, ...e });

test('no memory: the configured prior, unchanged', () => {
  const prior = priorFromMemory([], { now: 0 }, CONFIGURED);
  assert.equal(prior.fromMemory, 0);
  assert.ok(Math.abs(prior.options.openProbability - 0.1) < 1e-12);
  assert.ok(Math.abs(prior.options.priorUncertainty - 3) < 1e-9);
  assert.deepEqual(prior.shape, { medianFactor: 1, sigmaFactor: 1, weight: 0 });
  assert.equal(prior.options.shapePriorWeight, 0, 'the bank starts every member equal');
});

test('a fresh, sharp estimate moves the prior most of the way, and narrows it', () => {
  const prior = priorFromMemory([entry({})], { now: DAY }, CONFIGURED);
  assert.ok(prior.gainPrior.requestsPerSend > 4 && prior.gainPrior.requestsPerSend < 4.5, `${prior.gainPrior.requestsPerSend}`);
  assert.ok(prior.options.priorUncertainty < 3, 'narrower than the configured prior');
  assert.ok(Math.abs(prior.options.openProbability * 15 - prior.gainPrior.requestsPerSend) < 1e-9, 'the two forms agree');
  assert.ok(Math.abs(prior.shape.medianFactor - 1.2) < 1e-9, 'the remembered shape');
});

test('old memory fades back to the configured prior; another kind counts less', () => {
  const fresh = priorFromMemory([entry({})], { now: DAY }, CONFIGURED).gainPrior.requestsPerSend;
  const old = priorFromMemory([entry({})], { now: 90 * DAY }, CONFIGURED).gainPrior.requestsPerSend;
  assert.ok(Math.abs(old - 1.5) < 0.1, `after 90 days: ${old}`);
  const otherKind = priorFromMemory([entry({ kind: 'digest' })], { now: DAY, kind: 'sale' }, CONFIGURED).gainPrior.requestsPerSend;
  assert.ok(otherKind < fresh && otherKind > 1.5, `${otherKind}`);
  // Two campaigns that disagree: the prior lies between them and is wider than either.
  const split = priorFromMemory([entry({ requestsPerSend: 2 }), entry({ requestsPerSend: 6 })], { now: DAY }, CONFIGURED);
  assert.ok(split.gainPrior.requestsPerSend > 2 && split.gainPrior.requestsPerSend < 6);
  assert.ok(split.gainPrior.requestsPerSendSd > 1, `${split.gainPrior.requestsPerSendSd}`);
});

test('the remembered shape makes the bank start from the member nearest it; memory alone rules no member out', () => {
  const prior = priorFromMemory([entry({ medianFactor: 1.2, sigmaFactor: 1 })], { now: DAY }, CONFIGURED);
  assert.ok(prior.shape.weight > 0.9, `the memory's share: ${prior.shape.weight}`);
  assert.deepEqual(prior.gainPrior.shape, prior.shape, 'the governor path carries it too');

  const plain = createModelBank(resolveControllerOptions({}));
  assert.equal(plain.snapshot().medianFactor, 1, 'without memory: the configured shape');
  const remembered = createModelBank(resolveControllerOptions(prior.options));
  assert.equal(remembered.snapshot().medianFactor, 1.2, 'from the options (a controller made for the campaign)');
  // Between campaigns (the governor's setGainPrior): the reset takes the shape with the gain.
  plain.resetGain(prior.gainPrior);
  assert.equal(plain.snapshot().medianFactor, 1.2, 'from the gain prior');
  plain.resetGain();
  assert.equal(plain.snapshot().medianFactor, 1, 'and back to the configured shape without one');

  // Every member still counts before any data, the slow openers at 9 × the median included.
  remembered.plan({ capacityRps: 1000, nowMs: 0, intervalMs: 10_000, remaining: Infinity });
  const members = remembered.snapshot().plausibleModels;
  plain.plan({ capacityRps: 1000, nowMs: 0, intervalMs: 10_000, remaining: Infinity });
  assert.equal(members, plain.snapshot().plausibleModels, `${members} members count with the remembered shape`);
});

test('a campaign that learned nothing leaves no entry', () => {
  const snapshot = { requestsPerSend: 1.4, requestsPerSendSd: 0.1, medianFactor: 1, sigmaFactor: 1 };
  assert.equal(memoryEntryOf(snapshot, { at: 0, sends: 10 }), null, 'too few sends');
  assert.equal(memoryEntryOf({ ...snapshot, requestsPerSend: NaN }, { at: 0, sends: 10_000 }), null);
  assert.deepEqual(memoryEntryOf(snapshot, { at: 5, kind: 'sale', sends: 10_000 }),
    { at: 5, kind: 'sale', sends: 10_000, ...snapshot, seconds: null, baselineRps: null, capacityRps: null, startPrior: null });
  const prior = { requestsPerSend: 1.5, requestsPerSendSd: 1.5 };
  assert.deepEqual(memoryEntryOf(snapshot, { at: 5, sends: 10_000, seconds: 600, baselineRps: 40, capacityRps: 300, startPrior: prior }),
    { at: 5, kind: null, sends: 10_000, ...snapshot, seconds: 600, baselineRps: 40, capacityRps: 300, startPrior: prior }, 'with how long it took and in what conditions');
  assert.equal(memoryEntryOf(snapshot, { at: 5, sends: 10_000, seconds: NaN })?.seconds, null, 'a duration that is not a number is unknown');
});

test('simulator, wrong prior (3x more opens than configured): the second campaign starts near the truth, with no more windows over the SLO', () => {
  const r = secondCampaign(loadScenario(new URL('../../sim/scenarios/wrong-prior.json', import.meta.url).pathname));
  assert.ok(Math.abs(r.priorError.second - 1) < 0.15, `second prior / truth = ${r.priorError.second}`);
  assert.ok(Math.abs(r.priorError.first - 1) > 0.5);
  assert.ok(r.first.completed && r.second.completed);
  assert.ok(r.second.violatedWindows <= r.first.violatedWindows, `${r.second.violatedWindows} windows over against ${r.first.violatedWindows}`);
});
