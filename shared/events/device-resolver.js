// Who an event goes to: its userIds' enabled devices from PostgreSQL (one query per
// event), or its endpointArns as given; in both cases without the endpoints SNS has
// reported disabled (the Redis set every campaign also leaves out).
import { PermanentError, TransientError } from '../errors.js';
import { parseDeviceFields } from '../audience/device.js';

/** @typedef {import('../types.js').Device} Device */
/** @typedef {import('../types.js').Platform} Platform */
/** @typedef {import('./event-validator.js').NotificationEvent} NotificationEvent */

/**
 * @typedef {object} Recipients
 * @property {Device[]} devices      what to send to
 * @property {number} excluded       endpoints left out because SNS disabled them
 * @property {number} invalidRows    device rows that are not valid (a bad ARN, say), skipped
 * @property {string[]} unknownUsers userIds with no enabled device (when others had one)
 */

const DEVICES_OF_USERS = `SELECT user_id, endpoint_arn, platform, locale
  FROM devices WHERE user_id = ANY($1) AND enabled`;
// The platform is part of every endpoint ARN: endpoint/<platform>/<application>/<id>.
const ARN_PLATFORM = /:endpoint\/(APNS|APNS_SANDBOX|GCM)\//;
// A dead-letter header holds the unknown ids; a hundred of them would say no more than twenty.
const LISTED_USERS = 20;

/**
 * @param {object} deps
 * @param {Pick<import('pg').Pool, 'query'>} deps.pool
 * @param {{ disabledFlags(arns: string[]): Promise<boolean[]> }} deps.store the campaign store
 */
export function createDeviceResolver({ pool, store }) {
  /** @param {string[]} userIds */
  async function devicesOfUsers(userIds) {
    let rows;
    try {
      ({ rows } = await pool.query(DEVICES_OF_USERS, [userIds]));
    } catch (error) {
      // Down, restarting, or not migrated yet: all fixed without touching the event.
      throw new TransientError(`PostgreSQL: ${/** @type {Error} */ (error).message}`, { cause: error });
    }
    /** @type {Device[]} */
    const devices = [];
    let invalidRows = 0;
    const known = new Set();
    rows.forEach((row, i) => {
      const parsed = parseDeviceFields({ endpointArn: row.endpoint_arn, platform: row.platform, userId: row.user_id, locale: row.locale }, i + 1);
      if ('device' in parsed) {
        devices.push(parsed.device);
        known.add(String(row.user_id));
      } else {
        invalidRows++;
      }
    });
    const unknownUsers = userIds.filter((id) => !known.has(id));
    if (unknownUsers.length === userIds.length) {
      const listed = unknownUsers.slice(0, LISTED_USERS).join(', ');
      const more = unknownUsers.length > LISTED_USERS ? ` (and ${unknownUsers.length - LISTED_USERS} more)` : '';
      throw new PermanentError(`unknown user(s): ${listed}${more}`);
    }
    return { devices, invalidRows, unknownUsers };
  }

  return {
    /**
     * The devices an event goes to. Throws PermanentError when none of its users has
     * an enabled device (nothing could ever be sent), TransientError when PostgreSQL
     * cannot answer.
     * @param {NotificationEvent} event
     * @returns {Promise<Recipients>}
     */
    async resolve(event) {
      let found;
      if (event.userIds) {
        found = await devicesOfUsers(event.userIds);
      } else {
        const devices = (event.endpointArns ?? []).map((endpointArn) => ({
          endpointArn,
          platform: /** @type {Platform} */ (ARN_PLATFORM.exec(endpointArn)?.[1])
        }));
        found = { devices, invalidRows: 0, unknownUsers: [] };
      }
      const disabled = await store.disabledFlags(found.devices.map((d) => d.endpointArn));
      const devices = found.devices.filter((_, i) => !disabled[i]);
      return { ...found, devices, excluded: found.devices.length - devices.length };
    }
  };
}
