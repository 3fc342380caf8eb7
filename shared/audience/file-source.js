// Streams an audience file (CSV or NDJSON). An audience of every user can have
// millions of lines; reading it whole would put hundreds of megabytes in a 512 MB dyno,
// so only one 256 KB chunk of the file is held at a time.
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { InputError } from '../errors.js';
import { readCsvAudience } from './csv-source.js';
import { parseDevice } from './device.js';
import { lineBatches, MAX_LINE_CHARS } from './line-splitter.js';

/** @typedef {import('../types.js').AudienceItem} AudienceItem */

const NDJSON_EXTENSIONS = new Set(['.ndjson', '.jsonl', '.json-lines']);

/**
 * Reads an audience file and yields one item per record, in order: a CSV record
 * (csv-source.js) or an NDJSON line. The format comes from the extension (.csv, .ndjson,
 * .jsonl, .json-lines), else from the first non-blank character ("{" means NDJSON).
 * Throws InputError for an unreadable file or a CSV header without endpointArn and
 * platform columns, before yielding anything.
 * @param {string} file
 * @param {{ name?: string, format?: 'csv' | 'ndjson' }} [options]  the name messages use (default
 *   the path) and the format when the extension must not decide (standard input's --format)
 * @returns {AsyncGenerator<AudienceItem>}
 */
export async function* readAudienceFile(file, { name: path = file, format: given } = {}) {
  const handle = await openAudience(file, path);
  const input = handle.createReadStream({ encoding: 'utf8', highWaterMark: 256 * 1024 });
  try {
    const extension = extname(path).toLowerCase();
    /** @type {'csv' | 'ndjson' | undefined} */
    let format = given ?? (extension === '.csv' ? 'csv' : NDJSON_EXTENSIONS.has(extension) ? 'ndjson' : undefined);
    const chunks = input[Symbol.asyncIterator]();
    /** @type {string[]} */
    const read = [];
    // The first chunk, read ahead to strip a byte order mark and, without a known
    // extension, to see the format; a file that starts with more than a chunk of blank
    // lines is read ahead until its first other character.
    for (let first = true; ; first = false) {
      const next = await chunks.next();
      if (next.done) break;
      let chunk = /** @type {string} */ (next.value);
      if (first && chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      read.push(chunk);
      if (format !== undefined) break;
      const start = chunk.search(/\S/);
      if (start === -1) continue;
      format = sniff(path, chunk[start]);
      break;
    }
    if (format === undefined) return;
    const text = replay(read, chunks);
    yield* format === 'csv' ? readCsvAudience(text, path) : readNdjson(text);
  } finally {
    // Runs on early exit too (a consumer that stops reading), so the descriptor is not leaked.
    input.destroy();
  }
}

/**
 * The chunks read ahead, then the rest.
 * @param {string[]} read
 * @param {AsyncIterator<unknown>} rest
 * @returns {AsyncGenerator<string>}
 */
async function* replay(read, rest) {
  yield* read;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield /** @type {string} */ (next.value);
}

/**
 * One JSON object per non-blank line.
 * @param {AsyncIterable<string>} chunks
 * @returns {AsyncGenerator<AudienceItem>}
 */
async function* readNdjson(chunks) {
  let line = 0;
  /** @param {string | null} text */
  const take = (text) => {
    line += 1;
    if (text === null) return { skipped: { line, reason: `is longer than ${MAX_LINE_CHARS} characters` } };
    return text.length === 0 || text.trim() === '' ? undefined : parseJsonLine(text, line);
  };
  for await (const lines of lineBatches(chunks)) {
    for (const text of lines) {
      const item = take(text);
      if (item !== undefined) yield item;
    }
  }
}

/**
 * Opens the file up front so that a missing file, a permission problem or a directory
 * is reported with its path before any line is read.
 * @param {string} file
 * @param {string} path  as messages name it
 */
async function openAudience(file, path) {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new InputError(`${path}: cannot read the audience file: ${describeFsError(error)}`, { cause: error });
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new InputError(`${path}: cannot read the audience file: it is ${stats.isDirectory() ? 'a directory' : 'not a regular file'}`);
  }
  return handle;
}

/** @param {unknown} error */
function describeFsError(error) {
  const code = /** @type {NodeJS.ErrnoException} */ (error).code;
  if (code === 'ENOENT') return 'no such file; check the path';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return error instanceof Error ? error.message : String(error);
}

/**
 * @param {string} path
 * @param {string} firstCharacter the file's first non-blank character
 * @returns {'csv' | 'ndjson'}
 */
function sniff(path, firstCharacter) {
  if (firstCharacter === '{') return 'ndjson';
  if (firstCharacter === '[') {
    throw new InputError(`${path}: looks like a JSON array; write one JSON object per line (NDJSON) instead`);
  }
  return 'csv';
}

/**
 * @param {string} text
 * @param {number} line
 * @returns {AudienceItem}
 */
function parseJsonLine(text, line) {
  let record;
  try {
    record = JSON.parse(text);
  } catch {
    return { skipped: { line, reason: 'not valid JSON' } };
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return { skipped: { line, reason: 'not a JSON object' } };
  }
  return parseDevice(record, line);
}
