// The notification event's JSON Schema (notification-event.schema.json, shipped for
// publishers too) compiled once with Ajv, and its errors turned into one line that a
// person reading a dead-letter header can act on.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** The schema as publishers get it: draft 2020-12. */
export const NOTIFICATION_EVENT_SCHEMA = JSON.parse(readFileSync(new URL('./notification-event.schema.json', import.meta.url), 'utf8'));

// Strict, so a typo in the schema fails at start, except strictRequired: the "exactly
// one of" groups name properties defined beside them, not inside. verbose puts
// parentSchema on each error, where those groups keep the description used below.
// allErrors, because Ajv checks the allOf groups before the properties, and the most
// useful problem (a missing id, an empty userIds) is often not the first it finds.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, verbose: true, allErrors: true });
const validate = ajv.compile(NOTIFICATION_EVENT_SCHEMA);

/**
 * Checks a parsed event body against the schema. Returns null when it conforms, or
 * the first problem as a JSON pointer and a message: `/userIds must NOT have fewer
 * than 1 items`, `must have exactly one of message or template`.
 * @param {unknown} value
 * @returns {string | null}
 */
export function checkEventSchema(value) {
  if (validate(value)) return null;
  const errors = (validate.errors ?? [])
    // Errors inside a oneOf branch ("must have required property 'userIds'") only say
    // why that branch failed; the oneOf error after them says what is wanted. Likewise
    // a propertyNames failure carries an inner error about the name.
    .filter((error) => !error.schemaPath.includes('/oneOf/') && error.propertyName === undefined);
  errors.sort((a, b) => rank(a) - rank(b));
  const error = errors[0];
  if (!error) return 'does not match the notification event schema';
  return describeSchemaError(error);
}

/**
 * Which problem to report when there are several: not an object or a missing field first,
 * then a problem inside a field, then whatever is left (extra fields, the groups).
 * @param {import('ajv/dist/2020.js').ErrorObject} error
 */
function rank(error) {
  if (error.instancePath === '' && error.keyword === 'type') return 0;
  if (error.instancePath === '' && error.keyword === 'required') return 0;
  return error.instancePath === '' ? 2 : 1;
}

/**
 * @param {import('ajv/dist/2020.js').ErrorObject} error
 * @returns {string}
 */
function describeSchemaError(error) {
  const where = error.instancePath === '' ? '' : `${error.instancePath} `;
  const params = /** @type {Record<string, unknown>} */ (error.params);
  if (error.keyword === 'additionalProperties') {
    return `${where}must NOT have additional property "${params.additionalProperty}"`;
  }
  if (error.keyword === 'propertyNames') {
    return `${where}has an invalid name "${params.propertyName}" (letters, digits and _, not starting with a digit)`;
  }
  if (error.keyword === 'oneOf' && typeof error.parentSchema?.description === 'string') {
    // Ajv's own text ("must match exactly one schema in oneOf") says nothing about which fields.
    return `${where}must have ${error.parentSchema.description}`;
  }
  if (error.keyword === 'pattern' && typeof params.pattern === 'string' && params.pattern.length > 40) {
    // Long patterns (the ARN's) help nobody in a header; the schema file has them.
    return `${where}does not have the required format (see notification-event.schema.json)`;
  }
  return `${where}${error.message ?? 'is invalid'}`;
}
