// The demo's command line, checked before anything starts: a bad flag names itself and
// exits 2 (demo/main.js), so a typo never runs a five-minute demo with a default.
import { parseArgs } from 'node:util';
import { WORLDS, SOURCES } from './settings.js';

/**
 * @typedef {object} DemoFlags
 * @property {import('./settings.js').DemoWorld} world
 * @property {import('./settings.js').SourceName} source
 * @property {number} audience
 * @property {number | undefined} fixedRate
 * @property {string | undefined} out
 * @property {boolean} help
 */

/**
 * Parses and validates `npm run demo` flags.
 * @param {string[]} args
 * @returns {DemoFlags | { error: string }}
 */
export function parseDemoFlags(args) {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        gateway: { type: 'string' }, source: { type: 'string' }, audience: { type: 'string' }, 'fixed-rate': { type: 'string' },
        out: { type: 'string' }, help: { type: 'boolean', short: 'h' }
      }
    }));
  } catch (error) {
    return { error: /** @type {Error} */ (error).message };
  }
  const gateway = values.gateway ?? 'modelled';
  if (!Object.hasOwn(WORLDS, gateway)) return { error: `--gateway must be ${Object.keys(WORLDS).join(' or ')}, got "${gateway}"` };
  const world = WORLDS[/** @type {keyof typeof WORLDS} */ (gateway)];
  const source = values.source ?? 'scrape';
  if (!Object.hasOwn(SOURCES, source)) return { error: `--source must be ${Object.keys(SOURCES).join(' or ')}, got "${source}"` };
  const audience = values.audience === undefined ? world.audience : Number(values.audience);
  if (!Number.isInteger(audience) || audience < 1 || audience > 1_000_000) {
    return { error: `--audience must be a whole number from 1 to 1000000, got "${values.audience}"` };
  }
  const fixedRate = values['fixed-rate'] === undefined ? undefined : Number(values['fixed-rate']);
  if (fixedRate !== undefined && !(Number.isFinite(fixedRate) && fixedRate > 0 && fixedRate <= 100_000)) {
    return { error: `--fixed-rate must be a number of sends per second above 0 and up to 100000, got "${values['fixed-rate']}"` };
  }
  if (fixedRate !== undefined && values.source !== undefined) return { error: '--source and --fixed-rate exclude each other: a fixed rate runs no governor' };
  return { world, source: /** @type {import('./settings.js').SourceName} */ (source), audience, fixedRate, out: values.out, help: values.help ?? false };
}
