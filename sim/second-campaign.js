// Memory in the simulator: the same world sends two campaigns, one after the other. The
// first starts from the configured prior; what its controller learned becomes a memory
// entry (shared/pacing/wake-up-memory.js), and the second starts from the prior the memory
// gives. Each campaign is one simulate() run in the same world (same scenario, same seed).
import { simulate } from './simulate.js';
import { createAdaptiveStrategy, adaptiveControllerOptions } from './strategies/adaptive.js';
import { createWorld } from './world.js';
import { memoryEntryOf, priorFromMemory } from '../shared/pacing/wake-up-memory.js';
import { resolveControllerOptions } from '../shared/pacing/controller-options.js';

/**
 * The first campaign in a world, and the world set up for the second: its controller starts
 * from the prior the first one's memory gives, `gapMs` later. (bench/forecast-accuracy.js
 * forecasts that second campaign.)
 * @param {import('./scenario.js').Scenario} scenario
 * @param {{ gapMs?: number, firstIn?: import('./scenario.js').Scenario, keepsCapacity?: boolean }} [options]
 *   firstIn: the world the first campaign meets, when not the second's (quietDay's, say);
 *   keepsCapacity: the second's controller starts from the capacity the first's learned, as the
 *   always-running governor's does (an idle reset forgets the wake-up gain, not the gateway);
 *   false keeps the configured one, so that the second differs from the first by memory alone
 */
export function afterFirstCampaign(scenario, { gapMs = 3_600_000, firstIn = scenario, keepsCapacity = false } = {}) {
  /** @type {Array<import('./strategies/strategy.js').Strategy>} */
  const strategies = [];
  const first = simulate(firstIn, (s, w) => {
    const strategy = createAdaptiveStrategy(s, w);
    strategies.push(strategy);
    return strategy;
  });
  const learned = strategies[0].learned;
  const entry = learned
    ? memoryEntryOf(learned, { at: 0, sends: first.sent, seconds: first.completionSeconds, baselineRps: learned.startBaselineRps ?? learned.baseline, capacityRps: learned.capacity, startPrior: learned.startPrior ?? null })
    : null;
  const configured = resolveControllerOptions(adaptiveControllerOptions(scenario));
  const prior = priorFromMemory(entry ? [entry] : [], { now: gapMs }, configured);
  const capacity = keepsCapacity && Number(learned?.capacity) > 0 ? { capacityRps: Number(learned?.capacity) } : {};
  /** @type {import('./scenario.js').Scenario} */
  const informed = {
    ...scenario,
    strategies: { ...scenario.strategies, adaptive: { ...scenario.strategies.adaptive, controller: { ...scenario.strategies.adaptive.controller, ...prior.options, ...capacity } } }
  };
  return { first, learned, entry, configured, prior, informed };
}

/**
 * The same world on another, quiet day: the same gateway, audience and wake-up behaviour, its
 * own noise (another seed), and none of the unannounced events (capacity changes, baseline
 * spikes and jumps), which are a day's, not the world's. Announced ones stay.
 * @param {import('./scenario.js').Scenario} scenario
 * @returns {import('./scenario.js').Scenario}
 */
export function quietDay(scenario) {
  return { ...calmTwin(scenario), seed: (Math.imul(scenario.seed ^ 0x5bd1e995, 2654435761) >>> 1) || 1 };
}

/**
 * The same day without its unannounced events: the same seed, so the same noise, and until
 * the first event the same metrics, sends and decisions. What a forecast made before the
 * event cannot tell from the world as drawn (bench/forecast-accuracy.js).
 * @param {import('./scenario.js').Scenario} scenario
 * @returns {import('./scenario.js').Scenario}
 */
export function calmTwin(scenario) {
  return {
    ...scenario,
    gateway: { ...scenario.gateway, capacityChanges: scenario.gateway.capacityChanges.filter((c) => c.announced) },
    baseline: { ...scenario.baseline, spikes: scenario.baseline.spikes.filter((c) => c.announced) }
  };
}

/**
 * @param {import('./scenario.js').Scenario} scenario
 * @param {{ gapMs?: number }} [options]  how long after the first campaign the second starts
 */
export function secondCampaign(scenario, options = {}) {
  const { first, learned, configured, prior, informed } = afterFirstCampaign(scenario, options);
  if (!learned) throw new Error(`${scenario.name}: the first campaign's controller learned nothing`);
  const second = simulate(informed, 'adaptive');
  const truth = createWorld(scenario).requestsPerSend;
  const configuredGain = configured.openProbability * configured.requestsPerOpen;
  return {
    scenario: scenario.name,
    truth,
    priorError: { first: configuredGain / truth, second: prior.gainPrior.requestsPerSend / truth },
    first: summary(first),
    second: summary(second),
    prior
  };
}

/** @param {import('./simulate.js').SimulationResult} r */
function summary(r) {
  return { completed: r.completed, completionSeconds: r.completionSeconds, violatedWindows: r.violatedWindows, evaluatedWindows: r.evaluatedWindows, gatewayErrors: r.gatewayErrors };
}
