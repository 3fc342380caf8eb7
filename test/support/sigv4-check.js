// An independent check of an AWS Signature Version 4 header, written from AWS's
// published algorithm with node:crypto only (not @smithy/signature-v4, which both
// publish paths use): what SNS itself does with a request before it reads it.
import { createHash, createHmac } from 'node:crypto';

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/** @param {string | Buffer} text */
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
/** @param {string | Buffer} key @param {string} text */
const hmac = (key, text) => createHmac('sha256', key).update(text).digest();

/**
 * Recomputes the signature of a received request and says what it found.
 * @param {import('./sns-proxy.js').SeenRequest} request as it arrived
 * @param {(accessKeyId: string) => string} secretFor the secret key of an access key id
 * @returns {{ valid: boolean, accessKeyId: string, region: string, service: string, signedHeaders: string[] }}
 */
export function checkSigV4(request, secretFor) {
  const match = AUTHORIZATION.exec(String(request.headers.authorization));
  if (!match) throw new Error(`not a SigV4 Authorization header: ${request.headers.authorization}`);
  const [, accessKeyId, day, region, service, signedList, signature] = match;
  const amzDate = String(request.headers['x-amz-date']);
  const signedHeaders = signedList.split(';');
  const [path, query = ''] = request.url.split('?');
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${String(request.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [request.method, path, query, canonicalHeaders, signedList, sha256(request.body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${secretFor(accessKeyId)}`, day);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
  return { valid: expected === signature && amzDate.startsWith(day), accessKeyId, region, service, signedHeaders };
}
