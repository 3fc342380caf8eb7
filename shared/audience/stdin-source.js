// `pushctl send --audience -`: the audience on standard input, for `heroku run`, whose
// one-off dyno has none of the operator's files. A launch reads its audience twice (a scan
// that checks it all and stores nothing, then the enqueue), and standard input can be read
// only once, so it is copied to a temporary file first: nothing is stored until all of it
// has arrived and been checked, and the size is bounded by the disk, not by memory (a
// million devices with examples/audience.csv's columns are 136 MB of CSV: too much to hold
// in pushctl's 128 MB heap).
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../errors.js';

// End of transmission (Ctrl-D). `heroku run` sends it after a redirected file instead of
// closing the connection, and on a dyno without a terminal (--no-tty) nothing turns it into
// an end of file; no CSV or NDJSON audience holds it, so it ends the input here.
const EOT = 0x04;

/** The formats --format names; standard input has no extension to tell them apart. */
export const STDIN_FORMATS = /** @type {const} */ (['csv', 'ndjson']);

/** @typedef {(typeof STDIN_FORMATS)[number]} StdinFormat */

/**
 * Checks --format for --audience -: required with it, refused without it (a file's
 * format comes from its extension).
 * @param {string} audience  --audience
 * @param {unknown} format   --format
 * @returns {StdinFormat | undefined}
 */
export function stdinFormat(audience, format) {
  if (audience !== '-') {
    if (format !== undefined) throw new InputError('--format is only for --audience - (standard input); a file\'s format comes from its extension (.csv, .ndjson)');
    return undefined;
  }
  if (format === undefined) throw new InputError('--audience - reads the audience from standard input and needs --format csv or --format ndjson');
  if (!STDIN_FORMATS.includes(/** @type {any} */ (format))) throw new InputError(`--format must be csv or ndjson, got "${format}"`);
  return /** @type {StdinFormat} */ (format);
}

/**
 * Copies standard input, up to its end or an EOT byte, to a new owner-only temporary
 * directory (its rows identify devices) and returns the file, with a close that removes
 * it. A terminal is refused: the command would wait for typing nobody meant to do, and a
 * terminal's line editing would change the data (`heroku run` gives the dyno one unless
 * it is run with --no-tty).
 * @param {NodeJS.ReadableStream & { isTTY?: boolean }} input
 * @param {StdinFormat} format
 * @returns {Promise<{ file: string, close: () => Promise<void> }>}
 */
export async function spoolStdin(input, format) {
  if (input.isTTY) {
    throw new InputError('--audience - reads the audience from standard input, which is a terminal here: ' +
      'redirect a file (< users.csv) or pipe one; with heroku run, add --no-tty');
  }
  const dir = await mkdtemp(join(tmpdir(), 'pushpace-stdin-'));
  const close = () => rm(dir, { recursive: true, force: true });
  const file = join(dir, `audience.${format}`);
  const handle = await open(file, 'wx', 0o600);
  try {
    for await (const chunk of input) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : /** @type {Buffer} */ (chunk);
      const end = bytes.indexOf(EOT);
      await handle.write(end === -1 ? bytes : bytes.subarray(0, end));
      if (end !== -1) break; // leaving the loop stops reading: whatever follows is not the audience
    }
  } catch (error) {
    await handle.close();
    await close();
    throw new InputError(`--audience -: standard input could not be read: ${/** @type {Error} */ (error).message}; nothing was enqueued`, { cause: error });
  }
  await handle.close();
  return { file, close };
}
