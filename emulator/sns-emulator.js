// A local stand-in for AWS SNS mobile push. It speaks the Query protocol exactly as
// @aws-sdk/client-sns v3 sends it (form-encoded POST, XML answers in the 2010-03-31
// namespace), so the real SDK parses every answer into the same result or exception
// class it would get from AWS. Signatures are never checked: any credentials work.
//
// Three things shape the design:
// - Benchmarks publish to 100,000+ made-up endpoint ARNs, so any well-formed ARN is a
//   live endpoint without CreatePlatformEndpoint, and per-publish work is O(1): no
//   per-request logging, no growing lists, JSON parsed only when SNS itself must.
// - Faults (throttling, disabled endpoints, 5xx, latency) are what a paced dispatcher
//   exists to survive, so they can be changed at runtime over the control API.
// - Tests and the demo need to know what "arrived at SNS": counts per target, errors
//   per code, a 10-ms timeline for rates and a ring of the last deliveries.
import { createServer } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { InputError } from '../shared/errors.js';

const XMLNS = 'http://sns.amazonaws.com/doc/2010-03-31/';
/** SNS's own limit on a message's size. */
export const MAX_MESSAGE_BYTES = 262_144;
// A legal message percent-encodes to at most 3x its bytes; anything larger is refused
// without being buffered, so a stray upload cannot exhaust memory.
const MAX_QUERY_BODY_BYTES = 2 * 1024 * 1024;
// Fault configs may list many ARNs (a disabled share of a 100k audience).
const MAX_CONTROL_BODY_BYTES = 16 * 1024 * 1024;
const BIN_MS = 10;
const WINDOW_BINS = 1000 / BIN_MS;
// One hour of 10-ms bins (2.9 MB); older bins are dropped. maxPerSecond is kept
// incrementally, so it stays exact over any run length.
const MAX_BINS = 360_000;
const RING_SIZE = 1000;
// About 200 MB of Map at worst; beyond it deliveries are still counted, but their
// targets are not, and stats say how many went untracked.
const MAX_TRACKED_TARGETS = 2_000_000;
const MAX_LATENCY_MS = 60_000;
const ENDPOINT_ATTRIBUTES = new Set(['CustomUserData', 'Enabled', 'Token']);
const PLATFORMS = 'APNS|APNS_SANDBOX|APNS_VOIP|APNS_VOIP_SANDBOX|GCM|ADM|BAIDU|MPNS|WNS';
/** A well-formed platform endpoint ARN; Publish accepts any of these. */
export const ENDPOINT_ARN = new RegExp(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\\d{12}:endpoint/(${PLATFORMS})/[^/]+/[A-Za-z0-9-]+$`);
const APP_ARN = new RegExp(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\\d{12}:app/(${PLATFORMS})/([^/]+)$`);

/**
 * @typedef {{ min: number, max: number }} LatencyRange
 * @typedef {{ code: string, status: number, message: string }} EndpointFailure
 * @typedef {object} Faults the normalized fault config, as GET /_emulator/faults shows it
 * @property {number | null} throttlePerSecond Publish requests admitted per sliding second; null is unlimited
 * @property {'Throttling' | 'Throttled'} throttleCode Throttling (400) as SNS answers API rate limits, or Throttled (429, ThrottledException)
 * @property {string[]} disabledEndpoints ARNs that start out with Enabled=false
 * @property {number | LatencyRange} latencyMs delay added to every SNS API answer
 * @property {number} errorShare share (0..1) of Publish requests answered 500 InternalError
 * @property {number} seed seeds the PRNG behind errorShare
 * @property {Record<string, EndpointFailure>} failEndpoints ARN -> permanent error answer
 * @typedef {{ [K in keyof Faults]?: K extends 'failEndpoints'
 *   ? Record<string, { code: string, status?: number, message?: string }> : Faults[K] | null }} FaultsInput
 * @typedef {{ DataType: string, StringValue?: string, BinaryValue?: string }} MessageAttribute
 * @typedef {object} Delivery one accepted Publish, as the ring buffer keeps it
 * @property {string} targetArn
 * @property {string} messageId
 * @property {unknown} message parsed when it is JSON, else the string
 * @property {string | null} messageStructure
 * @property {Record<string, MessageAttribute>} attributes
 * @property {number} at clock time in ms since the epoch
 * @typedef {{ info(obj: object, msg?: string): void, error(obj: object, msg?: string): void }} EmulatorLogger
 * @typedef {{ status: number, action?: string, resultXml?: string, code?: string, message?: string }} Answer
 *   a success (action, resultXml) or an error (code, message), rendered to XML by sendXml
 */

/** @type {Faults} */
const NO_FAULTS = Object.freeze({
  throttlePerSecond: null, throttleCode: 'Throttling', disabledEndpoints: [], latencyMs: 0,
  errorShare: 0, seed: 1, failEndpoints: {}
});
/** @type {EmulatorLogger} */
const SILENT = { info() {}, error() {} };
// performance.now() is monotonic, so rates and windows survive NTP steps.
const defaultNow = () => performance.timeOrigin + performance.now();

/**
 * Creates an SNS emulator; nothing listens until listen() is called.
 * @param {{ region?: string, faults?: FaultsInput, logger?: EmulatorLogger, now?: () => number }} [options]
 *   now is the clock in ms since the epoch, injectable so tests can control time
 */
export function createSnsEmulator({ region = 'us-east-1', faults = {}, logger = SILENT, now = defaultNow } = {}) {
  let config = normalizeFaults(faults);
  let failures = new Map(Object.entries(config.failEndpoints));
  let random = mulberry32(config.seed);
  let throttle = createThrottle(config.throttlePerSecond);
  const recorder = createRecorder(now);
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

    const messageId = randomUUID();
    const attributes = params['MessageAttributes.entry.1.Name'] === undefined ? null : readMessageAttributes(params);
    recorder.deliver({ targetArn, messageId, message, messageStructure: structure, attributes });
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

/**
 * Validates a fault config and fills in defaults. Throws InputError whose message
 * and `field` name the offending field.
 * @param {unknown} input
 * @returns {Faults}
 */
export function normalizeFaults(input) {
  if (!isPlainObject(input)) throw fieldError('faults', 'faults must be a JSON object');
  for (const key of Object.keys(input)) {
    if (!(key in NO_FAULTS)) throw fieldError(key, `${key} is not a known fault; use ${Object.keys(NO_FAULTS).join(', ')}`);
  }
  const given = (/** @type {keyof Faults} */ key) => input[key] ?? NO_FAULTS[key];
  const throttlePerSecond = given('throttlePerSecond');
  if (throttlePerSecond !== null && !isIntegerIn(throttlePerSecond, 1, 1_000_000)) {
    throw fieldError('throttlePerSecond', 'throttlePerSecond must be a whole number from 1 to 1000000, or null for no limit');
  }
  const throttleCode = given('throttleCode');
  if (throttleCode !== 'Throttling' && throttleCode !== 'Throttled') {
    throw fieldError('throttleCode', 'throttleCode must be "Throttling" (400) or "Throttled" (429)');
  }
  const disabledEndpoints = given('disabledEndpoints');
  if (!Array.isArray(disabledEndpoints)) throw fieldError('disabledEndpoints', 'disabledEndpoints must be an array of endpoint ARNs');
  disabledEndpoints.forEach((arn, i) => {
    if (typeof arn !== 'string' || !ENDPOINT_ARN.test(arn)) {
      throw fieldError(`disabledEndpoints[${i}]`, `disabledEndpoints[${i}] is not an endpoint ARN: ${JSON.stringify(arn)}`);
    }
  });
  const latencyMs = normalizeLatency(given('latencyMs'));
  const errorShare = given('errorShare');
  if (typeof errorShare !== 'number' || !(errorShare >= 0 && errorShare <= 1)) {
    throw fieldError('errorShare', 'errorShare must be a number from 0 to 1');
  }
  const seed = given('seed');
  if (!isIntegerIn(seed, 0, 2 ** 32 - 1)) throw fieldError('seed', 'seed must be a whole number from 0 to 4294967295');
  const failEndpoints = normalizeFailures(given('failEndpoints'));
  return Object.freeze({
    throttlePerSecond: /** @type {number | null} */ (throttlePerSecond), throttleCode,
    disabledEndpoints: [...disabledEndpoints], latencyMs, errorShare, seed: /** @type {number} */ (seed), failEndpoints
  });
}

/** @param {unknown} value @returns {number | LatencyRange} */
function normalizeLatency(value) {
  if (isNumberIn(value, 0, MAX_LATENCY_MS)) return /** @type {number} */ (value);
  if (isPlainObject(value) && Object.keys(value).every((k) => k === 'min' || k === 'max')) {
    const { min, max } = value;
    if (isNumberIn(min, 0, MAX_LATENCY_MS) && isNumberIn(max, /** @type {number} */ (min), MAX_LATENCY_MS)) {
      return { min: /** @type {number} */ (min), max: /** @type {number} */ (max) };
    }
  }
  throw fieldError('latencyMs', `latencyMs must be a number of ms from 0 to ${MAX_LATENCY_MS}, or { "min": n, "max": m } with min <= max`);
}

/** @param {unknown} value @returns {Record<string, EndpointFailure>} */
function normalizeFailures(value) {
  if (!isPlainObject(value)) throw fieldError('failEndpoints', 'failEndpoints must be an object mapping endpoint ARNs to { code, status, message }');
  /** @type {Record<string, EndpointFailure>} */
  const failures = {};
  for (const [arn, failure] of Object.entries(value)) {
    const field = `failEndpoints[${JSON.stringify(arn)}]`;
    if (!ENDPOINT_ARN.test(arn)) throw fieldError(field, `${field}: the key is not an endpoint ARN`);
    if (!isPlainObject(failure) || typeof failure.code !== 'string' || !/^[A-Za-z][A-Za-z0-9.]{0,99}$/.test(failure.code)) {
      throw fieldError(`${field}.code`, `${field}.code must be an SNS error code such as "InvalidParameter"`);
    }
    const status = failure.status ?? 400;
    if (!isIntegerIn(status, 400, 599)) throw fieldError(`${field}.status`, `${field}.status must be an HTTP status from 400 to 599`);
    const message = failure.message ?? failure.code;
    if (typeof message !== 'string') throw fieldError(`${field}.message`, `${field}.message must be a string`);
    failures[arn] = { code: failure.code, status: /** @type {number} */ (status), message };
  }
  return failures;
}

/**
 * Platform endpoints created through the API, plus the fault-disabled and deleted
 * ARNs. ARNs never created are live unless a fault or a delete says otherwise.
 * @param {string} region
 */
function createEndpointStore(region) {
  /** @type {Map<string, { token: string, customUserData: string, enabled: boolean }>} */
  const endpoints = new Map();
  /** @type {Set<string>} */
  let faultDisabled = new Set();
  /** @type {Set<string>} */
  const deleted = new Set();

  /** @param {string} arn */
  function isDisabled(arn) {
    return faultDisabled.has(arn) || endpoints.get(arn)?.enabled === false;
  }

  /** @param {Record<string, string>} params */
  function readEndpointArn(params) {
    const arn = params.EndpointArn;
    return arn !== undefined && ENDPOINT_ARN.test(arn) ? arn : undefined;
  }

  return {
    /** @param {string[]} arns */
    disableByFault(arns) {
      faultDisabled = new Set(arns);
    },
    clear() {
      endpoints.clear();
      deleted.clear();
    },
    isDisabled,
    /** @param {string} arn */
    isDeleted: (arn) => deleted.size > 0 && deleted.has(arn),

    /** @param {Record<string, string>} params @returns {Answer} */
    create(params) {
      const appArn = params.PlatformApplicationArn ?? '';
      const app = APP_ARN.exec(appArn);
      if (!app) return invalid('Invalid parameter: PlatformApplicationArn');
      const token = params.Token;
      if (!token) return invalid('Invalid parameter: Token Reason: cannot be empty');
      const attributes = readAttributeMap(params);
      if (typeof attributes === 'string') return invalid(attributes);
      const customUserData = params.CustomUserData ?? attributes.CustomUserData ?? '';
      // SNS derives the ARN from app and token, so creating twice is idempotent.
      const arn = `arn:aws:sns:${region}:000000000000:endpoint/${app[1]}/${app[2]}/${uuidFrom(`${appArn}\n${token}`)}`;
      const existing = endpoints.get(arn);
      if (existing) {
        const sameEnabled = attributes.Enabled === undefined || (attributes.Enabled === 'true') === existing.enabled;
        if (existing.customUserData !== customUserData || !sameEnabled) {
          return invalid(`Invalid parameter: Token Reason: Endpoint ${arn} already exists with the same Token, but different attributes.`);
        }
      } else {
        endpoints.set(arn, { token, customUserData, enabled: attributes.Enabled !== 'false' });
        deleted.delete(arn);
      }
      return okAnswer('CreatePlatformEndpoint', `<CreatePlatformEndpointResult><EndpointArn>${escapeXml(arn)}</EndpointArn></CreatePlatformEndpointResult>`);
    },

    /** @param {Record<string, string>} params @returns {Answer} */
    getAttributes(params) {
      const arn = readEndpointArn(params);
      if (!arn) return invalid('Invalid parameter: EndpointArn');
      const endpoint = endpoints.get(arn);
      if (!endpoint && !faultDisabled.has(arn)) return errorAnswer('NotFound', 'Endpoint does not exist', 404);
      /** @type {[string, string][]} */
      const entries = [['Enabled', String(!isDisabled(arn))]];
      if (endpoint?.token) entries.push(['Token', endpoint.token]);
      if (endpoint?.customUserData) entries.push(['CustomUserData', endpoint.customUserData]);
      const xml = entries.map(([key, value]) => `<entry><key>${key}</key><value>${escapeXml(value)}</value></entry>`).join('');
      return okAnswer('GetEndpointAttributes', `<GetEndpointAttributesResult><Attributes>${xml}</Attributes></GetEndpointAttributesResult>`);
    },

    /** @param {Record<string, string>} params @returns {Answer} */
    setAttributes(params) {
      const arn = readEndpointArn(params);
      if (!arn) return invalid('Invalid parameter: EndpointArn');
      const attributes = readAttributeMap(params);
      if (typeof attributes === 'string') return invalid(attributes);
      if (Object.keys(attributes).length === 0) return invalid('Invalid parameter: Attributes Reason: no attributes given');
      let endpoint = endpoints.get(arn);
      if (!endpoint) {
        // A fault-disabled ARN exists as far as the client can tell, so it can be re-enabled.
        if (!faultDisabled.has(arn)) return errorAnswer('NotFound', 'Endpoint does not exist', 404);
        endpoint = { token: '', customUserData: '', enabled: true };
        endpoints.set(arn, endpoint);
      }
      if (attributes.Token !== undefined) endpoint.token = attributes.Token;
      if (attributes.CustomUserData !== undefined) endpoint.customUserData = attributes.CustomUserData;
      if (attributes.Enabled !== undefined) {
        endpoint.enabled = attributes.Enabled === 'true';
        if (endpoint.enabled) faultDisabled.delete(arn);
      }
      return okAnswer('SetEndpointAttributes', '');
    },

    /** @param {Record<string, string>} params @returns {Answer} */
    remove(params) {
      const arn = readEndpointArn(params);
      if (!arn) return invalid('Invalid parameter: EndpointArn');
      // Like SNS, deleting is idempotent; publishing to the ARN afterwards fails.
      endpoints.delete(arn);
      faultDisabled.delete(arn);
      deleted.add(arn);
      return okAnswer('DeleteEndpoint', '');
    }
  };
}

/**
 * Counters, the 10-ms timeline and the ring of recent deliveries. Every update is
 * O(1) so recording never limits the throughput being measured.
 * @param {() => number} now
 */
function createRecorder(now) {
  let originMs = 0, published = 0, requests = 0, duplicateTargets = 0, untrackedDeliveries = 0;
  /** @type {number | null} */ let firstAt = null;
  /** @type {number | null} */ let lastAt = null;
  /** @type {Map<string, number>} */ let errors = new Map();
  /** @type {Map<string, number>} */ let actions = new Map();
  /** @type {Map<string, number>} */ let targets = new Map();
  // Timeline: counts[i] holds bin binOffset + i, bins counted from originMs.
  /** @type {number[]} */ let counts = [];
  let binOffset = 0, lastBin = 0, windowEnd = 0, windowSum = 0, maxPerSecond = 0;
  /** @type {(Delivery | undefined)[]} */ let ring = [];
  let ringNext = 0;

  function reset() {
    originMs = Math.floor(now());
    published = requests = duplicateTargets = untrackedDeliveries = 0;
    firstAt = lastAt = null;
    errors = new Map();
    actions = new Map();
    targets = new Map();
    counts = [];
    binOffset = lastBin = windowEnd = windowSum = maxPerSecond = 0;
    ring = new Array(RING_SIZE);
    ringNext = 0;
  }
  reset();

  /** @param {number} bin */
  const countAt = (bin) => (bin >= binOffset && bin - binOffset < counts.length ? counts[bin - binOffset] : 0);

  // Adds one delivery to the timeline and slides the 1-second window to end at its
  // bin. A window ending at an empty bin never holds more than the window ending at
  // the last non-empty bin before it, so checking here finds the true maximum.
  /** @param {number} at */
  function addToTimeline(at) {
    const bin = Math.max(lastBin, Math.floor((at - originMs) / BIN_MS));
    lastBin = bin;
    if (bin > windowEnd) {
      if (bin - windowEnd >= WINDOW_BINS) windowSum = 0;
      else for (let k = windowEnd + 1; k <= bin; k++) windowSum -= countAt(k - WINDOW_BINS);
      windowEnd = bin;
    }
    if (bin - binOffset >= MAX_BINS) {
      // Drop the oldest quarter-hour at once so the copy is rare.
      const keepFrom = bin - Math.floor((MAX_BINS * 3) / 4);
      counts = keepFrom - binOffset >= counts.length ? [] : counts.slice(keepFrom - binOffset);
      binOffset = keepFrom;
    }
    while (counts.length <= bin - binOffset) counts.push(0);
    counts[bin - binOffset]++;
    windowSum++;
    if (windowSum > maxPerSecond) maxPerSecond = windowSum;
  }

  /** @param {Delivery} entry */
  const present = (entry) => ({
    ...entry,
    message: entry.messageStructure === null ? maybeJson(entry.message) : entry.message,
    attributes: entry.attributes ?? {}
  });

  return {
    reset,
    /** @param {string} action @param {string | undefined} errorCode */
    countRequest(action, errorCode) {
      requests++;
      actions.set(action, (actions.get(action) ?? 0) + 1);
      if (errorCode !== undefined) errors.set(errorCode, (errors.get(errorCode) ?? 0) + 1);
    },
    /** @param {{ targetArn: string, messageId: string, message: unknown, messageStructure: string | null, attributes: Record<string, MessageAttribute> | null }} delivery */
    deliver({ targetArn, messageId, message, messageStructure, attributes }) {
      const at = now();
      published++;
      firstAt ??= at;
      lastAt = at;
      const seen = targets.get(targetArn);
      if (seen === undefined) {
        if (targets.size < MAX_TRACKED_TARGETS) targets.set(targetArn, 1);
        else untrackedDeliveries++;
      } else {
        targets.set(targetArn, seen + 1);
        if (seen === 1) duplicateTargets++;
      }
      addToTimeline(at);
      // Attributes stay null when absent; present() supplies {} only when read.
      ring[ringNext] = /** @type {Delivery} */ ({ targetArn, messageId, message, messageStructure, attributes, at });
      ringNext = (ringNext + 1) % RING_SIZE;
    },
    /** @param {string} arn */
    deliveryCount: (arn) => targets.get(arn) ?? 0,
    /** @param {string} [arn] @returns {Delivery[]} */
    deliveries(arn) {
      const ordered = [...ring.slice(ringNext), ...ring.slice(0, ringNext)];
      /** @type {Delivery[]} */
      const found = [];
      for (const entry of ordered) if (entry && (arn === undefined || entry.targetArn === arn)) found.push(present(entry));
      return found;
    },
    /** @param {{ bins?: boolean }} [options] */
    stats({ bins = false } = {}) {
      const spanMs = firstAt !== null && lastAt !== null ? lastAt - firstAt : 0;
      return {
        published,
        distinctTargets: targets.size,
        duplicateTargets,
        untrackedDeliveries,
        errors: Object.fromEntries(errors),
        requests,
        actions: Object.fromEntries(actions),
        firstAt,
        lastAt,
        maxPerSecond,
        // N deliveries evenly spaced at rate r span (N - 1) / r seconds.
        meanPerSecond: spanMs > 0 ? ((published - 1) * 1000) / spanMs : null,
        ...(bins ? { bins: { startMs: originMs + binOffset * BIN_MS, binMs: BIN_MS, counts: counts.slice() } } : {})
      };
    }
  };
}

/**
 * Admits at most `limit` calls in any sliding 1000-ms window. A ring of the last
 * `limit` admission times makes each check O(1): the oldest is the one to beat.
 * @param {number | null} limit
 */
function createThrottle(limit) {
  if (limit === null) return { admit: (/** @type {number} */ _t) => true };
  const times = new Float64Array(limit);
  let next = 0, admitted = 0;
  return {
    /** @param {number} t */
    admit(t) {
      if (admitted < limit) admitted++;
      else if (times[next] > t - 1000) return false;
      times[next] = t;
      next = (next + 1) % limit;
      return true;
    }
  };
}

/** @param {string} text @returns {Record<string, string>} */
function parseForm(text) {
  /** @type {Record<string, string>} */
  const params = Object.create(null);
  for (const [key, value] of new URLSearchParams(text)) params[key] = value;
  return params;
}

/**
 * Reads `Attributes.entry.N.key/value` pairs, as the SDK serializes a map.
 * @param {Record<string, string>} params
 * @returns {Record<string, string> | string} the map, or an error message
 */
function readAttributeMap(params) {
  /** @type {Record<string, string>} */
  const attributes = {};
  for (let n = 1; params[`Attributes.entry.${n}.key`] !== undefined; n++) {
    const key = params[`Attributes.entry.${n}.key`];
    const value = params[`Attributes.entry.${n}.value`] ?? '';
    if (!ENDPOINT_ATTRIBUTES.has(key)) return `Invalid parameter: Attributes Reason: Invalid attribute name: ${key}`;
    if (key === 'Enabled' && value !== 'true' && value !== 'false') return 'Invalid parameter: Attributes Reason: Enabled must be true or false';
    attributes[key] = value;
  }
  return attributes;
}

/** @param {Record<string, string>} params @returns {Record<string, MessageAttribute>} */
function readMessageAttributes(params) {
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

/** @param {string} action @param {string} resultXml @returns {Answer} */
function okAnswer(action, resultXml) {
  return { status: 200, action, resultXml };
}

/** @param {string} code @param {string} message @param {number} [status] @returns {Answer} */
function errorAnswer(code, message, status = 400) {
  return { status, code, message };
}

/** @param {string} message */
const invalid = (message) => errorAnswer('InvalidParameter', message);

/** @param {import('node:http').ServerResponse} res @param {Answer} answer */
function sendXml(res, answer) {
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

/** @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} value */
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

/** @param {number | LatencyRange} latency */
function latencyOf(latency) {
  if (typeof latency === 'number') return latency;
  return latency.min + Math.random() * (latency.max - latency.min);
}

/**
 * A small fast PRNG (mulberry32): the same seed gives the same errorShare split.
 * @param {number} seed
 */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A name-based (v5-style) UUID, so an ARN follows from its inputs. @param {string} name */
function uuidFrom(name) {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** ARN lists are counted, not logged: endpoint ARNs identify a person's phone. @param {Faults} faults */
function summarizeFaults(faults) {
  return { ...faults, disabledEndpoints: faults.disabledEndpoints.length, failEndpoints: Object.keys(faults.failEndpoints).length };
}

/** @param {unknown} text */
function maybeJson(text) {
  if (typeof text !== 'string' || !(text.startsWith('{') || text.startsWith('['))) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// XML 1.0 cannot carry most control characters even escaped; they become U+FFFD.
/** @param {string} text */
function escapeXml(text) {
  return text.replace(/[<>&"'\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, (c) => XML_ENTITIES[c] ?? '\ufffd');
}
/** @type {Record<string, string>} */
const XML_ENTITIES = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };

/** @param {string} field @param {string} message */
function fieldError(field, message) {
  return Object.assign(new InputError(`invalid fault config: ${message}`), { field });
}

/** @param {unknown} value @returns {value is Record<string, any>} */
function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** @param {unknown} value @param {number} min @param {number} max */
function isIntegerIn(value, min, max) {
  return Number.isInteger(value) && /** @type {number} */ (value) >= min && /** @type {number} */ (value) <= max;
}

/** @param {unknown} value @param {number} min @param {number} max */
function isNumberIn(value, min, max) {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}
