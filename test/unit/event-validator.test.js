// Notification event validation: each way an event can be poison gives the one-line
// reason that becomes its dead-letter x-reason header.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PermanentError } from '../../shared/errors.js';
import { checkEventSchema, NOTIFICATION_EVENT_SCHEMA } from '../../shared/events/event-schema.js';
import { createEventValidator, expiredReason, MAX_EVENT_BYTES, MAX_EVENT_DEPTH, nestingDepth } from '../../shared/events/event-validator.js';
import { createTemplateStore } from '../../shared/events/templates.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const validator = createEventValidator({ templates: createTemplateStore(`${ROOT}templates`) });
const ARN = 'arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/my-app/0b1d2c3e-0000-4000-a000-000000000001';
const message = { title: 'Your order shipped', body: 'It arrives tomorrow' };
const valid = { id: 'evt-1', type: 'order.shipped', idempotencyKey: 'order-42-shipped', userIds: ['u1'], message };

/**
 * Asserts that parsing `body` fails with PermanentError and exactly `reason` (or matching it).
 * @param {unknown} body an object is sent as JSON, a string as it is
 * @param {string | RegExp} reason
 */
async function rejects(body, reason) {
  await assert.rejects(validator.parse(typeof body === 'string' ? body : JSON.stringify(body)), (error) => {
    assert.ok(error instanceof PermanentError, String(error));
    assert.equal(error.code, 'PUSH_ERR_PERMANENT');
    if (typeof reason === 'string') assert.equal(error.message, reason);
    else assert.match(error.message, reason);
    return true;
  });
}

describe('event validator', () => {
  it('accepts an event by userIds with an inline message, and validates the message in full', async () => {
    const event = await validator.parse(Buffer.from(JSON.stringify({ ...valid, publishedAt: '2026-11-22T10:00:00.250Z' })));
    assert.deepEqual(event, { id: 'evt-1', type: 'order.shipped', idempotencyKey: 'order-42-shipped', userIds: ['u1'], message, publishedAt: Date.parse('2026-11-22T10:00:00.250Z') });
  });

  it('accepts an event by endpointArns with a template, rendering it with the params', async () => {
    const event = await validator.parse(JSON.stringify({
      id: 'evt-2', type: 'list.shared', idempotencyKey: 'k2', endpointArns: [ARN],
      template: 'list-shared', params: { sharerName: 'Ann', listName: 'Weekend', listId: 7 }, expiresAt: '2030-01-01T00:00:00+02:00'
    }));
    assert.deepEqual(event.endpointArns, [ARN]);
    assert.equal(event.template, 'list-shared');
    assert.equal(event.message.body, 'Ann shared "Weekend" with you');
    assert.equal(event.message.locales?.fi?.body, 'Ann jakoi listan "Weekend" kanssasi');
    assert.equal(event.message.deepLink, 'myapp://lists/7');
    assert.equal(event.expiresAt, Date.parse('2029-12-31T22:00:00Z'));
  });

  it('says "invalid JSON" for a body that is not JSON', async () => {
    await rejects('{"id": 1,', /^invalid JSON: /);
    await rejects('', /^invalid JSON: Unexpected end of JSON input/);
  });

  it('refuses a body larger than any event before parsing it', async () => {
    await rejects('x'.repeat(MAX_EVENT_BYTES + 1), `body is ${MAX_EVENT_BYTES + 1} bytes; the limit is ${MAX_EVENT_BYTES}`);
  });

  it('refuses a deeply nested event with its own reason, not a stack overflow', async () => {
    const deep = (/** @type {number} */ n) => `${'['.repeat(n)}${']'.repeat(n)}`;
    // Under an unknown message field: the walk that once ran out of stack.
    const body = (/** @type {number} */ n) => `{"id":"e1","type":"x","idempotencyKey":"k","userIds":["u1"],"message":{"title":"t","body":"b","x":${deep(n)}}}`;
    await rejects(body(10_000), `too deeply nested: objects and arrays more than ${MAX_EVENT_DEPTH} levels deep`);
    await rejects(body(MAX_EVENT_DEPTH - 1), `too deeply nested: objects and arrays more than ${MAX_EVENT_DEPTH} levels deep`);
    await rejects(body(MAX_EVENT_DEPTH - 2), /^message: unknown field "x"/);
    assert.equal(nestingDepth({ a: [1, { b: [] }] }, 10), 4);
    assert.equal(nestingDepth('x', 10), 0);
  });

  it('names the field of a schema violation, one problem at a time', async () => {
    /** @type {[Record<string, unknown> | unknown[], string][]} */
    const cases = [
      [[], 'schema: must be object'],
      [{ ...valid, id: undefined }, "schema: must have required property 'id'"],
      [{ ...valid, idempotencyKey: undefined }, "schema: must have required property 'idempotencyKey'"],
      [{ ...valid, userIds: [] }, 'schema: /userIds must NOT have fewer than 1 items'],
      [{ ...valid, userIds: ['u1', 'u1'] }, 'schema: /userIds must NOT have duplicate items (items ## 1 and 0 are identical)'],
      [{ ...valid, userIds: Array.from({ length: 101 }, (_, i) => `u${i}`) }, 'schema: /userIds must NOT have more than 100 items'],
      [{ ...valid, userIds: [42] }, 'schema: /userIds/0 must be string'],
      [{ ...valid, userIds: undefined }, 'schema: must have exactly one of userIds or endpointArns'],
      [{ ...valid, endpointArns: [ARN] }, 'schema: must have exactly one of userIds or endpointArns'],
      [{ ...valid, userIds: undefined, endpointArns: ['arn:aws:sns:eu-west-1:123456789012:app/GCM/x'] },
        'schema: /endpointArns/0 does not have the required format (see notification-event.schema.json)'],
      [{ ...valid, message: undefined }, 'schema: must have exactly one of message or template'],
      [{ ...valid, template: 'list-shared' }, 'schema: must have exactly one of message or template'],
      [{ ...valid, params: { a: '1' } }, 'schema: must have property template when property params is present'],
      [{ ...valid, message: undefined, template: '../config/index' }, 'schema: /template must match pattern "^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$"'],
      [{ ...valid, message: undefined, template: 'list-shared', params: { 'bad name': 'x' } },
        'schema: /params has an invalid name "bad name" (letters, digits and _, not starting with a digit)'],
      [{ ...valid, message: undefined, template: 'list-shared', params: { listName: { nested: true } } }, 'schema: /params/listName must be string,number,boolean'],
      [{ ...valid, message: { body: 'no title' } }, "schema: /message must have required property 'title'"],
      [{ ...valid, expiresAt: 'tomorrow' }, 'schema: /expiresAt does not have the required format (see notification-event.schema.json)'],
      [{ ...valid, titel: 'typo' }, 'schema: must NOT have additional property "titel"'],
      [{ ...valid, type: 'has spaces' }, 'schema: /type must match pattern "^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"']
    ];
    for (const [event, reason] of cases) await rejects(event, reason);
  });

  it('rejects a time that matches the pattern but is not on the calendar', async () => {
    await rejects({ ...valid, expiresAt: '2026-13-01T00:00:00Z' }, 'schema: /expiresAt is not a valid time: "2026-13-01T00:00:00Z"');
  });

  it('checks an inline message with the campaign rules, the 4 KB payload limit included', async () => {
    await rejects({ ...valid, message: { ...message, body: 'x'.repeat(5000) } },
      /^message: the APNS payload for the default locale is 50\d\d bytes; the limit is 4096 \(shorten the title, body or data\)$/);
    await rejects({ ...valid, message: { ...message, subtitle: 'no' } }, /^message: unknown field "subtitle"/);
    await rejects({ ...valid, message: { ...message, data: { aps: 'x' } } }, 'message: data.aps is a reserved key on APNs or FCM; choose another name');
  });

  it('reports an unknown template and a missing param', async () => {
    const base = { ...valid, message: undefined };
    await rejects({ ...base, template: 'nope' }, /^template "nope" does not exist \(no nope\.json in .*templates\)$/);
    await rejects({ ...base, template: 'list-shared', params: { sharerName: 'A', listId: 1 } }, 'template "list-shared": missing param "listName"');
    await rejects({ ...base, template: 'list-shared' }, 'template "list-shared": missing params "sharerName", "listName", "listId"');
  });

  it('says when an event has expired', () => {
    const expiresAt = Date.parse('2026-11-22T10:00:00Z');
    assert.equal(expiredReason({ ...valid, expiresAt }, expiresAt - 1), null);
    assert.equal(expiredReason({ ...valid, expiresAt }, expiresAt), 'expired at 2026-11-22T10:00:00.000Z');
    assert.equal(expiredReason(valid, Date.now()), null, 'no expiresAt never expires');
  });

  it('ships a draft 2020-12 schema that describes every field', () => {
    assert.equal(NOTIFICATION_EVENT_SCHEMA.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.deepEqual(Object.keys(NOTIFICATION_EVENT_SCHEMA.properties).sort(),
      ['endpointArns', 'expiresAt', 'id', 'idempotencyKey', 'message', 'params', 'publishedAt', 'template', 'type', 'userIds']);
    assert.equal(checkEventSchema(valid), null);
  });
});
