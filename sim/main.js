#!/usr/bin/env node
// npm run sim -- --scenario sim/scenarios/all-users.json [--strategy adaptive|blast|batches|static|oracle|informed-oracle|all] [--json] [--chart out.svg]
// npm run sim -- --family NAME [--count 200] [--seed 1] [--json]
// Runs strategies on a scenario in virtual time, or the adaptive strategy and both oracles on
// random worlds of a family (sim/families.js). Exit codes: 0 ok, 1 failure, 2 bad input.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { InputError } from '../shared/errors.js';
import { loadScenario } from './scenario.js';
import { STRATEGIES, simulate } from './simulate.js';
import { renderChart } from './chart.js';
import { FAMILY_NAMES } from './families.js';
import { evaluateFamily, checkTargets } from './family-evaluation.js';

const USAGE = 'usage: node sim/main.js --scenario FILE [--strategy adaptive|blast|batches|static|oracle|informed-oracle|all] [--json] [--chart out.svg]\n' +
  `       node sim/main.js --family ${FAMILY_NAMES.join('|')} [--count 200] [--seed 1] [--json]`;

try {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string' },
      strategy: { type: 'string', default: 'adaptive' },
      json: { type: 'boolean', default: false },
      chart: { type: 'string' },
      family: { type: 'string' },
      count: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', default: false }
    }
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.family !== undefined) runFamily(values);
  else runScenario(values);
} catch (err) {
  const e = /** @type {Error & { code?: string }} */ (err);
  const input = e instanceof InputError || e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE';
  console.error(`sim: ${e.message}`);
  process.exitCode = input ? 2 : 1;
}

/**
 * --scenario: strategies on one scenario file.
 * @param {{ scenario?: string, strategy: string, chart?: string, json: boolean, count?: string, seed?: string }} values
 */
function runScenario(values) {
  if (values.count !== undefined || values.seed !== undefined) throw new InputError(`--${values.count !== undefined ? 'count' : 'seed'} needs --family\n${USAGE}`);
  if (!values.scenario) throw new InputError(`--scenario or --family is missing\n${USAGE}`);
  const names = values.strategy === 'all' ? Object.keys(STRATEGIES) : [values.strategy];
  for (const name of names) if (!(name in STRATEGIES)) throw new InputError(`unknown strategy ${name}; known: ${Object.keys(STRATEGIES).join(', ')}, all`);
  const scenario = loadScenario(values.scenario);

  const results = names.map((name) => simulate(scenario, name, { series: Boolean(values.chart) }));
  if (values.chart) {
    const svg = renderChart({
      title: `${scenario.name}: ${names.join(', ')}`,
      runs: results.map((r) => ({ label: r.strategy, series: /** @type {import('./simulate.js').Series} */ (r.series) })),
      sloP95Ms: scenario.slo.p95Ms
    });
    writeFileSync(values.chart, svg);
  }
  const plain = results.map(({ series, ...rest }) => rest);
  if (values.json) {
    console.log(JSON.stringify(plain.length === 1 ? plain[0] : { scenario: scenario.name, results: plain }));
  } else {
    console.log(`${scenario.name}: ${scenario.audience.toLocaleString('en-US')} devices, p95 SLO ${scenario.slo.p95Ms} ms`);
    console.log('strategy        completion   p95 over SLO (10-s windows)   gateway errors   peak p95    runtime');
    for (const r of plain) {
      console.log(`${r.strategy.padEnd(15)} ${duration(r.completionSeconds).padStart(10)}   ${`${(r.sloViolationShare * 100).toFixed(2)}% (${r.violatedWindows}/${r.evaluatedWindows})`.padStart(27)}   ` +
        `${r.gatewayErrors.toLocaleString('en-US').padStart(14)}   ${`${r.peakP95Ms} ms`.padStart(9)}   ${`${r.runtimeMs} ms`.padStart(8)}`);
    }
    if (values.chart) console.log(`chart: ${values.chart}`);
  }
}

/**
 * --family: the distribution over `count` worlds, as a table or one JSON object.
 * @param {{ family?: string, count?: string, seed?: string, scenario?: string, strategy?: string, chart?: string, json?: boolean }} values
 */
function runFamily(values) {
  const family = /** @type {string} */ (values.family);
  if (!FAMILY_NAMES.includes(family)) throw new InputError(`--family: unknown family ${JSON.stringify(family)}; known: ${FAMILY_NAMES.join(', ')}`);
  if (values.scenario !== undefined || values.chart !== undefined || values.strategy !== 'adaptive') {
    throw new InputError(`--family runs adaptive, oracle and informed-oracle on drawn worlds: drop ${values.scenario !== undefined ? '--scenario' : values.chart !== undefined ? '--chart' : '--strategy'}`);
  }
  const count = wholeNumber('count', values.count ?? '200', 1);
  const seed = wholeNumber('seed', values.seed ?? '1', 0);
  const result = evaluateFamily(family, { count, seed });
  const targets = checkTargets(result.summary);
  if (values.json) {
    console.log(JSON.stringify({ family, count, seed, summary: result.summary, targets, runtimeMs: result.runtimeMs, worlds: result.rows }));
    return;
  }
  const s = result.summary;
  const x = (/** @type {number} */ v) => (Number.isFinite(v) ? v.toFixed(2) : 'not done');
  console.log(`${family}: ${count} worlds from seed ${seed} (${(result.runtimeMs / 1000).toFixed(1)} s)`);
  console.log(`adaptive ÷ informed oracle     median ${x(s.informedRatio.median)}   p90 ${x(s.informedRatio.p90)}   max ${x(s.informedRatio.max)}   (${s.notFinished} not finished)`);
  console.log(`adaptive ÷ clairvoyant oracle  median ${x(s.oracleRatio.median)}   p90 ${x(s.oracleRatio.p90)}   max ${x(s.oracleRatio.max)}`);
  console.log(`windows over the SLO, ${s.quiet.worlds} quiet worlds: adaptive ${(100 * s.quiet.adaptiveShare).toFixed(2)}%, informed oracle ${(100 * s.quiet.informedShare).toFixed(2)}% (${s.quiet.worldsOver} worlds over 1%)`);
  console.log(`windows over the SLO, ${s.eventful.worlds} eventful worlds: adaptive ${(100 * s.eventful.adaptiveShare).toFixed(2)}%, informed oracle ${(100 * s.eventful.informedShare).toFixed(2)}% (${s.eventful.points >= 0 ? '+' : ''}${s.eventful.points.toFixed(2)} points)`);
  console.log(`worlds with gateway errors where the informed oracle has none: ${s.errorWorlds}`);
  for (const t of targets) console.log(`  ${t.met ? 'met    ' : 'NOT met'}  ${t.name}: ${t.value === null ? 'not done' : t.value.toFixed(2)} (limit ${t.limit})`);
}

/** @param {string} flag @param {string} text @param {number} min */
function wholeNumber(flag, text, min) {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) throw new InputError(`--${flag} must be a whole number ≥ ${min}, got ${JSON.stringify(text)}`);
  return n;
}

/** @param {number | null} seconds */
function duration(seconds) {
  if (seconds === null) return 'not done';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}
