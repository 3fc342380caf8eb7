#!/usr/bin/env node
// `node demo/replay.js SUMMARY.json [--options JSON] [--from S] [--to S]`: a demo or bench
// run's governor decisions fed again through the pacing controller, open loop: the same
// observations (sends, gateway windows, devices left), the governor's options as the run's
// environment gave them, plus any changed. Prints each decision as logged and as replayed,
// with the bank member whose plan was the lowest, and a summary line. It answers "why did
// the governor decide that?" and "what would this option have decided instead?" without a
// run on the real stack; open loop, a changed decision does not change what the gateway did
// next. The summaries record no tick's exact length, so a replay can differ from the run by
// about a send per second (the real-gateway bench's runs of 2026-11-30: 0.24 and 1.2 at most).
// A summary holds the demo's own settings, not PACING_* variables the caller's environment
// added to the run: give those in --options.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import { createInspectableController } from '../shared/pacing/controller.js';
import { parseControllerOptions } from '../shared/pacing/controller-options.js';
import { governorEnv, SOURCES } from './settings.js';

/**
 * @typedef {object} ReplayedDecision
 * @property {number} t                 s since the campaign started
 * @property {number} loggedRate
 * @property {string} loggedReason
 * @property {number} rate              the replayed decision
 * @property {string} reason
 * @property {number | null} p95Ms      the window read at that tick (null: none)
 * @property {string | null} binding    the bank member whose plan was the lowest (null: no member counts yet)
 */

/**
 * The controller's options a run's governor had: the world's settings as the demo passed
 * them in its environment (config/index.js reads them), with `changes` on top.
 * @param {{ settings: import('./settings.js').DemoWorld, source: string | null }} summary
 * @param {Record<string, unknown>} [changes]
 */
export function replayOptions(summary, changes = {}) {
  const source = /** @type {import('./settings.js').SourceName} */ (summary.source ?? 'scrape');
  if (!Object.hasOwn(SOURCES, source)) throw new RangeError(`the summary's source ${summary.source} is not one of ${Object.keys(SOURCES).join(', ')}`);
  // Only the pacing settings matter here; the rest just has to pass validation.
  const env = { REDIS_URL: 'redis://127.0.0.1:6379', KEY_PREFIX: 'replay', QUEUE_BACKEND: 'bullmq', SEND_RATE: '20', ...summary.settings.env, ...governorEnv(summary.settings, 'http://127.0.0.1:1', source) };
  return { ...loadConfig(env).pacing.controller, ...changes };
}

/**
 * @param {{ settings: import('./settings.js').DemoWorld, source: string | null, decisions: Array<{ t: number, rate: number, reason: string, sent: number, gateway: import('../shared/types.js').GatewaySample | null, remaining: number | null }> }} summary
 * @param {Record<string, unknown>} [changes]  controller options to change
 * @returns {ReplayedDecision[]}
 */
export function replayDecisions(summary, changes) {
  if (!Array.isArray(summary?.decisions) || summary.source === null) throw new RangeError('not a governed run\'s summary: it has no governor decisions (a fixed-rate run, or not a demo summary)');
  const controller = createInspectableController(replayOptions(summary, changes));
  return summary.decisions.map((d) => {
    const decision = controller.update({ now: d.t * 1000, sent: d.sent, gateway: d.gateway, remaining: d.remaining });
    return { t: d.t, loggedRate: d.rate, loggedReason: d.reason, rate: decision.rate, reason: decision.reason, p95Ms: d.gateway?.p95Ms ?? null, binding: controller.snapshot().binding?.shape ?? null };
  });
}

const USAGE = 'usage: node demo/replay.js SUMMARY.json [--options JSON] [--from S] [--to S]';

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const { values, positionals } = parseArgs({ allowPositionals: true, options: { options: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } });
    if (positionals.length !== 1) throw new RangeError(USAGE);
    const changes = values.options === undefined ? {} : parseControllerOptions(values.options);
    const summary = JSON.parse(await readFile(positionals[0], 'utf8'));
    const rows = replayDecisions(summary, changes);
    const from = Number(values.from ?? -Infinity);
    const to = Number(values.to ?? Infinity);
    const f = (/** @type {number} */ x) => x.toFixed(1).padStart(7);
    process.stdout.write('      t  logged reason               replayed reason               p95 ms  lowest member\n');
    for (const r of rows) {
      if (r.t < from || r.t > to) continue;
      process.stdout.write(`${f(r.t)} ${f(r.loggedRate)} ${r.loggedReason.padEnd(20)} ${f(r.rate)} ${r.reason.padEnd(20)} ${r.p95Ms === null ? '      –' : f(r.p95Ms)}  ${r.binding ?? '–'}\n`);
    }
    const sending = rows.filter((r) => r.t >= 0);
    const mean = (/** @type {number[]} */ xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    process.stdout.write(`${JSON.stringify({
      decisions: sending.length,
      largestDifference: Math.max(0, ...sending.map((r) => Math.abs(r.rate - r.loggedRate))),
      meanLogged: mean(sending.map((r) => r.loggedRate)),
      meanReplayed: mean(sending.map((r) => r.rate)),
      minRateLogged: sending.filter((r) => r.loggedReason === 'min-rate').length,
      minRateReplayed: sending.filter((r) => r.reason === 'min-rate').length
    })}\n`);
  } catch (error) {
    process.stderr.write(`replay: ${/** @type {Error} */ (error).message}\n`);
    process.exitCode = 2;
  }
}
