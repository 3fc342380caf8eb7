// pushctl model show|reset: what the governor learned of past campaigns' wake-up traffic
// (shared/governor/model-memory.js), and the prior the next campaign starts from.
import { createModelMemory } from '../../shared/governor/model-memory.js';
import { resolveControllerOptions } from '../../shared/pacing/controller-options.js';
import { priorGain } from '../../shared/pacing/bank-members.js';
import { formatCount } from './format.js';

/** @typedef {import('./context.js').Context} Context */
/** @typedef {{ stdout: NodeJS.WritableStream }} Io */

/** @param {Context} ctx */
function memoryOf(ctx) {
  const configured = resolveControllerOptions(ctx.config.pacing.controller);
  return { memory: createModelMemory(ctx.redis, ctx.config.keyPrefix, configured), configured: priorGain(configured) };
}

/**
 * @param {Context} ctx @param {{ json?: boolean, kind?: string }} options @param {Io} io
 * @returns {Promise<number>}
 */
export async function show(ctx, options, io) {
  const { memory, configured } = memoryOf(ctx);
  const kind = options.kind ?? null;
  const [entries, prior] = await Promise.all([memory.entries(), memory.prior(Date.now(), kind)]);
  if (options.json) {
    io.stdout.write(JSON.stringify({ next: { ...prior.gainPrior, kind, fromMemory: prior.fromMemory, campaigns: prior.entries }, configured, entries }) + '\n');
    return 0;
  }
  const fixed = (/** @type {number} */ n) => n.toFixed(2);
  const lines = [
    `next campaign${kind ? ` of kind ${kind}` : ''}: ${fixed(prior.gainPrior.requestsPerSend)} requests per send (± ${fixed(prior.gainPrior.requestsPerSendSd)}), ` +
      (prior.fromMemory > 0 ? `${Math.round(prior.fromMemory * 100)}% from ${prior.entries} remembered campaign(s)` : 'from PACING_* alone (nothing remembered)'),
    `PACING_* prior: ${fixed(configured.requestsPerSend)} (± ${fixed(configured.requestsPerSendSd)})`
  ];
  if (entries.length > 0) {
    lines.push('remembered, newest first:');
    for (const e of entries) {
      lines.push(`  ${new Date(e.at).toISOString().slice(0, 16).replace('T', ' ')} UTC  ${formatCount(e.sends)} sends  ` +
        `${fixed(e.requestsPerSend)} ± ${fixed(e.requestsPerSendSd)} requests/send  open delay median ×${fixed(e.medianFactor)} σ ×${fixed(e.sigmaFactor)}` +
        (e.kind ? `  (${e.kind})` : ''));
    }
  }
  io.stdout.write(lines.join('\n') + '\n');
  return 0;
}

/**
 * @param {Context} ctx @param {{ json?: boolean }} options @param {Io} io
 * @returns {Promise<number>}
 */
export async function reset(ctx, options, io) {
  const removed = await memoryOf(ctx).memory.reset();
  io.stdout.write(options.json ? JSON.stringify({ removed }) + '\n'
    : `forgot ${removed} remembered campaign(s): the next campaign starts from PACING_* (a running governor takes this up when the current campaign ends)\n`);
  return 0;
}
