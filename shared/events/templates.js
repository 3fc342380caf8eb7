// Message templates for events: JSON message files in TEMPLATES_DIR whose strings may
// hold {{name}} placeholders, filled from an event's params. The result is a message
// like any campaign's, validated by parseMessage (4 KB limit included) after filling,
// because only then is its size known.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PermanentError } from '../errors.js';
import { parseMessage } from '../sns/message.js';

/** @typedef {import('../types.js').Message} Message */
/** @typedef {Record<string, string | number | boolean>} TemplateParams */

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
// The schema allows only these names, so a name can never climb out of the directory;
// checked again here because the store is also used without the schema.
const TEMPLATE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/**
 * Templates read from `directory` (relative to the working directory) on first use
 * and kept: they ship with a deploy, and a deploy restarts the process.
 * @param {string} directory
 */
export function createTemplateStore(directory) {
  const root = resolve(directory);
  /** @type {Map<string, unknown>} */
  const loaded = new Map();

  /** @param {string} name */
  async function load(name) {
    if (loaded.has(name)) return loaded.get(name);
    if (!TEMPLATE_NAME.test(name)) throw new PermanentError(`template "${name}" is not a valid template name`);
    let text;
    try {
      text = await readFile(join(root, `${name}.json`), 'utf8');
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code === 'ENOENT') {
        // Not cached: a later deploy may add it, and unknown names must not grow memory.
        throw new PermanentError(`template "${name}" does not exist (no ${name}.json in ${directory})`, { cause: error });
      }
      throw error; // EACCES, EMFILE...: the process's problem, not the event's; retried
    }
    let template;
    try {
      template = JSON.parse(text);
    } catch (error) {
      throw new PermanentError(`template "${name}": ${name}.json is not valid JSON (${/** @type {Error} */ (error).message})`, { cause: error });
    }
    if (template === null || typeof template !== 'object' || Array.isArray(template)) {
      throw new PermanentError(`template "${name}": ${name}.json must be a JSON object with at least "title" and "body"`);
    }
    loaded.set(name, template);
    return template;
  }

  return {
    /**
     * The message of template `name` with its placeholders filled from `params`.
     * Throws PermanentError for an unknown template, a missing param or a message
     * that is invalid once filled (too large, say).
     * @param {string} name
     * @param {TemplateParams} [params]
     * @returns {Promise<Message>}
     */
    async render(name, params = {}) {
      const template = await load(name);
      const filled = fillPlaceholders(template, params, `template "${name}"`);
      try {
        return parseMessage(JSON.stringify(filled), `template "${name}"`);
      } catch (error) {
        throw new PermanentError(/** @type {Error} */ (error).message, { cause: error });
      }
    }
  };
}

/**
 * A copy of `value` with {{name}} in every string replaced by String(params[name]).
 * Only string values are filled, never keys, and the result stays a parsed object,
 * so a param holding quotes or braces cannot change the message's structure.
 * Every placeholder without a param is reported at once.
 * @template T
 * @param {T} value
 * @param {TemplateParams} params
 * @param {string} [source] prefix of the error message
 * @returns {T}
 */
export function fillPlaceholders(value, params, source = 'template') {
  /** @type {Set<string>} */
  const missing = new Set();
  /** @param {unknown} node @returns {unknown} */
  const fill = (node) => {
    if (typeof node === 'string') {
      return node.replace(PLACEHOLDER, (whole, name) => {
        if (!Object.hasOwn(params, name)) {
          missing.add(name);
          return whole;
        }
        return String(params[name]);
      });
    }
    if (Array.isArray(node)) return node.map(fill);
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, fill(child)]));
    }
    return node;
  };
  const filled = fill(value);
  if (missing.size > 0) {
    const names = [...missing].map((name) => `"${name}"`).join(', ');
    throw new PermanentError(`${source}: missing param${missing.size > 1 ? 's' : ''} ${names}`);
  }
  return /** @type {T} */ (filled);
}
