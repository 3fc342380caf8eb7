// pino JSON on stdout. Endpoint ARNs and device tokens identify a person's phone,
// and credentials are secrets: they are redacted wherever they appear in a log object.
import pino from 'pino';

/** Paths pino replaces with "[Redacted]". */
export const REDACT_PATHS = [
  'endpointArn', '*.endpointArn', '*.*.endpointArn', 'devices', '*.devices',
  'token', '*.token', 'Token', '*.Token',
  'password', '*.password', 'secretAccessKey', '*.secretAccessKey', 'credentials', '*.credentials',
  'authorization', '*.authorization', '*.headers.authorization'
];

/**
 * @param {{ logLevel: import('pino').LevelWithSilent }} config
 * @param {Record<string, unknown>} [bindings] added to every line, such as the process type
 * @param {import('pino').DestinationStream} [destination] stdout unless given (tests)
 */
export function createLogger(config, bindings = {}, destination) {
  const options = {
    level: config.logLevel,
    base: { pid: process.pid, ...bindings },
    redact: { paths: REDACT_PATHS },
    timestamp: pino.stdTimeFunctions.isoTime
  };
  return destination ? pino(options, destination) : pino(options);
}
