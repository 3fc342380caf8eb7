// pino JSON on stdout. Endpoint ARNs and device tokens identify a person's phone,
// and credentials are secrets: they are redacted wherever they appear in a log line.
import pino from 'pino';

/** Paths pino replaces with "[Redacted]". */
export const REDACT_PATHS = [
  'endpointArn', '*.endpointArn', '*.*.endpointArn', 'devices', '*.devices',
  'token', '*.token', 'Token', '*.Token',
  'password', '*.password', 'secretAccessKey', '*.secretAccessKey', 'credentials', '*.credentials',
  'authorization', '*.authorization', '*.headers.authorization'
];

/**
 * An SNS platform endpoint's ARN anywhere in text: SNS quotes it in error messages, which reach
 * the logs as `err.message`, `err.stack`, a reason or the message itself. Topic ARNs name no
 * person and stay.
 */
const ENDPOINT_ARN = /arn:aws[a-z-]*:sns:[a-z0-9-]*:\d*:endpoint\/[A-Za-z0-9_.+=@/-]*/g;

/**
 * The one place every log line passes through: paths cannot catch an ARN inside a string,
 * so the serialized line itself is rewritten before it is written.
 * @param {import('pino').DestinationStream} destination
 * @returns {import('pino').DestinationStream}
 */
function redactingText(destination) {
  const target = /** @type {import('pino').DestinationStream & { flush?: Function, flushSync?: Function }} */ (destination);
  return {
    write(line) { return target.write(line.replace(ENDPOINT_ARN, '[endpoint]')); },
    ...(target.flush && { flush: (/** @type {any[]} */ ...args) => target.flush?.(...args) }),
    ...(target.flushSync && { flushSync: () => target.flushSync?.() })
  };
}

/**
 * @param {{ logLevel: import('pino').LevelWithSilent }} config
 * @param {Record<string, unknown>} [bindings] added to every line, such as the process type
 * @param {import('pino').DestinationStream} [destination] stdout unless given (tests)
 */
export function createLogger(config, bindings = {}, destination = pino.destination(1)) {
  const options = {
    level: config.logLevel,
    base: { pid: process.pid, ...bindings },
    redact: { paths: REDACT_PATHS },
    timestamp: pino.stdTimeFunctions.isoTime
  };
  return pino(options, redactingText(destination));
}
