// Streams an audience file (CSV or NDJSON) one line at a time. An audience of every
// user can have millions of lines; reading it whole would put hundreds of megabytes in
// a 512 MB dyno, so only one 256 KB chunk of the file is held at a time.
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { InputError } from '../errors.js';
import { canonicalField, parseDevice, parseDeviceFields } from './device.js';

/** @typedef {import('../types.js').AudienceItem} AudienceItem */

const NDJSON_EXTENSIONS = new Set(['.ndjson', '.jsonl', '.json-lines']);
// No audience line is anywhere near this long; a file without newlines (a binary, a
// minified JSON array) must not be buffered whole while looking for one.
const MAX_LINE_CHARS = 1 << 20;

/**
 * Reads an audience file and yields one item per non-blank line, in order. The format
 * comes from the extension (.csv, .ndjson, .jsonl, .json-lines), else from the first
 * non-blank line ("{" means NDJSON). Throws InputError for an unreadable file or a CSV
 * header without endpointArn and platform columns, before yielding anything.
 * @param {string} path
 * @returns {AsyncGenerator<AudienceItem>}
 */
export async function* readAudienceFile(path) {
  const handle = await openAudience(path);
  // Lines are split here rather than by node:readline, which takes twice as long: at a
  // million lines the difference is most of a second.
  const input = handle.createReadStream({ encoding: 'utf8', highWaterMark: 256 * 1024 });
  const parseLine = lineParser(path, extname(path).toLowerCase());
  try {
    let line = 0;
    let rest = '';
    let overlong = false;
    for await (const chunk of input) {
      const text = rest === '' ? /** @type {string} */ (chunk) : rest + chunk;
      let start = 0;
      let newline;
      while ((newline = text.indexOf('\n', start)) !== -1) {
        line += 1;
        if (overlong) {
          overlong = false;
          yield { skipped: { line, reason: `is longer than ${MAX_LINE_CHARS} characters` } };
        } else {
          // CRLF files: the \r belongs to the line break, not to the last field.
          const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
          const item = parseLine(text.slice(start, end), line);
          if (item !== undefined) yield item;
        }
        start = newline + 1;
      }
      rest = text.slice(start);
      if (rest.length > MAX_LINE_CHARS) {
        overlong = true;
        rest = '';
      }
    }
    if (overlong) {
      yield { skipped: { line: line + 1, reason: `is longer than ${MAX_LINE_CHARS} characters` } };
    } else if (rest !== '') {
      const item = parseLine(rest.endsWith('\r') ? rest.slice(0, -1) : rest, line + 1);
      if (item !== undefined) yield item;
    }
    parseLine.finish();
  } finally {
    // Runs on early exit too (a consumer that stops reading), so the descriptor is not leaked.
    input.destroy();
  }
}

/**
 * The per-line state machine: sniffs the format, reads the CSV header, then turns
 * each line into an item (undefined for blank lines and the header).
 * @param {string} path
 * @param {string} extension
 */
function lineParser(path, extension) {
  /** @type {'csv' | 'ndjson' | undefined} */
  let format = extension === '.csv' ? 'csv' : NDJSON_EXTENSIONS.has(extension) ? 'ndjson' : undefined;
  /** @type {CsvLayout | undefined} */
  let layout;

  /**
   * @param {string} text
   * @param {number} line
   * @returns {AudienceItem | undefined}
   */
  function parseLine(text, line) {
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length === 0 || text.trim() === '') return undefined;
    if (format === undefined) format = sniff(path, text);
    if (format === 'ndjson') return parseJsonLine(text, line);
    if (layout === undefined) {
      layout = csvLayout(path, text, line);
      return undefined;
    }
    return parseCsvLine(layout, text, line);
  }

  /** Called at the end of the file: a CSV needs at least its header. */
  parseLine.finish = () => {
    if (format === 'csv' && layout === undefined) {
      throw new InputError(`${path}: the file is empty; a CSV audience needs a header line with endpointArn and platform columns`);
    }
  };
  return parseLine;
}

/**
 * Opens the file up front so that a missing file, a permission problem or a directory
 * is reported with its path before any line is read.
 * @param {string} path
 */
async function openAudience(path) {
  let handle;
  try {
    handle = await open(path, 'r');
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
 * @param {string} firstLine the first non-blank line
 * @returns {'csv' | 'ndjson'}
 */
function sniff(path, firstLine) {
  const start = firstLine.trimStart();
  if (start.startsWith('{')) return 'ndjson';
  if (start.startsWith('[')) {
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

/**
 * Which CSV column holds which Device field.
 * @typedef {{ width: number, columns: Array<[number, string]> }} CsvLayout
 */

/**
 * Reads the header line. Names are trimmed and matched without case; unknown columns
 * are allowed and ignored.
 * @param {string} path
 * @param {string} text
 * @param {number} line
 * @returns {CsvLayout}
 */
function csvLayout(path, text, line) {
  const names = splitCsv(text);
  if (typeof names === 'string') throw new InputError(`${path} line ${line}: the header is not valid CSV: ${names}`);
  /** @type {Map<string, number>} */
  const seen = new Map();
  /** @type {Array<[number, string]>} */
  const columns = [];
  names.forEach((name, index) => {
    const field = canonicalField(name.trim());
    if (field === undefined) return;
    const earlier = seen.get(field);
    if (earlier !== undefined) {
      throw new InputError(`${path}: header names ${field} twice (columns ${earlier + 1} and ${index + 1}); keep one`);
    }
    seen.set(field, index);
    columns.push([index, field]);
  });
  for (const required of ['endpointArn', 'platform']) {
    if (!seen.has(required)) {
      throw new InputError(`${path}: header has no ${required} column; the first line must name the columns, e.g. endpointArn,platform,userId,locale,timezone`);
    }
  }
  return { width: names.length, columns };
}

/**
 * @param {CsvLayout} layout
 * @param {string} text
 * @param {number} line
 * @returns {AudienceItem}
 */
function parseCsvLine(layout, text, line) {
  const fields = splitCsv(text);
  if (typeof fields === 'string') return { skipped: { line, reason: fields } };
  if (fields.length !== layout.width) {
    return { skipped: { line, reason: `has ${fields.length} field${fields.length === 1 ? '' : 's'}; the header has ${layout.width}` } };
  }
  /** @type {Record<string, string>} */
  const record = {};
  for (const [index, field] of layout.columns) record[field] = /** @type {string} */ (fields[index]);
  return parseDeviceFields(record, line);
}

/**
 * Splits one CSV line into fields (RFC 4180): a field may be quoted, a quoted field may
 * hold commas and doubled quotes. Returns a reason string when the line is malformed.
 * A quoted field cannot continue on the next line: lines are read one at a time, and
 * allowing it would let one stray quote swallow the rest of the file.
 * @param {string} text
 * @returns {string[] | string}
 */
export function splitCsv(text) {
  // Most audience lines have no quotes at all; split is several times faster than the loop.
  if (!text.includes('"')) return text.split(',');
  /** @type {string[]} */
  const fields = [];
  let index = 0;
  for (;;) {
    // Spaces before an opening quote are tolerated (`a, "b,c"`), as hand-written files have them.
    let start = index;
    while (text[start] === ' ' || text[start] === '\t') start += 1;
    if (text[start] === '"') {
      let value = '';
      let position = start + 1;
      for (;;) {
        const quote = text.indexOf('"', position);
        if (quote === -1) return 'has a quoted field that is not closed on this line (quoted fields cannot span lines)';
        value += text.slice(position, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          position = quote + 2;
        } else {
          position = quote + 1;
          break;
        }
      }
      while (text[position] === ' ' || text[position] === '\t') position += 1;
      if (position < text.length && text[position] !== ',') {
        return `has text after the closing quote of field ${fields.length + 1}`;
      }
      fields.push(value);
      if (position >= text.length) return fields;
      index = position + 1;
    } else {
      // An unquoted field ends at the next comma; a quote inside it is taken literally.
      const comma = text.indexOf(',', index);
      if (comma === -1) {
        fields.push(text.slice(index));
        return fields;
      }
      fields.push(text.slice(index, comma));
      index = comma + 1;
    }
  }
}
