// A local stand-in for AWS SNS mobile push. It speaks the Query protocol exactly as
// @aws-sdk/client-sns v3 sends it (form-encoded POST, XML answers in the 2010-03-31
// namespace), so the real SDK parses every answer into the same result or exception
// class it would get from AWS. Signatures are never checked: any credentials work.
//
// Benchmarks publish to 100,000+ made-up endpoint ARNs, so per-publish work is O(1):
// no per-request logging, no growing lists, JSON parsed only when SNS itself must.
//
// This file is the HTTP server: Publish, routing and the control API under /_emulator/.
// The parts it wires together live next to it:
// - query-protocol.js: form parameters in, XML answers and SNS-shaped errors out
// - endpoint-store.js: platform endpoints, enabled or disabled, and deleted ARNs
// - faults.js: the runtime-changeable fault config, its throttle and seeded PRNG
// - delivery-recorder.js: what "arrived at SNS", for tests and the demo
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { InputError } from '../shared/errors.js';
import { createDeliveryRecorder, RING_SIZE } from './delivery-recorder.js';
import { createEndpointStore, ENDPOINT_ARN } from './endpoint-store.js';
import { createThrottle, isPlainObject, latencyOf, normalizeFaults, summarizeFaults } from './faults.js';
import { mulberry32 } from '../shared/seeded-random.js';
import { errorAnswer, invalid, okAnswer, parseForm, readMessageAttributes, sendXml } from './query-protocol.js';

// Part of this module's public API since before the split; callers import them here.
export { ENDPOINT_ARN, normalizeFaults };

/**
 * @typedef {import('./faults.js').FaultsInput} FaultsInput
 * @typedef {import('./query-protocol.js').Answer} Answer
 * @typedef {import('./query-protocol.js').MessageAttribute} MessageAttribute
 * @typedef {{ info(obj: object, msg?: string): void, error(obj: object, msg?: string): void }} EmulatorLogger
 */

/** SNS's own limit on a message's size. */
export const MAX_MESSAGE_BYTES = 262_144;
// A legal message percent-encodes to at most 3x its bytes; anything larger is refused
// without being buffered, so a stray upload cannot exhaust memory.
const MAX_QUERY_BODY_BYTES = 2 * 1024 * 1024;
// Fault configs may list many ARNs (a disabled share of a 100k audience).
const MAX_CONTROL_BODY_BYTES = 16 * 1024 * 1024;

/** @type {EmulatorLogger} */
const SILENT = { info() {}, error() {} };
// performance.now() is monotonic, so rates and windows survive NTP steps.
const defaultNow = () => performance.timeOrigin + performance.now();

/**
 * Creates an SNS emulator; nothing listens until listen() is called.
 * @param {{ region?: string, faults?: FaultsInput, logger?: EmulatorLogger, now?: () => number,
 *           onDelivery?: (targetArn: string, at: number, delivery: { messageId: string, attributes: Record<string, MessageAttribute> }) => void }} [options]
 *   now is the clock in ms since the epoch, injectable so tests can control time;
 *   onDelivery is told of every successful Publish as it happens, with its message
 *   attributes ({} when none): benchmarks time each one, tests check TTLs of every send
 */
export function createSnsEmulator({ region = 'us-east-1', faults = {}, logger = SILENT, now = defaultNow, onDelivery } = {}) {
  let config = normalizeFaults(faults);
  let failures = new Map(Object.entries(config.failEndpoints));
  let random = mulberry32(config.seed);
  let throttle = createThrottle(config.throttlePerSecond);
  const recorder = createDeliveryRecorder(now);
  const endpoints = createEndpointStore(region);
  endpoints.disableByFault(config.disabledEndpoints);
  /** @type {Set<NodeJS.Timeout>} */
  const pendingAnswers = new Set();

  const server = createServer((req, res) => {
    const answered = req.url?.startsWith('/_emulator/') ? handleControl(req, res) : handleQuery(req, res);
    answered.catch((error) => {
      // A bug must cost one request, never the process a whole test suite shares.
      logger.error({ err: error }, 'sns emulator request failed');
      if (!res.headersSent) sendXml(res, errorAnswer('InternalFailure', 'Emulator error', 500));
    });
  });
  // The SDK reuses sockets; outlive its idle timeout so no request meets a closed socket.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('error', (error) => logger.error({ err: error }, 'sns emulator server error'));

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
  async function handleQuery(req, res) {
    const { text, tooLarge } = await readBody(req, MAX_QUERY_BODY_BYTES);
    const contentType = (req.headers['content-type'] ?? 'application/x-www-form-urlencoded').toLowerCase();
    /** @type {Answer} */
    let answer;
    let action = 'Unknown';
    if (tooLarge) {
      answer = errorAnswer('InvalidParameter', `Request body is larger than ${MAX_QUERY_BODY_BYTES} bytes`);
    } else if (req.method === 'POST' && !contentType.startsWith('application/x-www-form-urlencoded')) {
      answer = errorAnswer('MalformedQueryString', `Content-Type must be application/x-www-form-urlencoded, got "${contentType}"`);
    } else {
      const params = parseForm(req.method === 'POST' ? text : (req.url ?? '').split('?')[1] ?? '');
      action = params.Action ?? 'Unknown';
      answer = dispatch(action, params);
    }
    recorder.countRequest(action, answer.code);
    const delay = latencyOf(config.latencyMs);
    if (delay <= 0) return sendXml(res, answer);
    const timer = setTimeout(() => {
      pendingAnswers.delete(timer);
      sendXml(res, answer);
    }, delay);
    pendingAnswers.add(timer);
  }

  /** @param {string} action @param {Record<string, string>} params @returns {Answer} */
  function dispatch(action, params) {
    switch (action) {
      case 'Publish': return publish(params);
      case 'CreatePlatformEndpoint': return endpoints.create(params);
      case 'GetEndpointAttributes': return endpoints.getAttributes(params);
      case 'SetEndpointAttributes': return endpoints.setAttributes(params);
      case 'DeleteEndpoint': return endpoints.remove(params);
      case 'Unknown': return errorAnswer('InvalidAction', 'Could not find an Action parameter');
      default: return errorAnswer('InvalidAction', `Could not find operation ${action} for version 2010-03-31`);
    }
  }

  // Order matters and mirrors SNS: the API rate limit comes first (so malformed
  // requests use up the rate too), then parameters, the endpoint's state, and last the
  // transient 5xx, which draws from the seeded PRNG only for requests that get this far.
  /** @param {Record<string, string>} params @returns {Answer} */
  function publish(params) {
    if (!throttle.admit(now())) {
      return config.throttleCode === 'Throttled' ? errorAnswer('Throttled', 'Rate exceeded', 429) : errorAnswer('Throttling', 'Rate exceeded');
    }
    const targetArn = params.TargetArn;
    if (targetArn === undefined) {
      if (params.TopicArn !== undefined) return invalid('Invalid parameter: TopicArn Reason: publishing to topics is not supported by the emulator');
      if (params.PhoneNumber !== undefined) return invalid('Invalid parameter: PhoneNumber Reason: SMS is not supported by the emulator');
      return invalid('Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter');
    }
    if (!ENDPOINT_ARN.test(targetArn)) return invalid('Invalid parameter: TargetArn');
    if (endpoints.isDeleted(targetArn)) return invalid('Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified');
    const text = params.Message;
    if (text === undefined || text === '') return invalid('Invalid parameter: Empty message');
    // Byte length only matters near the limit; most messages are far below it.
    if (text.length > MAX_MESSAGE_BYTES / 4 && Buffer.byteLength(text) > MAX_MESSAGE_BYTES) return invalid('Invalid parameter: Message too long');
    /** @type {unknown} */
    let message = text;
    const structure = params.MessageStructure ?? null;
    if (structure !== null) {
      if (structure !== 'json') return invalid('Invalid parameter: MessageStructure');
      try {
        message = JSON.parse(text);
      } catch {
        return invalid('Invalid parameter: Message Structure - JSON message body failed to parse');
      }
      if (!isPlainObject(message) || typeof message.default !== 'string') {
        return invalid('Invalid parameter: Message Structure - No default entry in JSON message body');
      }
    }
    const failure = failures.get(targetArn);
    if (failure) return errorAnswer(failure.code, failure.message, failure.status);
    if (endpoints.isDisabled(targetArn)) return errorAnswer('EndpointDisabled', 'Endpoint is disabled');
    if (config.errorShare > 0 && random() < config.errorShare) return errorAnswer('InternalError', 'Internal Error', 500);

    const attributes = params['MessageAttributes.entry.1.Name'] === undefined ? null : readMessageAttributes(params);
    const badTtl = attributes === null ? null : invalidTtl(attributes);
    if (badTtl !== null) return invalid(badTtl);
    const messageId = randomUUID();
    recorder.deliver({ targetArn, messageId, message, messageStructure: structure, attributes });
    onDelivery?.(targetArn, now(), { messageId, attributes: attributes ?? {} });
    return okAnswer('Publish', `<PublishResult><MessageId>${messageId}</MessageId></PublishResult>`);
  }

  /** @param {import('node:http').IncomingMessage} req @param {import('node:http').ServerResponse} res */
  async function handleControl(req, res) {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const route = `${req.method} ${url.pathname.replace(/\/+$/, '')}`;
    switch (route) {
      case 'GET /_emulator/healthz':
        return sendJson(res, 200, { ok: true });
      case 'GET /_emulator/stats':
        return sendJson(res, 200, recorder.stats({ bins: url.searchParams.get('bins') === '1' }));
      case 'GET /_emulator/deliveries': {
        const limit = Number(url.searchParams.get('limit') ?? 100);
        if (!Number.isInteger(limit) || limit < 1 || limit > RING_SIZE) {
          return sendJson(res, 400, { error: `limit must be a whole number from 1 to ${RING_SIZE}`, field: 'limit' });
        }
        const deliveries = recorder.deliveries(url.searchParams.get('target') ?? undefined);
        return sendJson(res, 200, { deliveries: deliveries.slice(-limit) });
      }
      case 'GET /_emulator/targets/count': {
        const arn = url.searchParams.get('arn');
        if (!arn) return sendJson(res, 400, { error: 'the arn query parameter is required', field: 'arn' });
        return sendJson(res, 200, { arn, count: recorder.deliveryCount(arn) });
      }
      case 'GET /_emulator/faults':
        return sendJson(res, 200, config);
      case 'PUT /_emulator/faults': {
        const { text, tooLarge } = await readBody(req, MAX_CONTROL_BODY_BYTES);
        if (tooLarge) return sendJson(res, 413, { error: `body is larger than ${MAX_CONTROL_BODY_BYTES} bytes` });
        let input;
        try {
          input = JSON.parse(text);
        } catch (error) {
          return sendJson(res, 400, { error: `body is not valid JSON: ${/** @type {Error} */ (error).message}` });
        }
        try {
          setFaults(input);
        } catch (error) {
          if (!(error instanceof InputError)) throw error;
          return sendJson(res, 400, { error: error.message, field: /** @type {{ field?: string }} */ (error).field });
        }
        return sendJson(res, 200, config);
      }
      case 'POST /_emulator/reset':
        await readBody(req, MAX_CONTROL_BODY_BYTES);
        reset();
        return sendJson(res, 200, { ok: true });
      default:
        return sendJson(res, 404, { error: `no control route ${route}; see emulator/sns-emulator.js` });
    }
  }

  /**
   * Replaces the whole fault config (throws InputError naming the bad field). The
   * throttle window and the errorShare PRNG restart, so the same seed repeats.
   * @param {FaultsInput} input
   */
  function setFaults(input) {
    config = normalizeFaults(input);
    failures = new Map(Object.entries(config.failEndpoints));
    random = mulberry32(config.seed);
    throttle = createThrottle(config.throttlePerSecond);
    endpoints.disableByFault(config.disabledEndpoints);
    logger.info({ faults: summarizeFaults(config) }, 'sns emulator faults changed');
  }

  /** Clears recordings, faults and endpoints: the state of a fresh start. */
  function reset() {
    recorder.reset();
    endpoints.clear();
    setFaults({});
  }

  return {
    /**
     * Starts listening; resolves the base URL to give the SDK as `endpoint`.
     * @param {number} [port] 0 picks a free port
     * @param {string} [host]
     * @returns {Promise<string>}
     */
    listen(port = 0, host = '127.0.0.1') {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = /** @type {import('node:net').AddressInfo} */ (server.address());
          // A wildcard bind is reachable locally on loopback; brackets for IPv6 literals.
          const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
          const url = `http://${shown}:${address.port}`;
          logger.info({ url, region, faults: summarizeFaults(config) }, 'sns emulator listening');
          resolve(url);
        });
      });
    },
    /**
     * Stops listening and drops every socket, idle keep-alive ones included, so a
     * test's `after` does not wait 65 s; answers still delayed by latencyMs are dropped.
     * @returns {Promise<void>}
     */
    close() {
      for (const timer of pendingAnswers) clearTimeout(timer);
      pendingAnswers.clear();
      if (!server.listening) return Promise.resolve();
      return new Promise((resolve, reject) => {
        server.close((error) => {
          if (error) return reject(error);
          logger.info({}, 'sns emulator stopped');
          resolve();
        });
        server.closeAllConnections();
      });
    },
    /** What the emulator recorded; the GET /_emulator/stats answer. @param {{ bins?: boolean }} [options] */
    stats: (options) => recorder.stats(options),
    setFaults,
    /** The normalized fault config in force. */
    getFaults: () => config,
    reset,
    /** Recent deliveries (of the last 1,000) to one ARN, or all when arn is omitted, oldest first. @param {string} [arn] */
    deliveriesFor: (arn) => recorder.deliveries(arn),
    /** Successful publishes to one ARN since reset. @param {string} arn */
    deliveryCount: (arn) => recorder.deliveryCount(arn)
  };
}

// The platform TTL attributes SNS reads (AWS.SNS.MOBILE.APNS.TTL, ...FCM.TTL, ...): whole seconds, 0 or more.
const TTL_ATTRIBUTE = /^AWS\.SNS\.MOBILE\.[A-Z_]+\.TTL$/;

/**
 * Why a Publish's TTL attributes would be refused, or null when they are fine.
 * @param {Record<string, MessageAttribute>} attributes
 */
function invalidTtl(attributes) {
  for (const [name, attribute] of Object.entries(attributes)) {
    if (!TTL_ATTRIBUTE.test(name)) continue;
    if (!/^\d{1,10}$/.test(attribute.StringValue ?? '')) {
      return `Invalid parameter: MessageAttributes Reason: ${name} must be a whole number of seconds, 0 or more, got "${attribute.StringValue ?? ''}"`;
    }
  }
  return null;
}

/** Answers a control API request. @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} value */
function sendJson(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Reads a whole body as UTF-8; past `limit` bytes it keeps reading (so the socket
 * stays usable) but stores nothing more and reports tooLarge.
 * @param {import('node:http').IncomingMessage} req
 * @param {number} limit
 * @returns {Promise<{ text: string, tooLarge: boolean }>}
 */
function readBody(req, limit) {
  return new Promise((resolve) => {
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    req.on('data', (/** @type {Buffer} */ chunk) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => {
      const tooLarge = size > limit;
      resolve({ text: tooLarge ? '' : chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'), tooLarge });
    });
    // An aborted request is never answered; nothing else is left to clean up.
    req.on('error', () => resolve({ text: '', tooLarge: false }));
  });
}
