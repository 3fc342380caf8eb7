// The SNS client both senders use, on either publish path (SNS_CLIENT), and the one
// mapping from SNS errors to what a sender does next. Both paths answer every publish
// with the same PublishResult, so the sender's retries and backoff cannot tell them
// apart (test/integration/sns-publish-contract.test.js runs one suite against both).
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { SNSClient, PublishCommand } from '@aws-sdk/client-sns';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { resolveSnsEndpoint } from './sns-endpoint.js';
import { createLeanPublisher } from './lean-publisher.js';

/**
 * @typedef {'delivered' | 'disabled' | 'throttled' | 'transient' | 'permanent'} PublishKind
 * @typedef {{ kind: PublishKind, messageId?: string, reason?: string }} PublishResult
 * @typedef {import('./publish-query.js').PublishSend} PublishSend
 * @typedef {(result: PublishResult, seconds: number, answered: boolean) => void} PublishObserver
 *   told of every publish: its result, how long it took, whether SNS answered at all
 * @typedef {object} SnsClient
 * @property {'lean' | 'sdk'} path which publish path this is
 * @property {(send: PublishSend) => Promise<PublishResult>} publish one Publish, classified; never throws for SNS's answer or a network error
 * @property {(observer: PublishObserver) => void} observe adds an observer (metrics)
 * @property {() => void} destroy closes every socket
 */

// The SDK's Node handler only warns when requestTimeout passes unless told to throw; a
// send that hangs must fail (and be retried) like any other transient error.
const REQUEST_TIMEOUT_MS = 15_000;
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Creates the SNS client for `sns.client` (lean by default, sdk one setting away). It
 * reuses sockets (keep-alive: a new TLS handshake per publish costs more than the
 * publish) and never retries by itself: the sender decides what a throttle or a 5xx
 * means, and counts stay exact. Resolves the endpoint first: a FIPS or dual-stack
 * endpoint AWS does not offer in the region throws ConfigError here, at start.
 * @param {{ region: string, endpoint?: string, emulator: boolean, client?: 'lean' | 'sdk' }} sns
 * @param {{ maxSockets: number, requestTimeoutMs?: number,
 *           credentials?: import('./lean-publisher.js').CredentialProvider }} options
 *   credentials: tests only; by default the emulator gets fixed ones, AWS the SDK's chain
 * @returns {Promise<SnsClient>}
 */
export async function createSnsClient(sns, { maxSockets, requestTimeoutMs = REQUEST_TIMEOUT_MS, credentials }) {
  const endpoint = await resolveSnsEndpoint(sns);
  // The emulator checks no signature; fixed credentials keep the SDK from probing the
  // instance metadata service, which hangs off AWS.
  const fixed = credentials ?? (sns.emulator ? async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }) : undefined);
  /** @type {PublishObserver[]} */
  const observers = [];
  /** @type {(send: PublishSend) => Promise<{ result: PublishResult, answered: boolean }>} */
  let publishOnce;
  /** @type {() => void} */
  let destroy;
  const path = sns.client ?? 'lean';
  if (path === 'lean') {
    const lean = createLeanPublisher(endpoint, { maxSockets, requestTimeoutMs, connectTimeoutMs: CONNECT_TIMEOUT_MS, credentials: fixed });
    publishOnce = (send) => lean.publishOnce(send).then(
      (answer) => ({ result: classifyAnswer(answer), answered: true }),
      (error) => ({ result: classifyPublishError(error), answered: false }));
    destroy = () => lean.destroy();
  } else {
    const client = createSdkClient(sns, { maxSockets, requestTimeoutMs, credentials: fixed });
    publishOnce = (send) => client.send(new PublishCommand({
      TargetArn: send.targetArn,
      Message: send.message,
      MessageStructure: 'json',
      MessageAttributes: send.attributes
    })).then(
      (answer) => ({ result: { kind: /** @type {const} */ ('delivered'), messageId: answer.MessageId }, answered: true }),
      (error) => ({ result: classifyPublishError(error), answered: error?.$metadata?.httpStatusCode !== undefined }));
    destroy = () => client.destroy();
  }
  return {
    path,
    async publish(send) {
      if (observers.length === 0) return (await publishOnce(send)).result;
      const startedAt = performance.now();
      const { result, answered } = await publishOnce(send);
      const seconds = (performance.now() - startedAt) / 1000;
      for (const observer of observers) observer(result, seconds, answered);
      return result;
    },
    observe(observer) {
      observers.push(observer);
    },
    destroy
  };
}

/**
 * The SDK's own client, as the sdk path and the bare-loop benchmark use it.
 * @param {{ region: string, endpoint?: string }} sns
 * @param {{ maxSockets: number, requestTimeoutMs?: number, credentials?: import('./lean-publisher.js').CredentialProvider }} options
 */
export function createSdkClient(sns, { maxSockets, requestTimeoutMs = REQUEST_TIMEOUT_MS, credentials }) {
  const agentOptions = { keepAlive: true, maxSockets, keepAliveMsecs: 15_000 };
  return new SNSClient({
    region: sns.region,
    endpoint: sns.endpoint,
    maxAttempts: 1,
    credentials,
    requestHandler: new NodeHttpHandler({
      httpAgent: new http.Agent(agentOptions),
      httpsAgent: new https.Agent(agentOptions),
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: requestTimeoutMs,
      throwOnRequestTimeout: true
    })
  });
}

/**
 * Classifies SNS's answer as read by the lean path, exactly as classifyPublishError
 * classifies the exception the SDK makes of the same answer.
 * @param {import('./publish-query.js').PublishAnswer} answer
 * @returns {PublishResult}
 */
export function classifyAnswer(answer) {
  if (answer.status >= 200 && answer.status < 300) return { kind: 'delivered', messageId: answer.messageId };
  // An answer without SNS's XML: the SDK names it by its status, as here.
  const code = answer.code ?? (answer.status >= 500 ? 'UnknownError' : `Http${answer.status}`);
  return classifyPublishError({
    name: code, Code: code, message: answer.message ?? code,
    $metadata: { httpStatusCode: answer.status }, $fault: answer.type === 'Receiver' || answer.status >= 500 ? 'server' : 'client'
  });
}

const THROTTLED = new Set(['ThrottledException', 'Throttled', 'Throttling', 'ThrottlingException',
  'TooManyRequestsException', 'RequestLimitExceeded', 'KMSThrottlingException', 'KMSThrottling']);
// Credentials and permissions are fixed by an operator, not by the device:
// retrying (and finally dead-lettering the segment) keeps the campaign
// resumable instead of failing every device for good.
const OPERATOR = new Set(['AuthorizationError', 'AuthorizationErrorException', 'InvalidClientTokenId',
  'SignatureDoesNotMatch', 'ExpiredToken', 'ExpiredTokenException', 'AccessDenied', 'AccessDeniedException',
  'UnrecognizedClientException', 'CredentialsProviderError']);

/**
 * Maps an SNS or network error to what happens next:
 * disabled (mark the endpoint, never retry), throttled (back off and slow down),
 * transient (retry with backoff), permanent (fail the device with the reason).
 * Codes are matched as well as the SDK's exception names, so the lean path, which
 * has codes only, classifies every answer as the SDK path does.
 * @param {unknown} error
 * @returns {PublishResult}
 */
export function classifyPublishError(error) {
  const e = /** @type {any} */ (error);
  const name = e?.name ?? 'Error';
  const code = e?.Code ?? e?.code ?? name;
  const status = e?.$metadata?.httpStatusCode;
  const reason = `${code}: ${e?.message ?? String(error)}`.slice(0, 300);
  if (name === 'EndpointDisabledException' || code === 'EndpointDisabled') return { kind: 'disabled', reason };
  if (THROTTLED.has(name) || THROTTLED.has(code) || status === 429) return { kind: 'throttled', reason };
  if (status === undefined || status >= 500 || e?.$fault === 'server' || OPERATOR.has(name) || OPERATOR.has(code)) {
    // No HTTP status at all means the request never got an answer: a network error or a timeout.
    return { kind: 'transient', reason };
  }
  return { kind: 'permanent', reason };
}
