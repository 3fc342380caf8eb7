// The CSV header of an audience file: which character separates the fields, and
// which column holds which Device field. Shared by the record splitter and by the
// benchmark's csv-parse candidate, so both read a header the same way.
import { InputError } from '../errors.js';
import { canonicalField, parseDeviceFields } from './device.js';

/** @typedef {import('../types.js').AudienceItem} AudienceItem */

/**
 * Where the fields are and which Device field each useful column holds.
 * @typedef {{ delimiter: string, width: number, columns: Array<[number, string]> }} CsvLayout
 */

// The delimiters spreadsheets write: "," (RFC 4180), ";" (Excel where "," is the decimal
// mark, much of Europe) and tab (copied out of a sheet, .tsv exports).
const DELIMITERS = [',', ';', '\t'];

/**
 * Reads the header line and picks the delimiter: the one whose split names both
 * endpointArn and platform (so a header cannot fit two of them by accident). Names are
 * trimmed and matched without case; unknown columns are allowed and ignored.
 * @param {string} path
 * @param {string} text the header line, without its line break
 * @param {number} line
 * @returns {CsvLayout}
 */
export function readCsvHeader(path, text, line) {
  /** @type {{ delimiter: string, fields: Array<string | undefined> } | undefined} */
  let best;
  let bestScore = -1;
  /** @type {string | undefined} */
  let malformed;
  for (const delimiter of DELIMITERS) {
    const names = splitCsv(text, delimiter);
    if (typeof names === 'string') {
      malformed ??= names;
      continue;
    }
    const fields = names.map((name) => canonicalField(name.trim()));
    // Both required columns first; then, for the message, the split that finds more.
    const score = (fields.includes('endpointArn') ? 2000 : 0) + (fields.includes('platform') ? 1000 : 0) + fields.length;
    if (score > bestScore) {
      best = { delimiter, fields };
      bestScore = score;
    }
  }
  if (best === undefined) throw new InputError(`${path} line ${line}: the header is not valid CSV: ${malformed}`);

  /** @type {Map<string, number>} */
  const seen = new Map();
  /** @type {Array<[number, string]>} */
  const columns = [];
  best.fields.forEach((field, index) => {
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
      throw new InputError(`${path}: header has no ${required} column; the first line must name the columns, ` +
        'separated by ",", ";" or tab, e.g. endpointArn,platform,userId,locale,timezone');
    }
  }
  return { delimiter: best.delimiter, width: best.fields.length, columns };
}

/**
 * Turns one record's fields into an item. `line` is the line the record starts on;
 * `endLine` the line it ends on, which differs only when a quoted field holds a line
 * break, and is then named in a skip reason, since the user looks for it by line.
 * @param {CsvLayout} layout
 * @param {string[]} fields
 * @param {number} line
 * @param {number} endLine
 * @returns {AudienceItem}
 */
export function csvRecordItem(layout, fields, line, endLine) {
  /** @type {AudienceItem} */
  let item;
  if (fields.length !== layout.width) {
    item = { skipped: { line, reason: `has ${fields.length} field${fields.length === 1 ? '' : 's'}; the header has ${layout.width}` } };
  } else {
    /** @type {Record<string, string>} */
    const record = {};
    for (const [index, field] of layout.columns) record[field] = /** @type {string} */ (fields[index]);
    item = parseDeviceFields(record, line);
  }
  return endLine === line || !('skipped' in item) ? item : csvSkip(item.skipped.reason, line, endLine);
}

/**
 * A skipped record, naming its span when it has one.
 * @param {string} reason
 * @param {number} line
 * @param {number} endLine
 * @returns {AudienceItem}
 */
export function csvSkip(reason, line, endLine) {
  return { skipped: { line, reason: endLine === line ? reason : `${reason} (a quoted field holds a line break: the record spans lines ${line}-${endLine})` } };
}

/**
 * Splits one line into fields (RFC 4180): a field may be quoted, and a quoted field may
 * hold delimiters and doubled quotes. Returns a reason string when the line is
 * malformed, or when a quoted field is still open at its end (a header, which this
 * reads, cannot span lines).
 * @param {string} text
 * @param {string} [delimiter]
 * @returns {string[] | string}
 */
export function splitCsv(text, delimiter = ',') {
  const fields = scanCsv(text, delimiter, [], 0, undefined);
  if (typeof fields === 'object' && !Array.isArray(fields)) return 'has a quoted field that is not closed on this line';
  return fields;
}

/**
 * The scanner under splitCsv and the record splitter. It appends to `fields` from
 * `index` on; `open` is the text so far of a quoted field that an earlier line left
 * open, to be continued from the start of this one. Returns the fields when the
 * record ends on this line, a reason string when it is malformed, or `{ open }`
 * (the quoted field's text so far) when a quoted field is still open at the end.
 * @param {string} text
 * @param {string} delimiter
 * @param {string[]} fields
 * @param {number} index
 * @param {string | undefined} open
 * @returns {string[] | string | { open: string }}
 */
export function scanCsv(text, delimiter, fields, index, open) {
  // Spaces (and tabs, unless tab is the delimiter) are tolerated around a quoted field
  // (`a, "b,c"`), as hand-written files have them.
  const tabIsBlank = delimiter !== '\t';
  let value = open;
  let position = index;
  for (;;) {
    if (value === undefined) {
      let start = position;
      while (text[start] === ' ' || (tabIsBlank && text[start] === '\t')) start += 1;
      if (text[start] !== '"') {
        // An unquoted field ends at the next delimiter; a quote inside it is taken literally.
        const next = text.indexOf(delimiter, position);
        if (next === -1) {
          fields.push(text.slice(position));
          return fields;
        }
        fields.push(text.slice(position, next));
        position = next + 1;
        continue;
      }
      value = '';
      position = start + 1;
    }
    const quote = text.indexOf('"', position);
    if (quote === -1) return { open: value + text.slice(position) };
    value += text.slice(position, quote);
    if (text[quote + 1] === '"') {
      value += '"';
      position = quote + 2;
      continue;
    }
    position = quote + 1;
    while (text[position] === ' ' || (tabIsBlank && text[position] === '\t')) position += 1;
    if (position < text.length && text[position] !== delimiter) {
      return `has text after the closing quote of field ${fields.length + 1}`;
    }
    fields.push(value);
    value = undefined;
    if (position >= text.length) return fields;
    position += 1;
  }
}
