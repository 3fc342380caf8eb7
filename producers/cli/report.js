// pushctl report and pushctl failures: how a campaign went, and its devices not delivered.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { buildCampaignReport, formatCampaignReport } from '../../shared/campaign/campaign-report.js';
import { exportFailures } from '../../shared/campaign/failure-export.js';
import { formatDuration } from '../../shared/campaign/format-duration.js';
import { createCampaignHistory } from '../../shared/metrics/campaign-history.js';
import { InputError } from '../../shared/errors.js';

/** @typedef {import('./context.js').Context} Context */
/** @typedef {{ stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream }} IO */

/**
 * @param {Context} ctx
 * @param {string} id
 * @param {{ json?: boolean }} options
 * @param {IO} io
 */
export async function report(ctx, id, options, io) {
  const history = createCampaignHistory(ctx.redis, ctx.config);
  const r = await buildCampaignReport({ store: ctx.store, history }, id);
  io.stdout.write(options.json ? JSON.stringify(r) + '\n' : formatCampaignReport(r, formatDuration));
  return 0;
}

/**
 * @param {Context} ctx
 * @param {string} id
 * @param {{ format: 'csv' | 'ndjson', output?: string }} options
 * @param {IO} io
 */
export async function failures(ctx, id, { format, output }, io) {
  await ctx.store.require(id);
  // Owner-only: the file lists people's device endpoints.
  const file = output === undefined ? null : createWriteStream(output, { mode: 0o600 });
  if (file) {
    try {
      await once(file, 'open');
    } catch (error) {
      const e = /** @type {NodeJS.ErrnoException} */ (error);
      throw new InputError(`--output ${output}: ${e.code === 'ENOENT' ? 'no such directory' : e.message}`, { cause: e });
    }
  }
  const out = file ?? io.stdout;
  const { rows, notDelivered, source } = await exportFailures({ redis: ctx.redis, store: ctx.store }, id, format, out);
  if (file) {
    file.end();
    await once(file, 'finish');
  }
  // Counts only on stderr: the rows themselves never go anywhere but `out`.
  const where = output === undefined ? '' : ` to ${output}`;
  io.stderr.write(`${rows} device(s) not delivered written${where}` +
    (rows < notDelivered ? `; ${notDelivered - rows} more were not kept (${source === 'failures' ? 'campaign recorded before the export existed: only the newest 1,000 failures' : 'the list keeps the first 200,000'})` : '') + '\n');
  return 0;
}
