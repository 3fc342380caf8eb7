// Opens the audience a campaign names: a file, or a query over the devices table.
// A query runs in one REPEATABLE READ READ ONLY transaction for the whole
// command, so the scan pass and the enqueue pass see the same rows.
import { createPool, connectClient } from '../db/pool.js';
import { InputError } from '../errors.js';

/** @typedef {{ audience: string, query?: undefined } | { query: string, audience?: undefined }} AudienceChoice */

/**
 * The audience a command names: exactly one of a file (--audience) or a query (--query).
 * @param {{ audience?: unknown, query?: unknown }} options
 * @param {string} command  names the command in the refusal ('send', 'schedule add')
 * @returns {AudienceChoice}
 */
export function chooseAudience(options, command) {
  const audience = typeof options.audience === 'string' && options.audience ? options.audience : undefined;
  const query = typeof options.query === 'string' && options.query ? options.query : undefined;
  if (!audience === !query) throw new InputError(`${command} needs exactly one of --audience FILE or --query SQL: who the announcement goes to`);
  return audience ? { audience } : { query: /** @type {string} */ (query) };
}

/**
 * Opens the audience chosen (chooseAudience).
 * @param {AudienceChoice} choice
 * @param {{ databaseUrl: string }} config
 */
export async function openAudienceSource(choice, config) {
  const options = chooseAudience(choice, 'send');
  if (options.audience) {
    return { source: { file: options.audience }, label: options.audience, close: async () => {} };
  }
  const pool = createPool(config.databaseUrl, { max: 1 });
  let client;
  try {
    client = await connectClient(pool, config.databaseUrl);
  } catch (error) {
    await pool.end();
    throw error;
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
