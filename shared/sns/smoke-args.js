// `npm run smoke:sns`: the arguments of the one real push (scripts/smoke-sns.js), checked
// here where a test can reach them. It publishes with the caller's AWS credentials to a
// real phone, so it runs only when asked by name: never under CI, never without the ARN.
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';
import { endpointArnPlatform } from '../audience/device.js';

export const SMOKE_USAGE = `npm run smoke:sns -- --endpoint-arn ARN [--message FILE] [--locale TAG] [--sns-endpoint URL]

Publishes one push, through the project's SNS client and message rendering, to one
platform endpoint, with your AWS credentials (the SDK's chain: AWS_PROFILE, AWS_ACCESS_KEY_ID...),
in the endpoint's own region. Prints SNS's answer: exit 0 delivered, 1 not, 2 bad arguments.
Refuses to run under CI. --message defaults to examples/announcement.json; --sns-endpoint
sends to another SNS API (the local emulator) instead of AWS.`;

/**
 * @typedef {object} SmokeRequest
 * @property {string} endpointArn
 * @property {'APNS' | 'APNS_SANDBOX' | 'GCM'} platform
 * @property {string} region       the ARN's: a platform endpoint is published to in its own region
 * @property {string} messageFile
 * @property {string | undefined} locale
 * @property {string | undefined} snsEndpoint  unset: AWS
 */

/**
 * Parses the smoke test's arguments. Pure: `env` is only asked whether this is CI.
 * @param {string[]} argv  the arguments after the script
 * @param {Record<string, string | undefined>} env
 * @returns {SmokeRequest | 'help'}
 */
export function parseSmokeArgs(argv, env) {
  // CI services set CI (GitHub Actions, GitLab, CircleCI, Travis: "true"); anything but false/0 counts.
  const ci = env.CI?.trim().toLowerCase();
  if (ci && ci !== 'false' && ci !== '0') {
    throw new InputError(`refused under CI (CI=${env.CI}): this publishes a real push with real AWS credentials; nothing was sent`);
  }
  /** @type {Record<string, string>} */
  const values = {};
  const takes = new Set(['--endpoint-arn', '--message', '--locale', '--sns-endpoint']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return 'help';
    const [flag, inline] = arg.split(/=(.*)/s, 2);
    if (!takes.has(flag)) throw new InputError(`unknown argument "${arg}"\n\n${SMOKE_USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new InputError(`${flag} needs a value`);
    values[flag] = value;
  }
  const endpointArn = values['--endpoint-arn'];
  if (!endpointArn) {
    throw new InputError(`--endpoint-arn ARN is required: the one device endpoint to send to (nothing is sent without it)\n\n${SMOKE_USAGE}`);
  }
  const platform = endpointArnPlatform(endpointArn);
  if (platform === null || !['APNS', 'APNS_SANDBOX', 'GCM'].includes(platform)) {
    throw new InputError('--endpoint-arn must be an SNS platform endpoint ARN for APNS, APNS_SANDBOX or GCM (arn:aws:sns:<region>:<account>:endpoint/<platform>/<app>/<id>)');
  }
  const snsEndpoint = values['--sns-endpoint'];
  if (snsEndpoint !== undefined && !/^https?:\/\/[^/\s]+/.test(snsEndpoint)) {
    throw new InputError(`--sns-endpoint must be an http:// or https:// URL, got "${snsEndpoint}"`);
  }
  return {
    endpointArn,
    platform: /** @type {'APNS' | 'APNS_SANDBOX' | 'GCM'} */ (platform),
    region: endpointArn.split(':')[3],
    messageFile: values['--message'] ?? fileURLToPath(new URL('../../examples/announcement.json', import.meta.url)),
    locale: values['--locale'],
    snsEndpoint
  };
}
