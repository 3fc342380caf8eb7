// The CSV audience reader built on csv-parse, kept as the benchmark's other candidate to
// shared/audience/csv-source.js (issue 13.6 chose between them by bench/enqueue.js; see
// bench/RESULTS.md). Same export, same items: bench/csv-parser-hook.js puts it in the
// place of csv-source.js inside a measured pushctl.
import { parse } from 'csv-parse';
import { InputError } from '../shared/errors.js';
import { csvRecordItem, readCsvHeader } from '../shared/audience/csv-layout.js';
import { MAX_RECORD_CHARS } from '../shared/audience/csv-source.js';

/** @typedef {import('../shared/types.js').AudienceItem} AudienceItem */

/**
 * Reads a CSV audience from text chunks with csv-parse; yields what readCsvAudience in
 * shared/audience/csv-source.js yields.
 * @param {AsyncIterable<string>} chunks
 * @param {string} path
 * @returns {AsyncGenerator<AudienceItem>}
 */
export async function* readCsvAudience(chunks, path) {
  // The header is read here, not by csv-parse: its delimiter must be known before the parser is made.
  let head = '';
  let line = 0;
  /** @type {import('../shared/audience/csv-layout.js').CsvLayout | undefined} */
  let layout;
  const iterator = chunks[Symbol.asyncIterator]();
  while (layout === undefined) {
    const newline = head.indexOf('\n');
    if (newline === -1) {
      const next = await iterator.next();
      if (next.done) {
        if (head.trim() === '') break;
        head += '\n';
        continue;
      }
      head += next.value;
      continue;
    }
    line += 1;
    const text = head.slice(0, newline).replace(/\r$/, '');
    head = head.slice(newline + 1);
    if (text.trim() !== '') layout = readCsvHeader(path, text, line);
  }
  if (layout === undefined) {
    throw new InputError(`${path}: the file is empty; a CSV audience needs a header line with endpointArn and platform columns`);
  }

  const found = layout;
  /** @type {Array<AudienceItem | InputError>} */
  const out = [];
  /** @type {unknown} */
  let failure;
  // csv-parse's `lines` is the line a record ends on (counting from its first write, so
  // offset by the header's); a record starts as many lines earlier as its fields hold breaks.
  const offset = line;
  /** @param {string[]} record @param {number} lines */
  const place = (record, lines) => {
    let breaks = 0;
    for (const field of record) for (let at = field.indexOf('\n'); at !== -1; at = field.indexOf('\n', at + 1)) breaks += 1;
    const end = offset + lines;
    return { start: end - breaks, end };
  };
  const parser = parse(/** @type {import('csv-parse').Options} */ (/** @type {unknown} */ ({
    delimiter: found.delimiter,
    // A quote inside a field is taken literally, as the hand parser takes it inside an unquoted one:
    // after a record error csv-parse cannot tell a record's end from a quoted line break,
    // and skip_records_with_error then reads the rest of the file as one field.
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_CHARS,
    on_record: (/** @type {string[]} */ record, /** @type {{ lines: number }} */ context) => {
      const { start, end } = place(record, context.lines);
      if (!(record.length === 1 && record[0].trim() === '')) out.push(csvRecordItem(found, record, start, end));
      return null;
    },
    on_skip: (/** @type {import('csv-parse').CsvError | undefined} */ error) => {
      const start = offset + (/** @type {{ lines?: number }} */ (error ?? {}).lines ?? 0);
      if (error?.code === 'CSV_QUOTE_NOT_CLOSED' || error?.code === 'CSV_MAX_RECORD_SIZE') {
        out.push(new InputError(`${path} line ${start}: a quoted field opens here and is not closed ` +
          `${error.code === 'CSV_QUOTE_NOT_CLOSED' ? 'before the end of the file' : `within ${MAX_RECORD_CHARS} characters`}; ` +
          'close it, or write a quote that is part of a field as two ("")'));
      } else {
        out.push({ skipped: { line: start, reason: error?.message ?? 'is not valid CSV' } });
      }
      return undefined;
    }
  })));
  parser.on('error', (error) => { failure = error; });

  /** @returns {Generator<AudienceItem>} */
  function* drain() {
    if (failure !== undefined) throw failure;
    for (const item of out) {
      if (item instanceof InputError) throw item;
      yield item;
    }
    out.length = 0;
  }

  if (head !== '') parser.write(head);
  yield* drain();
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    parser.write(next.value);
    yield* drain();
  }
  await new Promise((resolve) => parser.end(resolve));
  yield* drain();
}
