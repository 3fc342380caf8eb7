// The CSV audience reader (RFC 4180): a header naming the columns, then one record per
// line, except that a quoted field may hold line breaks and so carry its record over
// several lines. Records are reported by the line they start on, counting every line
// of the file, so the lines after a multi-line record keep their true numbers.
import { InputError } from '../errors.js';
import { csvRecordItem, csvSkip, readCsvHeader, scanCsv } from './csv-layout.js';
import { lineBatches, MAX_LINE_CHARS } from './line-splitter.js';

/** @typedef {import('../types.js').AudienceItem} AudienceItem */
/** @typedef {import('./csv-layout.js').CsvLayout} CsvLayout */

/**
 * The longest record a quoted field may carry over several lines. Audience fields are
 * short, so a record this long is an unclosed quote, which would otherwise take the
 * rest of the file into one field: at a million lines, a silent loss of every device
 * after it and a hundred megabytes held in one string.
 */
export const MAX_RECORD_CHARS = MAX_LINE_CHARS;

/**
 * A record whose quoted field is still open at the end of a line.
 * @typedef {{ fields: string[], value: string, line: number, quoteLine: number, chars: number }} OpenRecord
 */

/**
 * Reads a CSV audience from text chunks and yields one item per record, in order.
 * Throws InputError for a missing or unusable header (before yielding anything), and
 * for a quote that is not closed within MAX_RECORD_CHARS or by the end of the file,
 * naming the line where it opened: nothing after it could be trusted.
 * @param {AsyncIterable<string>} chunks
 * @param {string} path named in errors
 * @returns {AsyncGenerator<AudienceItem>}
 */
export async function* readCsvAudience(chunks, path) {
  /** @type {CsvLayout | undefined} */
  let layout;
  /** @type {OpenRecord | undefined} */
  let open;
  let line = 0;

  /**
   * @param {string | null} text a line, null when it was too long to keep
   * @returns {AudienceItem | undefined}
   */
  function take(text) {
    line += 1;
    if (open !== undefined) return text === null ? runaway(path, open, `within ${MAX_RECORD_CHARS} characters`) : resume(open, text);
    if (text === null) return { skipped: { line, reason: `is longer than ${MAX_LINE_CHARS} characters` } };
    if (text.length === 0 || text.trim() === '') return undefined;
    if (layout === undefined) {
      layout = readCsvHeader(path, text, line);
      return undefined;
    }
    // Most audience lines have no quotes at all; split is several times faster than the scan.
    if (!text.includes('"')) return csvRecordItem(layout, text.split(layout.delimiter), line, line);
    /** @type {string[]} */
    const fields = [];
    const result = scanCsv(text, layout.delimiter, fields, 0, undefined);
    return settle(result, fields, line, line, text.length);
  }

  /**
   * Continues a record left open by an earlier line.
   * @param {OpenRecord} record
   * @param {string} text
   */
  function resume(record, text) {
    const before = record.fields.length;
    const result = scanCsv(text, /** @type {CsvLayout} */ (layout).delimiter, record.fields, 0, record.value);
    open = undefined;
    // The same field still open keeps the line its quote opened on; a new one opened on this line.
    return settle(result, record.fields, record.line, record.fields.length === before ? record.quoteLine : line, record.chars + text.length);
  }

  /**
   * What a scan came to: an item, or (a quoted field still open) nothing yet.
   * @param {ReturnType<typeof scanCsv>} result
   * @param {string[]} fields
   * @param {number} start the line the record started on
   * @param {number} quoteLine the line the open quoted field (if any) opened on
   * @param {number} chars the record's length so far
   * @returns {AudienceItem | undefined}
   */
  function settle(result, fields, start, quoteLine, chars) {
    if (typeof result === 'string') return csvSkip(result, start, line);
    if (Array.isArray(result)) return csvRecordItem(/** @type {CsvLayout} */ (layout), result, start, line);
    // The line break is part of the field (RFC 4180); a CRLF in the file is read as \n.
    open = { fields, value: `${result.open}\n`, line: start, quoteLine, chars: chars + 1 };
    if (open.chars > MAX_RECORD_CHARS) runaway(path, open, `within ${MAX_RECORD_CHARS} characters`);
    return undefined;
  }

  for await (const lines of lineBatches(chunks)) {
    for (const text of lines) {
      const item = take(text);
      if (item !== undefined) yield item;
    }
  }
  if (open !== undefined) runaway(path, open, 'before the end of the file');
  if (layout === undefined) {
    throw new InputError(`${path}: the file is empty; a CSV audience needs a header line with endpointArn and platform columns`);
  }
}

/**
 * @param {string} path
 * @param {OpenRecord} record
 * @param {string} where
 * @returns {never}
 */
function runaway(path, record, where) {
  throw new InputError(`${path} line ${record.quoteLine}: a quoted field opens here and is not closed ${where}; ` +
    'close it, or write a quote that is part of a field as two ("")');
}
