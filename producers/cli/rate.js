// pushctl rate: shows the shared rate, or sets it for every worker at once. The rate is
// what stands between a campaign and the API gateway, so only a real number sets it:
// an empty argument (a script's unset variable), "0x10" or "1e3" are refused rather than
// read as 0, 16 or 1000, and 0, which stops every send, needs --yes.
import { InputError } from '../../shared/errors.js';
import { formatDuration } from '../../shared/campaign/format-duration.js';
import { formatCount, formatRate } from './format.js';

/** @typedef {import('./context.js').Context} Context */

// Digits, with an optional fraction: what a person writes for "sends per second".
const DECIMAL = /^\d+(?:\.\d+)?$/;
const WHOLE = /^\d+$/;

/**
 * The rate and burst `pushctl rate RATE [--burst N] [--yes]` asks for, checked.
 * @param {string} text
 * @param {{ burst?: string, yes?: boolean }} options
 * @returns {{ rate: number, burst: number | undefined }}
 */
export function parseRateRequest(text, { burst, yes }) {
  const rate = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(rate)) {
    throw new InputError(`rate: RATE must be a plain decimal number of sends per second (such as 500 or 12.5), got "${text}"`);
  }
  if (rate === 0 && !yes) {
    throw new InputError('rate 0 stops every send of every worker, campaigns and transactional sends alike; add --yes to do that');
  }
  if (burst === undefined) return { rate, burst: undefined };
  if (!WHOLE.test(burst) || Number(burst) < 1) throw new InputError(`--burst must be a whole number ≥ 1, got "${burst}"`);
  return { rate, burst: Number(burst) };
}

/**
 * @param {Context} ctx
 * @param {string | undefined} newRate
 * @param {{ burst?: string, yes?: boolean, json?: boolean }} options
 * @param {{ stdout: NodeJS.WritableStream }} io
 */
export async function rate(ctx, newRate, options, io) {
  if (newRate !== undefined) await ctx.bucket.set(parseRateRequest(newRate, options));
  else if (options.burst !== undefined) throw new InputError('--burst needs a RATE: pushctl rate 500 --burst 25');
  const settings = await ctx.bucket.settings();
  const pace = settings.rate === 0 ? 'stopped: nothing is sent (pushctl rate N resumes)' : `${formatDuration(1_000_000 / settings.rate)} per million devices`;
  io.stdout.write(options.json ? JSON.stringify(settings) + '\n'
    : `rate ${formatRate(settings.rate)}  burst ${settings.burst}  tokens granted so far ${formatCount(settings.granted)}  (${pace})\n`);
  return 0;
}
