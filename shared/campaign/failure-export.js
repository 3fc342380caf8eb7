// pushctl failures: the devices of a campaign that were not delivered (disabled, failed,
// expired, cancelled), as CSV (RFC 4180) or NDJSON, to fix the audience and send again.
// The CSV's header starts with endpointArn and platform, so the file is an audience
// `pushctl send --audience` reads back (it ignores the outcome and reason columns).
//
// Rows come from the campaign's undelivered list (record-outcomes.lua), read in pages so
// a campaign with many failures streams in flat memory. It keeps the first 200,000; the
// counters say how many more there were. Campaigns recorded before the list existed have
// only the failures list (the newest 1,000 failed, without platform or user id).
//
// The rows identify people's phones: they go to the caller's stream (stdout or --output),
// never to a log.
import { once } from 'node:events';
import { InputError } from '../errors.js';
import { endpointArnPlatform } from '../audience/device.js';

export const FAILURE_FORMATS = /** @type {const} */ (['csv', 'ndjson']);
const PAGE = 1000;
const OUTCOME_NAMES = ['', 'delivered', 'disabled', 'failed', 'expired', 'cancelled'];
const CSV_COLUMNS = /** @type {const} */ (['endpointArn', 'platform', 'userId', 'outcome', 'reason']);

/**
 * @typedef {{ endpointArn: string, platform: string, userId: string, outcome: string, reason: string }} FailureRow
 */

/**
 * The format asked for, checked: csv or ndjson.
 * @param {unknown} format
 * @returns {'csv' | 'ndjson'}
 */
export function failureFormat(format) {
  if (format === undefined) return 'csv';
  if (typeof format === 'string' && /** @type {readonly string[]} */ (FAILURE_FORMATS).includes(format)) return /** @type {'csv' | 'ndjson'} */ (format);
  throw new InputError(`--format must be csv or ndjson, not ${JSON.stringify(format)}`);
}

/**
 * Writes every undelivered device of a campaign to `out`, honouring backpressure.
 * @param {object} deps
 * @param {import('../redis.js').PushRedis} deps.redis
 * @param {import('./campaign-store.js').CampaignStore} deps.store
 * @param {string} id
 * @param {'csv' | 'ndjson'} format
 * @param {NodeJS.WritableStream} out
 * @returns {Promise<{ rows: number, notDelivered: number, source: 'undelivered' | 'failures' }>}
 *   notDelivered: what the counters say; more than rows when the list was capped or older
 */
export async function exportFailures({ redis, store }, id, format, out) {
  const campaign = await store.require(id);
  const k = store.keys.campaign(id);
  const notDelivered = campaign.disabled + campaign.failed + campaign.expired + campaign.cancelled;
  const write = async (/** @type {string} */ text) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  if (format === 'csv') await write(CSV_COLUMNS.join(',') + '\r\n');
  const emit = (/** @type {FailureRow} */ row) => write(format === 'csv' ? CSV_COLUMNS.map((c) => csvField(row[c])).join(',') + '\r\n' : JSON.stringify(row) + '\n');

  const listed = await redis.llen(k.undelivered);
  const source = listed > 0 || campaign.failed === 0 ? 'undelivered' : 'failures';
  const key = source === 'undelivered' ? k.undelivered : k.failures;
  let rows = 0;
  for (let start = 0; ; start += PAGE) {
    const page = await redis.lrange(key, start, start + PAGE - 1);
    for (const entry of page) {
      const e = JSON.parse(entry);
      await emit(source === 'undelivered'
        ? { endpointArn: e.a, platform: e.p || (endpointArnPlatform(e.a) ?? ''), userId: e.u ?? '', outcome: OUTCOME_NAMES[e.o] ?? String(e.o), reason: e.r ?? '' }
        : { endpointArn: e.endpointArn, platform: (endpointArnPlatform(e.endpointArn) ?? ''), userId: '', outcome: 'failed', reason: e.reason ?? '' });
      rows++;
    }
    if (page.length < PAGE) break;
  }
  return { rows, notDelivered, source };
}

/**
 * One CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line
 * break (quotes doubled). A field starting with = + - @ is left as it is: this file is
 * for pushctl, not a spreadsheet.
 * @param {string} value
 */
export function csvField(value) {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
