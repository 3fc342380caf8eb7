// Turns an AMQP message body into a notification event that is ready to send, or
// says in one line why it never will be: that line becomes the dead-letter reason
// (x-reason), so each starts with what failed: "invalid JSON:", "schema:",
// "message:", "template ...".
import { PermanentError } from '../errors.js';
import { parseMessage } from '../sns/message.js';
import { checkEventSchema } from './event-schema.js';

/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('./templates.js').TemplateParams} TemplateParams */

/**
 * @typedef {object} NotificationEvent a validated event
 * @property {string} id
 * @property {string} type
 * @property {string} idempotencyKey
 * @property {string[]} [userIds]
 * @property {string[]} [endpointArns]
 * @property {Message} message     given inline, or the template rendered with its params
 * @property {string} [template]
 * @property {number} [expiresAt]  ms since the epoch
 * @property {number} [publishedAt] ms since the epoch
 */

/**
 * Bodies above this are refused before parsing. An event carries at most a 4 KB
 * message and 100 recipients, well under it; anything larger is not an event.
 */
export const MAX_EVENT_BYTES = 64 * 1024;

/**
 * Objects and arrays nested deeper than this are refused after parsing: an event's deepest
 * part (message.data) needs a few levels, and checks that walk the value must not run out
 * of stack on one crafted to be thousands deep.
 */
export const MAX_EVENT_DEPTH = 32;

/**
 * @param {{ templates: { render(name: string, params?: TemplateParams): Promise<Message> } }} deps
 */
export function createEventValidator({ templates }) {
  return {
    /**
     * Parses, checks against the schema and builds the message (inline or from the
     * template). Throws PermanentError whose message is the dead-letter reason.
     * Expiry is not checked here: see expiredReason.
     * @param {Buffer | string} body
     * @returns {Promise<NotificationEvent>}
     */
    async parse(body) {
      const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      if (size > MAX_EVENT_BYTES) throw new PermanentError(`body is ${size} bytes; the limit is ${MAX_EVENT_BYTES}`);
      let input;
      try {
        input = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
      } catch (error) {
        throw new PermanentError(`invalid JSON: ${/** @type {Error} */ (error).message}`, { cause: error });
      }
      const depth = nestingDepth(input, MAX_EVENT_DEPTH);
      if (depth > MAX_EVENT_DEPTH) throw new PermanentError(`too deeply nested: objects and arrays more than ${MAX_EVENT_DEPTH} levels deep`);
      const problem = checkEventSchema(input);
      if (problem !== null) throw new PermanentError(`schema: ${problem}`);

      /** @type {NotificationEvent} */
      const event = { id: input.id, type: input.type, idempotencyKey: input.idempotencyKey, message: /** @type {any} */ (null) };
      if (input.userIds !== undefined) event.userIds = input.userIds;
      if (input.endpointArns !== undefined) event.endpointArns = input.endpointArns;
      if (input.expiresAt !== undefined) event.expiresAt = parseTime(input.expiresAt, 'expiresAt');
      if (input.publishedAt !== undefined) event.publishedAt = parseTime(input.publishedAt, 'publishedAt');
      if (input.template !== undefined) {
        event.template = input.template;
        event.message = await templates.render(input.template, input.params);
      } else {
        try {
          event.message = parseMessage(JSON.stringify(input.message), 'message');
        } catch (error) {
          throw new PermanentError(/** @type {Error} */ (error).message, { cause: error });
        }
      }
      return event;
    }
  };
}

/**
 * The dead-letter reason when the event's expiresAt has passed, else null.
 * Checked when an event arrives and again before its first send.
 * @param {NotificationEvent} event
 * @param {number} now ms since the epoch
 * @returns {string | null}
 */
export function expiredReason(event, now) {
  if (event.expiresAt === undefined || event.expiresAt > now) return null;
  return `expired at ${new Date(event.expiresAt).toISOString()}`;
}

/**
 * @param {string} text matches the schema's ISO 8601 pattern, so only the calendar can be wrong
 * @param {string} field
 */
function parseTime(text, field) {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new PermanentError(`schema: /${field} is not a valid time: "${text}"`);
  return ms;
}

/**
 * The nesting depth of a parsed JSON value (a scalar is 0, `{}` and `[]` are 1), walked
 * without recursion; stops counting once past `limit`.
 * @param {unknown} value
 * @param {number} limit
 */
export function nestingDepth(value, limit) {
  let deepest = 0;
  /** @type {Array<[unknown, number]>} */
  const stack = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = /** @type {[unknown, number]} */ (stack.pop());
    if (v === null || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}
