// The SNS Query protocol as @aws-sdk/client-sns v3 speaks it: form-encoded parameters
// in, XML answers in the 2010-03-31 namespace out. Handlers build an Answer and never
// touch XML, so every reply, success or error, is rendered in one place.
import { randomUUID } from 'node:crypto';
import { escapeXml } from '../shared/escape-xml.js';

const XMLNS = 'http://sns.amazonaws.com/doc/2010-03-31/';

/**
 * @typedef {{ status: number, action?: string, resultXml?: string, code?: string, message?: string }} Answer
 *   a success (action, resultXml) or an error (code, message), rendered to XML by sendXml
 * @typedef {{ DataType: string, StringValue?: string, BinaryValue?: string }} MessageAttribute
 */

/** Decodes a form-encoded body or query string into its parameters. @param {string} text @returns {Record<string, string>} */
export function parseForm(text) {
  /** @type {Record<string, string>} */
  const params = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) params[key] = value;
  return params;
}

/** Reads Publish's `MessageAttributes.entry.N.*` parameters into a map. @param {Record<string, string>} params @returns {Record<string, MessageAttribute>} */
export function readMessageAttributes(params) {
  /** @type {Record<string, MessageAttribute>} */
  const attributes = {};
  for (let n = 1; params[`MessageAttributes.entry.${n}.Name`] !== undefined; n++) {
    const prefix = `MessageAttributes.entry.${n}.Value.`;
    /** @type {MessageAttribute} */
    const attribute = { DataType: params[`${prefix}DataType`] ?? '' };
    if (params[`${prefix}StringValue`] !== undefined) attribute.StringValue = params[`${prefix}StringValue`];
    if (params[`${prefix}BinaryValue`] !== undefined) attribute.BinaryValue = params[`${prefix}BinaryValue`];
    attributes[params[`MessageAttributes.entry.${n}.Name`]] = attribute;
  }
  return attributes;
}

/** A successful answer to `action`; resultXml must already be escaped. @param {string} action @param {string} resultXml @returns {Answer} */
export function okAnswer(action, resultXml) {
  return { status: 200, action, resultXml };
}

/** An SNS error answer; the SDK turns `code` into its exception class. @param {string} code @param {string} message @param {number} [status] @returns {Answer} */
export function errorAnswer(code, message, status = 400) {
  return { status, code, message };
}

/** The 400 InvalidParameter answer, SNS's most common refusal. @param {string} message */
export const invalid = (message) => errorAnswer('InvalidParameter', message);

/** Writes an Answer as the XML body SNS would send. @param {import('node:http').ServerResponse} res @param {Answer} answer */
export function sendXml(res, answer) {
  if (res.destroyed) return;
  // The SDK takes $metadata.requestId from the header, as it does from AWS.
  const requestId = randomUUID();
  const metadata = `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata>`;
  // Type is what the SDK reports as $fault: Sender for 4xx, Receiver for 5xx.
  const body = answer.code === undefined
    ? `<${answer.action}Response xmlns="${XMLNS}">${answer.resultXml}${metadata}</${answer.action}Response>`
    : `<ErrorResponse xmlns="${XMLNS}"><Error><Type>${answer.status >= 500 ? 'Receiver' : 'Sender'}</Type>` +
      `<Code>${escapeXml(answer.code)}</Code><Message>${escapeXml(answer.message ?? '')}</Message></Error>` +
      `<RequestId>${requestId}</RequestId></ErrorResponse>`;
  res.writeHead(answer.status, {
    'content-type': 'text/xml',
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': requestId
  });
  res.end(body);
}
