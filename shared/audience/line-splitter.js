// Splits streamed text into lines, for the audience file readers. Lines are split here
// rather than by node:readline, which takes twice as long: at a million lines the
// difference is most of a second.

/** No audience line is anywhere near this long (see createLineSplitter). */
export const MAX_LINE_CHARS = 1 << 20;

/**
 * A splitter fed one chunk at a time. Each push returns the lines the chunk completed,
 * without their line break (a CRLF's \r belongs to the break, not to the last field);
 * `end` returns the last line when the text does not end with a break. A line longer
 * than MAX_LINE_CHARS is returned as null and not buffered: a file without line breaks
 * (a binary, a minified JSON array) must not be held whole while looking for one.
 */
export function createLineSplitter() {
  let rest = '';
  let overlong = false;
  return {
    /**
     * @param {string} chunk
     * @returns {Array<string | null>}
     */
    push(chunk) {
      const text = rest === '' ? chunk : rest + chunk;
      /** @type {Array<string | null>} */
      const lines = [];
      let start = 0;
      let newline;
      while ((newline = text.indexOf('\n', start)) !== -1) {
        if (overlong) {
          overlong = false;
          lines.push(null);
        } else {
          const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
          lines.push(text.slice(start, end));
        }
        start = newline + 1;
      }
      rest = text.slice(start);
      if (rest.length > MAX_LINE_CHARS) {
        overlong = true;
        rest = '';
      }
      return lines;
    },
    /** @returns {Array<string | null>} */
    end() {
      if (overlong) return [null];
      if (rest === '') return [];
      return [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
    }
  };
}

/**
 * The lines of streamed text, as createLineSplitter splits them, one chunk's worth at a time
 * (a batch, not a line per await: a million awaits cost most of a second).
 * @param {AsyncIterable<string>} chunks
 * @returns {AsyncGenerator<Array<string | null>>}
 */
export async function* lineBatches(chunks) {
  const splitter = createLineSplitter();
  for await (const chunk of chunks) yield splitter.push(chunk);
  yield splitter.end();
}
