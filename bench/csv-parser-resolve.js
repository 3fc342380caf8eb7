// The module resolve hook bench/csv-parser-hook.js registers: csv-source.js → csv-parse-source.js.
const CANDIDATE = new URL('./csv-parse-source.js', import.meta.url).href;

/**
 * @param {string} specifier
 * @param {object} context
 * @param {(specifier: string, context: object) => Promise<{ url: string }>} nextResolve
 */
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  // Only the reader's own import is swapped; the candidate still imports MAX_RECORD_CHARS from the original.
  const parent = /** @type {{ parentURL?: string }} */ (context).parentURL ?? '';
  if (resolved.url.endsWith('/shared/audience/csv-source.js') && parent.endsWith('/shared/audience/file-source.js')) {
    return { ...resolved, url: CANDIDATE };
  }
  return resolved;
}
