// Platform endpoints as SNS keeps them. Benchmarks publish to 100,000+ made-up ARNs,
// so any well-formed ARN is a live endpoint without CreatePlatformEndpoint; only the
// ones the API touched, a fault disabled or a delete removed take up memory.
import { createHash } from 'node:crypto';
import { errorAnswer, invalid, okAnswer } from './query-protocol.js';
import { escapeXml } from '../shared/escape-xml.js';

/** @typedef {import('./query-protocol.js').Answer} Answer */

const ENDPOINT_ATTRIBUTES = new Set(['CustomUserData', 'Enabled', 'Token']);
const PLATFORMS = 'APNS|APNS_SANDBOX|APNS_VOIP|APNS_VOIP_SANDBOX|GCM|ADM|BAIDU|MPNS|WNS';
/** A well-formed platform endpoint ARN; Publish accepts any of these. */
export const ENDPOINT_ARN = new RegExp(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\\d{12}:endpoint/(${PLATFORMS})/[^/]+/[A-Za-z0-9-]+$`);
const APP_ARN = new RegExp(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\\d{12}:app/(${PLATFORMS})/([^/]+)$`);

/**
 * Platform endpoints created through the API, plus the fault-disabled and deleted
 * ARNs. ARNs never created are live unless a fault or a delete says otherwise.
 * @param {string} region
 */
export function createEndpointStore(region) {
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

/** A name-based (v5-style) UUID, so an ARN follows from its inputs. @param {string} name */
function uuidFrom(name) {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
