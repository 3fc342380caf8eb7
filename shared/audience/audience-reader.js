// One reader for every audience source, adding what all campaigns need on top of
// parsing: each endpoint is sent to once (marketing lists are often unions of
// segments), and endpoints SNS has already disabled are left out instead of being
// published to, failing, and counted as failures.
import { createEndpointSet } from './endpoint-set.js';
import { readAudienceFile } from './file-source.js';
import { readAudienceQuery } from './postgres-source.js';

/** @typedef {import('../types.js').AudienceItem} AudienceItem */
/** @typedef {import('../types.js').SkippedLine} SkippedLine */
/** @typedef {import('../types.js').Platform} Platform */

/**
 * Where an audience comes from: a CSV or NDJSON file, or a SELECT over PostgreSQL.
 * `pool` may be a pg.Pool (the read runs in its own read-only snapshot) or a client
 * already inside a transaction (the read joins it; see readAudienceQuery).
 * A file may carry the name its messages use and its format (standard input, spooled to
 * a temporary file, is "stdin" in --format's format, whatever the file is called).
 * @typedef {{ file: string, name?: string, format?: 'csv' | 'ndjson' }
 *   | { query: string, pool: import('pg').Pool | import('pg').PoolClient | import('pg').Client }} AudienceSource
 */

/**
 * Answers, for each endpoint ARN, whether it is known to be disabled; one flag per ARN,
 * in order. The CLI passes a Redis SMISMEMBER over the disabled-endpoints set.
 * @typedef {(endpointArns: string[]) => Promise<boolean[]>} DisabledCheck
 */

/** Lines kept in a summary's skippedLines; the counts stay exact. */
export const SKIPPED_LINES_KEPT = 100;

/**
 * Reads an audience in order, yielding `device` and `skipped` items as the source does,
 * a `duplicate` item for a device whose endpointArn appeared before, and a `disabled`
 * item for a device isDisabled flags. isDisabled is called with up to `batchSize` ARNs
 * at a time; items are held back only until their batch is answered, so order is kept.
 * @param {AudienceSource} source
 * @param {{ isDisabled?: DisabledCheck, batchSize?: number }} [options]
 * @returns {AsyncGenerator<AudienceItem>}
 */
export async function* readAudience(source, { isDisabled, batchSize = 1000 } = {}) {
  const items = 'file' in source ? readAudienceFile(source.file, source) : readAudienceQuery(source.pool, source.query);
  const seen = createEndpointSet();
  /** @type {AudienceItem[]} */
  let held = [];
  /** @type {string[]} */
  let unchecked = [];

  async function* release() {
    const flags = unchecked.length > 0 && isDisabled ? await isDisabled(unchecked) : [];
    if (!Array.isArray(flags) || flags.length !== unchecked.length) {
      throw new TypeError(`isDisabled answered ${Array.isArray(flags) ? flags.length : typeof flags} flags for ${unchecked.length} endpoints`);
    }
    const batch = held;
    held = [];
    unchecked = [];
    let next = 0;
    for (const item of batch) {
      if ('device' in item && flags[next++]) {
        yield { disabled: { line: item.line, endpointArn: item.device.endpointArn } };
      } else {
        yield item;
      }
    }
  }

  for await (const read of items) {
    /** @type {AudienceItem} */
    let item = read;
    let check = false;
    if ('device' in item) {
      if (!seen.add(item.device.endpointArn)) item = { duplicate: { line: item.line, endpointArn: item.device.endpointArn } };
      else check = isDisabled !== undefined;
    }
    // Nothing is waiting for a check and this item needs none: pass it straight on.
    if (!check && held.length === 0) {
      yield item;
      continue;
    }
    held.push(item);
    if (check && 'device' in item) unchecked.push(item.device.endpointArn);
    // The second bound stops a long run of skipped lines from piling up behind one device.
    if (unchecked.length >= batchSize || held.length >= 4 * batchSize) yield* release();
  }
  if (held.length > 0) yield* release();
}

/**
 * Consumes an audience and counts it: devices to send to, skipped lines (the first
 * 100 kept with their reasons), duplicates, disabled endpoints, and devices per
 * platform and per time zone ('' for devices that name none; a few hundred zones at most).
 * @param {AsyncIterable<AudienceItem>} items
 */
export async function summarizeAudience(items) {
  let devices = 0;
  let skipped = 0;
  let duplicates = 0;
  let disabled = 0;
  /** @type {SkippedLine[]} */
  const skippedLines = [];
  /** @type {Record<Platform, number>} */
  const byPlatform = { APNS: 0, APNS_SANDBOX: 0, GCM: 0 };
  /** @type {Map<string, number>} */
  const byTimezone = new Map();
  for await (const item of items) {
    if ('device' in item) {
      devices += 1;
      byPlatform[item.device.platform] += 1;
      const zone = item.device.timezone ?? '';
      byTimezone.set(zone, (byTimezone.get(zone) ?? 0) + 1);
    } else if ('skipped' in item) {
      skipped += 1;
      if (skippedLines.length < SKIPPED_LINES_KEPT) skippedLines.push(item.skipped);
    } else if ('duplicate' in item) {
      duplicates += 1;
    } else {
      disabled += 1;
    }
  }
  return { devices, skipped, duplicates, disabled, skippedLines, byPlatform, byTimezone };
}
