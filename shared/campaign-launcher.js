// Turns an audience and a message into a campaign on the queue, streaming:
// devices go out in segments as they are read, so memory stays flat however
// large the audience. Validation (--strict, confirmation) happens in a scan
// pass before anything is stored, so a rejected campaign leaves nothing behind.
import { readAudience, summarizeAudience } from './audience/audience-reader.js';
import { PushError } from './errors.js';

/** @typedef {import('./types.js').Segment} Segment */
/** @typedef {import('./types.js').Device} Device */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./campaign-store.js').CampaignStore} CampaignStore */
/** @typedef {Parameters<typeof readAudience>[0]} AudienceSource */

// Segments are handed to the queue in groups: one round trip per group keeps
// enqueueing fast, and a group of this size stays small in memory.
const SEGMENTS_PER_ENQUEUE = 20;

/**
 * Reads the whole audience once and counts it, storing nothing.
 * @param {AudienceSource} source
 * @param {CampaignStore} store
 */
export function scanAudience(source, store) {
  return summarizeAudience(readAudience(source, { isDisabled: store.disabledFlags }));
}

/**
 * Creates the campaign and enqueues its segments. On a failure part-way the
 * campaign is marked failed, so workers drop the segments already queued.
 * @param {object} spec
 * @param {AudienceSource} spec.source
 * @param {Message} spec.message
 * @param {string} spec.name
 * @param {string} spec.sourceLabel
 * @param {number | null} [spec.maxRate]
 * @param {string} [spec.id]
 * @param {AbortSignal} [spec.signal] aborts enqueueing (Ctrl-C); the campaign is then marked failed
 * @param {(campaign: { id: string }) => void} [spec.onCreated] told the id before the first segment is stored
 * @param {object} deps
 * @param {CampaignStore} deps.store
 * @param {import('./types.js').QueueAdapter<Segment>} deps.queue
 * @param {number} deps.segmentSize
 * @param {import('pino').Logger} deps.logger
 */
export async function launchCampaign(spec, { store, queue, segmentSize, logger }) {
  const campaign = await store.create({
    id: spec.id, name: spec.name, message: spec.message, source: spec.sourceLabel, maxRate: spec.maxRate ?? null
  });
  const log = logger.child({ campaignId: campaign.id });
  spec.onCreated?.(campaign);
  const counts = { devices: 0, skipped: 0, duplicates: 0, excluded: 0, segments: 0 };
  /** @type {Segment[]} */
  let segments = [];
  /** @type {Device[]} */
  let devices = [];

  const flushSegments = async () => {
    spec.signal?.throwIfAborted();
    if (segments.length === 0) return;
    const queued = segments.reduce((n, s) => n + s.devices.length, 0);
    // Count before enqueueing: a worker may finish a segment before enqueue returns.
    await store.addTotal(campaign.id, queued);
    await queue.enqueue(segments);
    segments = [];
  };
  const closeSegment = () => {
    if (devices.length === 0) return;
    segments.push({ campaignId: campaign.id, index: counts.segments, firstSeq: counts.devices - devices.length, devices });
    counts.segments++;
    devices = [];
  };

  try {
    for await (const item of readAudience(spec.source, { isDisabled: store.disabledFlags })) {
      if ('device' in item) {
        devices.push(item.device);
        counts.devices++;
        if (devices.length === segmentSize) {
          closeSegment();
          if (segments.length === SEGMENTS_PER_ENQUEUE) await flushSegments();
        }
      } else if ('skipped' in item) counts.skipped++;
      else if ('duplicate' in item) counts.duplicates++;
      else if ('disabled' in item) counts.excluded++;
    }
    closeSegment();
    await flushSegments();
    await store.setAudienceCounts(campaign.id, counts);
    await store.markEnqueued(campaign.id, counts.segments);
  } catch (error) {
    const reason = `enqueueing failed: ${/** @type {Error} */ (error).message}`;
    // Workers drop the segments of a failed campaign; without this the part
    // already queued would be sent and the campaign would never complete.
    const marked = await store.fail(campaign.id, reason).then(() => true, () => false);
    log.error({ err: error, enqueuedDevices: counts.devices, marked }, 'enqueueing failed');
    throw new EnqueueError(campaign.id, marked, reason, { cause: error });
  }
  log.info({ devices: counts.devices, segments: counts.segments, skipped: counts.skipped, duplicates: counts.duplicates,
    excluded: counts.excluded }, 'campaign enqueued');
  return { campaign: await store.require(campaign.id), counts };
}

/** Enqueueing broke off part-way. `marked` says whether the campaign could be marked failed. */
export class EnqueueError extends PushError {
  /**
   * @param {string} campaignId
   * @param {boolean} marked
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(campaignId, marked, message, options) {
    super(message, options);
    this.code = 'PUSH_ERR_ENQUEUE';
    this.campaignId = campaignId;
    this.marked = marked;
  }
}
