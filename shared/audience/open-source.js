// Opens the audience a campaign names: a file, or a query over the devices table.
// A query runs in one REPEATABLE READ READ ONLY transaction for the whole
// command, so the scan pass and the enqueue pass see the same rows.
import { createPool, connectClient } from '../db/pool.js';
import { InputError } from '../errors.js';
import { stdinFormat, spoolStdin } from './stdin-source.js';

/**
 * A file (`-`: standard input, in `format`), or a query.
 * @typedef {{ audience: string, format?: import('./stdin-source.js').StdinFormat, query?: undefined }
 *   | { query: string, audience?: undefined, format?: undefined }} AudienceChoice
 */

/**
 * The audience a command names: exactly one of a file (--audience; `-` with --format for
 * standard input, send only) or a query (--query).
 * @param {{ audience?: unknown, query?: unknown, format?: unknown }} options
 * @param {string} command  names the command in the refusal ('send', 'schedule add')
 * @returns {AudienceChoice}
 */
export function chooseAudience(options, command) {
  const audience = typeof options.audience === 'string' && options.audience ? options.audience : undefined;
  const query = typeof options.query === 'string' && options.query ? options.query : undefined;
  if (!audience === !query) throw new InputError(`${command} needs exactly one of --audience FILE or --query SQL: who the announcement goes to`);
  if (!audience) return { query: /** @type {string} */ (query) };
  // A schedule reads its audience again at every fire; standard input is gone by then.
  if (audience === '-' && command !== 'send') throw new InputError(`${command} cannot take --audience - (standard input): it reads the audience again at every fire; give a file or --query`);
  const format = stdinFormat(audience, options.format);
  return format ? { audience, format } : { audience };
}

/**
 * Opens the audience chosen (chooseAudience). Standard input (`-`) is read from `stdin`
 * to its end, into a temporary file the close removes (stdin-source.js).
 * @param {AudienceChoice} choice
 * @param {{ databaseUrl: string }} config
 * @param {{ stdin?: NodeJS.ReadableStream & { isTTY?: boolean } }} [io]  pushctl send's; nothing else reads `-`
 * @returns {Promise<{ source: import('./audience-reader.js').AudienceSource, label: string, close: () => Promise<void> }>}
 */
export async function openAudienceSource(choice, config, { stdin } = {}) {
  const options = chooseAudience(choice, 'send');
  if (options.audience === '-') {
    if (!stdin || !options.format) throw new InputError('--audience - (standard input) is only for pushctl send');
    const spooled = await spoolStdin(stdin, options.format);
    return { source: { file: spooled.file, name: 'stdin', format: options.format }, label: 'stdin', close: spooled.close };
  }
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
