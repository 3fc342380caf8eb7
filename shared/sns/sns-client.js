// The SNS client and the one mapping from SNS errors to what a sender does next.
import http from 'node:http';
import https from 'node:https';
import { SNSClient, PublishCommand } from '@aws-sdk/client-sns';
import { NodeHttpHandler } from '@smithy/node-http-handler';

/**
 * @typedef {'delivered' | 'disabled' | 'throttled' | 'transient' | 'permanent'} PublishKind
 * @typedef {{ kind: PublishKind, messageId?: string, reason?: string }} PublishResult
 */

/**
 * An SNS client that reuses sockets (keep-alive: a new TLS handshake per
 * publish costs more than the publish) and never retries by itself: the
 * sender decides what a throttle or a 5xx means, and counts stay exact.
 * @param {{ region: string, endpoint?: string, emulator: boolean }} sns
 * @param {{ maxSockets: number }} options
 */
export function createSnsClient(sns, { maxSockets }) {
  const agentOptions = { keepAlive: true, maxSockets, keepAliveMsecs: 15_000 };
  return new SNSClient({
    region: sns.region,
    endpoint: sns.endpoint,
    maxAttempts: 1,
    // The emulator checks no signature; fixed credentials keep the SDK from
    // probing the instance metadata service, which hangs off AWS.
    credentials: sns.emulator ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined,
    requestHandler: new NodeHttpHandler({
      httpAgent: new http.Agent(agentOptions),
      httpsAgent: new https.Agent(agentOptions),
      connectionTimeout: 5_000,
      requestTimeout: 15_000
    })
  });
}

/**
 * Publishes one message to one platform endpoint and classifies the answer.
 * Never throws for an SNS answer or a network error; only for a bug.
 * @param {SNSClient} client
 * @param {{ targetArn: string, message: string, attributes?: Record<string, { DataType: string, StringValue: string }> }} send
 * @returns {Promise<PublishResult>}
 */
export async function publish(client, { targetArn, message, attributes }) {
  try {
    const answer = await client.send(new PublishCommand({
      TargetArn: targetArn,
      Message: message,
      MessageStructure: 'json',
      MessageAttributes: attributes
    }));
    return { kind: 'delivered', messageId: answer.MessageId };
  } catch (error) {
    return classifyPublishError(error);
  }
}

const THROTTLED = new Set(['ThrottledException', 'Throttled', 'Throttling', 'ThrottlingException',
  'TooManyRequestsException', 'RequestLimitExceeded', 'KMSThrottlingException']);
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
