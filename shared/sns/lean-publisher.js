// The lean Publish path (SNS_CLIENT=lean, issue #16): the Query-protocol request built
// here (publish-query.js), signed by the SDK's own SigV4 signer with credentials from
// the SDK's default provider chain, and sent over an undici keep-alive pool. It skips
// the SDK's middleware stack, which cost about 0.2 ms of CPU per send (docs/sns-publish.md);
// everything but Publish, and the decisions (endpoint, credentials, signing), stay the SDK's.
import { Pool } from 'undici';
import { SignatureV4 } from '@smithy/signature-v4';
import { HttpRequest } from '@smithy/core/protocols';
import { Sha256 } from '@smithy/core/checksum';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { publishBody, readPublishAnswer } from './publish-query.js';

/**
 * @typedef {import('./sns-endpoint.js').SnsEndpoint} SnsEndpoint
 * @typedef {import('./publish-query.js').PublishSend} PublishSend
 * @typedef {import('./publish-query.js').PublishAnswer} PublishAnswer
 * @typedef {{ accessKeyId: string, secretAccessKey: string, sessionToken?: string, expiration?: Date }} Credentials
 * @typedef {() => Promise<Credentials>} CredentialProvider
 */

// As the SDK does (credentialsTreatedAsExpired, memoizeIdentityProvider): credentials with
// less than 5 minutes left are fetched again, so a request is never signed with a key
// that expires while it is in flight.
const REFRESH_BEFORE_MS = 300_000;
// Unsigned (SigV4 never signs user-agent); says in CloudTrail which path sent a request.
const USER_AGENT = 'pushpace-lean-publish';

/**
 * Caches credentials until they are about to expire, then fetches new ones; callers
 * meanwhile share one fetch. Static credentials (no expiration) are fetched once. Not
 * @smithy/core's memoizeIdentityProvider: it fetches again at once when what it just fetched
 * already expires within the margin, two fetches per publish where this makes one.
 * @param {CredentialProvider} provider
 * @param {() => number} now
 * @returns {CredentialProvider}
 */
export function refreshingCredentials(provider, now = Date.now) {
  /** @type {Credentials | null} */
  let current = null;
  /** @type {Promise<Credentials> | null} */
  let fetching = null;
  return async () => {
    if (current && (!current.expiration || current.expiration.getTime() - now() > REFRESH_BEFORE_MS)) return current;
    fetching ??= provider().then((fetched) => {
      current = fetched;
      return fetched;
    }).finally(() => { fetching = null; });
    return fetching;
  };
}

/**
 * Creates the lean publisher for one SNS endpoint.
 * @param {SnsEndpoint} endpoint from resolveSnsEndpoint
 * @param {{ maxSockets: number, requestTimeoutMs: number, connectTimeoutMs: number,
 *           credentials?: CredentialProvider, now?: () => number }} options
 *   credentials: default the SDK's provider chain (environment, shared files, web identity,
 *   container and instance roles), as the SDK client would use
 */
export function createLeanPublisher(endpoint, { maxSockets, requestTimeoutMs, connectTimeoutMs, credentials, now }) {
  const { url } = endpoint;
  const pool = new Pool(url.origin, {
    connections: maxSockets,
    // Idle sockets are closed after 15 s, before a server or load balancer drops them
    // (commonly after 60 s idle) under a request just being written.
    keepAliveTimeout: 15_000,
    connectTimeout: connectTimeoutMs,
    // The answer is a few hundred bytes: waiting for its headers is waiting for the request.
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs
  });
  const signer = new SignatureV4({
    credentials: refreshingCredentials(credentials ?? defaultProvider(), now),
    region: endpoint.signingRegion,
    service: endpoint.signingName,
    sha256: Sha256
  });
  const protocol = url.protocol;
  const hostname = url.hostname;
  const port = url.port ? Number(url.port) : undefined;
  const host = url.host;
  const path = url.pathname;

  /**
   * One Publish: signed, sent, its answer read. Rejects for network errors and timeouts
   * (with the code the SDK path reports for them) and when no credentials can be had;
   * SNS's answers, errors included, resolve.
   * @param {PublishSend} send
   * @returns {Promise<PublishAnswer>}
   */
  async function publishOnce(send) {
    const body = publishBody(send);
    const signed = await signer.sign(new HttpRequest({
      method: 'POST', protocol, hostname, port, path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', host, 'user-agent': USER_AGENT },
      body
    }));
    try {
      const answer = await pool.request({ path, method: 'POST', headers: signed.headers, body });
      return readPublishAnswer(answer.statusCode, await answer.body.text());
    } catch (error) {
      throw asNetworkError(error, requestTimeoutMs);
    }
  }

  return {
    publishOnce,
    /** Closes every socket at once; requests in flight fail. */
    destroy() {
      pool.destroy().catch(() => {});
    }
  };
}

/**
 * undici's errors under the names and codes the SDK's Node handler gives the same
 * failures, so both paths report (and the sender retries) them alike.
 * @param {unknown} error
 * @param {number} requestTimeoutMs
 */
function asNetworkError(error, requestTimeoutMs) {
  const e = /** @type {any} */ (error);
  switch (e?.code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return Object.assign(new Error(`a request has exceeded the configured ${requestTimeoutMs} ms requestTimeout`, { cause: error }),
        { name: 'TimeoutError', code: 'ETIMEDOUT' });
    case 'UND_ERR_CONNECT_TIMEOUT':
      return Object.assign(new Error(`the request socket did not establish a connection with the server: ${e.message}`, { cause: error }),
        { name: 'TimeoutError' });
    case 'UND_ERR_SOCKET':
      // The peer closed or reset the connection mid-request: node's http says ECONNRESET.
      return Object.assign(new Error(e.cause?.message ?? e.message, { cause: error }), { code: e.cause?.code ?? 'ECONNRESET' });
    default:
      return error;
  }
}
