// Where SNS is, decided by the SDK itself: the SNS client's own endpoint rules
// (endpointProvider) with the region, FIPS and dual-stack settings it resolves from the
// same places it always does (its options, AWS_USE_FIPS_ENDPOINT,
// AWS_USE_DUALSTACK_ENDPOINT, the shared config file). Both publish paths use it, so
// they reach the same host, and a combination AWS does not offer stops the process at
// start instead of failing every publish.
import { SNSClient } from '@aws-sdk/client-sns';
import { ConfigError } from '../errors.js';

/**
 * @typedef {{ url: URL, region: string, signingRegion: string, signingName: string,
 *             useFips: boolean, useDualstack: boolean }} SnsEndpoint
 */

/**
 * Resolves the SNS endpoint for this configuration. Throws ConfigError saying which
 * setting to change when the SDK's rules have no endpoint for it.
 * @param {{ region: string, endpoint?: string }} sns
 * @param {{ useFipsEndpoint?: boolean, useDualstackEndpoint?: boolean }} [overrides] for tests; else the SDK's sources
 * @returns {Promise<SnsEndpoint>}
 */
export async function resolveSnsEndpoint(sns, overrides = {}) {
  // Never sends: only its resolved configuration is read. Fixed credentials keep it from
  // starting the credential chain, which this client never needs.
  const client = new SNSClient({ region: sns.region, endpoint: sns.endpoint, ...overrides,
    credentials: { accessKeyId: 'unused', secretAccessKey: 'unused' } });
  try {
    const region = await client.config.region();
    const useFips = await client.config.useFipsEndpoint();
    const useDualstack = await client.config.useDualstackEndpoint();
    /** @type {any} */
    let resolved;
    try {
      resolved = client.config.endpointProvider({ Region: region, UseFIPS: useFips, UseDualStack: useDualstack, Endpoint: sns.endpoint });
    } catch (error) {
      // The SDK's own words go into the message (not a cause): pushctl prints only the message.
      const wanted = [useFips && 'AWS_USE_FIPS_ENDPOINT', useDualstack && 'AWS_USE_DUALSTACK_ENDPOINT'].filter(Boolean);
      const advice = wanted.length === 0 ? 'check AWS_REGION and SNS_ENDPOINT'
        : sns.endpoint ? `FIPS and dual-stack name AWS's own endpoints: unset ${wanted.join(' and ')} or SNS_ENDPOINT`
          : `unset ${wanted.join(' and ')} or choose an AWS_REGION that offers it`;
      throw new ConfigError(`no SNS endpoint for AWS_REGION ${region}${sns.endpoint ? ' and SNS_ENDPOINT' : ''}` +
        `${wanted.length ? ` with ${wanted.join(' and ')}` : ''}: ${/** @type {Error} */ (error).message}; ${advice}`);
    }
    // SNS's rules name no auth scheme today; if they ever do, sign as they say.
    const scheme = resolved.properties?.authSchemes?.find((/** @type {any} */ s) => s.name === 'sigv4');
    return {
      url: new URL(resolved.url.href),
      region,
      signingRegion: scheme?.signingRegion ?? region,
      signingName: scheme?.signingName ?? 'sns',
      useFips,
      useDualstack
    };
  } finally {
    client.destroy();
  }
}
