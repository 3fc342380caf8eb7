#!/usr/bin/env node
// npm run sim -- --scenario sim/scenarios/all-users.json [--strategy adaptive|blast|batches|static|oracle|all] [--json] [--chart out.svg]
// Runs strategies on a scenario in virtual time. Exit codes: 0 ok, 1 failure, 2 bad input.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { InputError } from '../shared/errors.js';
import { loadScenario } from './scenario.js';
import { STRATEGIES, simulate } from './simulate.js';
import { renderChart } from './chart.js';

const USAGE = 'usage: node sim/main.js --scenario FILE [--strategy adaptive|blast|batches|static|oracle|all] [--json] [--chart out.svg]';

try {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string' },
      strategy: { type: 'string', default: 'adaptive' },
      json: { type: 'boolean', default: false },
      chart: { type: 'string' },
      help: { type: 'boolean', default: false }
    }
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (!values.scenario) throw new InputError(`--scenario is missing\n${USAGE}`);
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
    console.log('strategy   completion   p95 over SLO (10-s windows)   gateway errors   peak p95    runtime');
    for (const r of plain) {
      console.log(`${r.strategy.padEnd(10)} ${duration(r.completionSeconds).padStart(10)}   ${`${(r.sloViolationShare * 100).toFixed(2)}% (${r.violatedWindows}/${r.evaluatedWindows})`.padStart(27)}   ` +
        `${r.gatewayErrors.toLocaleString('en-US').padStart(14)}   ${`${r.peakP95Ms} ms`.padStart(9)}   ${`${r.runtimeMs} ms`.padStart(8)}`);
    }
    if (values.chart) console.log(`chart: ${values.chart}`);
  }
} catch (err) {
  const e = /** @type {Error & { code?: string }} */ (err);
  const input = e instanceof InputError || e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE';
  console.error(`sim: ${e.message}`);
  process.exitCode = input ? 2 : 1;
}

/** @param {number | null} seconds */
function duration(seconds) {
  if (seconds === null) return 'not done';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  return `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
}
