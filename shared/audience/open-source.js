// Opens the audience a campaign names: a file, or a query over the devices table.
// A query runs in one REPEATABLE READ READ ONLY transaction for the whole
// command, so the scan pass and the enqueue pass see the same rows.
import { createPool } from '../db/pool.js';
import { UnavailableError } from '../errors.js';
import { redactUrl } from '../../config/index.js';

/**
 * @param {{ audience?: string, query?: string }} options
 * @param {{ databaseUrl: string }} config
 */
export async function openAudienceSource(options, config) {
  if (options.audience) {
    return { source: { file: options.audience }, label: options.audience, close: async () => {} };
  }
  const pool = createPool(config.databaseUrl, { max: 1 });
  let client;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end();
    throw new UnavailableError(`PostgreSQL is not reachable at ${redactUrl(config.databaseUrl)} (${/** @type {any} */ (error).code ?? /** @type {Error} */ (error).message})`, { cause: error });
  }
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  const held = client;
  return {
    source: { query: /** @type {string} */ (options.query), pool: held },
    label: '--query',
    async close() {
      await held.query('ROLLBACK').catch(() => {});
      held.release();
      await pool.end();
    }
  };
}
