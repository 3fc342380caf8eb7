// SNS Publish in the AWS Query protocol, by hand: the form-encoded request body and
// the small XML answer. This is what @aws-sdk/client-sns puts on the wire for a
// PublishCommand (the contract suite compares the bodies byte for byte), without the
// middleware stack, the schema walk and the generic XML parser around it.

/**
 * @typedef {{ DataType: string, StringValue: string }} StringAttribute
 * @typedef {{ targetArn: string, message: string, attributes?: Record<string, StringAttribute> }} PublishSend
 * @typedef {{ status: number, messageId?: string, code?: string, message?: string, type?: string }} PublishAnswer
 */

// The SDK's encoding (extendedEncodeURIComponent): RFC 3986, so !'()* are escaped too,
// which SigV4 needs the signed body to agree with byte for byte anyway.
const RFC3986_EXTRA = /[!'()*]/g;
/** @param {string} text */
function encode(text) {
  return encodeURIComponent(text).replace(RFC3986_EXTRA, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The form body of one Publish to a platform endpoint, parameters in the order the SDK
 * writes them (Action, Version, then the members of PublishInput as its schema lists them).
 * @param {PublishSend} send
 * @returns {string}
 */
export function publishBody({ targetArn, message, attributes }) {
  let body = `Action=Publish&Version=2010-03-31&Message=${encode(message)}&TargetArn=${encode(targetArn)}&MessageStructure=json`;
  if (attributes) {
    let n = 0;
    for (const name of Object.keys(attributes)) {
      const { DataType, StringValue } = attributes[name];
      n++;
      body += `&MessageAttributes.entry.${n}.Name=${encode(name)}&MessageAttributes.entry.${n}.Value.DataType=${encode(DataType)}` +
        `&MessageAttributes.entry.${n}.Value.StringValue=${encode(StringValue)}`;
    }
  }
  return body;
}

const XML_ENTITY = /&(?:#x([0-9a-fA-F]+)|#(\d+)|(lt|gt|amp|quot|apos));/g;
/** @type {Record<string, string>} */
const NAMED = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** @param {string} text */
function unescapeXml(text) {
  if (!text.includes('&')) return text;
  return text.replace(XML_ENTITY, (_, hex, dec, name) =>
    name ? NAMED[name] : String.fromCodePoint(hex ? parseInt(hex, 16) : Number(dec)));
}

/** The text of the first <tag>...</tag>, unescaped, or undefined. @param {string} xml @param {string} tag */
function element(xml, tag) {
  const open = xml.indexOf(`<${tag}>`);
  if (open === -1) return undefined;
  const start = open + tag.length + 2;
  const end = xml.indexOf(`</${tag}>`, start);
  return end === -1 ? undefined : unescapeXml(xml.slice(start, end));
}

/**
 * Reads SNS's answer to a Publish: a MessageId on 2xx, else the error's Code, Message
 * and Type (Sender or Receiver). An answer that is not SNS XML at all (a proxy's 502
 * page) keeps its status and gets no code, which is classified by status alone.
 * @param {number} status
 * @param {string} xml
 * @returns {PublishAnswer}
 */
export function readPublishAnswer(status, xml) {
  if (status >= 200 && status < 300) return { status, messageId: element(xml, 'MessageId') };
  return { status, code: element(xml, 'Code'), message: element(xml, 'Message'), type: element(xml, 'Type') };
}
