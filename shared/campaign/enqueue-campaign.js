// Turns an audience and a message into a campaign on the queue, streaming:
// devices go out in segments as they are read, so memory stays flat however
// large the audience. Validation (--strict, confirmation) happens in a scan
// pass before anything is stored (launch.js), so a rejected campaign leaves
// nothing behind.
//
// Local-time delivery: devices are grouped by their zone's release instant (zones
// with the same offset share one), each group filling its own segments, and every
// segment carries its release time, so the queue holds it until then. All groups
// draw from the one token bucket, so overlapping groups never exceed the rate.
// Deadlines: every segment carries the instant after which none of it is sent.
import { readAudience, summarizeAudience } from '../audience/audience-reader.js';
import { EnqueueError } from '../errors.js';
import { nextLocalOccurrence, groupReleases } from './local-time.js';
import { deadlineFor } from './campaign-timing.js';

/** @typedef {import('../types.js').Segment} Segment */
/** @typedef {import('../types.js').Device} Device */
/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('./campaign-store.js').CampaignStore} CampaignStore */
/** @typedef {Parameters<typeof readAudience>[0]} AudienceSource */
/** @typedef {import('./local-time.js').LocalTime} LocalTime */
/** @typedef {import('./campaign-timing.js').CampaignTiming} CampaignTiming */
/** @typedef {import('./local-time.js').ReleaseGroup} ReleaseGroup */
/** @typedef {(zone: string, time: LocalTime, startAt: number) => number} ReleaseClock */

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
 * The release plan of a local-time campaign from the scan's device count per zone
 * (devices naming no zone are under ''), or a single group at startAt without local time.
 * @param {Map<string, number>} devicesByZone
 * @param {{ localTime: LocalTime | null, defaultTimezone: string, startAt: number }} timing
 * @param {ReleaseClock} [releaseClock] the zone arithmetic; tests inject a faster clock
 * @returns {ReleaseGroup[]}
 */
export function planReleases(devicesByZone, { localTime: time, defaultTimezone, startAt }, releaseClock = nextLocalOccurrence) {
  if (time === null) {
    let devices = 0;
    for (const n of devicesByZone.values()) devices += n;
    return [{ at: startAt, zones: [], devices }];
  }
  /** @type {Map<string, number>} */
  const byZone = new Map();
  for (const [zone, devices] of devicesByZone) {
    const resolved = zone || defaultTimezone;
    byZone.set(resolved, (byZone.get(resolved) ?? 0) + devices);
  }
  return groupReleases(byZone, (zone) => releaseClock(zone, time, startAt));
}

/**
 * Creates the campaign and enqueues its segments. On a failure part-way the
 * campaign is marked failed, so workers drop the segments already queued. With an
 * `id` that is taken, throws CampaignExistsError and changes nothing. The timing
 * comes parsed and checked (parseCampaignTiming): nothing here reads text.
 * @param {object} spec
 * @param {AudienceSource} spec.source
 * @param {Message} spec.message
 * @param {string} spec.name
 * @param {string | null} [spec.kind] the message kind, or null
 * @param {string} spec.sourceLabel
 * @param {number | null} [spec.maxRate]
 * @param {string} [spec.id]
 * @param {number} [spec.startAt] the instant local times and TTLs count from (ms); default now.
 *   A scheduler passes the fire time, so every process computes the same releases.
 * @param {Partial<CampaignTiming>} [spec.timing] when the campaign may send; default at once, without a deadline
 * @param {AbortSignal} [spec.signal] aborts enqueueing (Ctrl-C); the campaign is then marked failed
 * @param {(campaign: { id: string }) => void} [spec.onCreated] told the id before the first segment is stored
 * @param {object} deps
 * @param {CampaignStore} deps.store
 * @param {import('../types.js').QueueAdapter<Segment>} deps.queue
 * @param {number} deps.segmentSize
 * @param {import('pino').Logger} deps.logger
 * @param {ReleaseClock} [deps.releaseClock] the zone arithmetic (nextLocalOccurrence); tests inject a faster clock
 */
export async function enqueueCampaign(spec, { store, queue, segmentSize, logger, releaseClock = nextLocalOccurrence }) {
  const now = Date.now();
  const startAt = spec.startAt ?? now;
  const timing = { deadlineAt: spec.timing?.deadlineAt ?? null, ttlMs: spec.timing?.ttlMs ?? null };
  const localTime = spec.timing?.localTime ?? null;
  const defaultTimezone = spec.timing?.defaultTimezone ?? 'UTC';
  // Outside the try below on purpose: when the id is taken (another scheduler launched
  // this fire first) create throws CampaignExistsError and this launch must not touch,
  // let alone fail, a campaign it did not create.
  const campaign = await store.create({
    id: spec.id, name: spec.name, kind: spec.kind ?? null, message: spec.message, source: spec.sourceLabel, maxRate: spec.maxRate ?? null,
    // One clock reading for both: a campaign sent at once starts exactly when it is created.
    createdAt: now, startAt, localTime: localTime?.text ?? null, defaultTimezone, ttlMs: timing.ttlMs,
    // Without local time every device starts at startAt, so the TTL is one campaign-wide deadline.
    deadlineAt: localTime ? timing.deadlineAt : deadlineFor(timing, startAt)
  });
  const log = logger.child({ campaignId: campaign.id });
  spec.onCreated?.(campaign);
  const counts = { devices: 0, skipped: 0, duplicates: 0, excluded: 0, segments: 0 };
  /** @type {Segment[]} */
  let segments = [];
  // One open segment per release instant: a group fills its own segments as its devices arrive.
  /** @type {Map<number, Device[]>} */
  const open = new Map();
  /** @type {Map<string, number>} zone -> release instant, computed once per zone */
  const releaseOfZone = new Map();
  /** @type {Map<number, ReleaseGroup>} */
  const groups = new Map();
  let nextSeq = 0;

  /** @param {Device} device */
  const releaseOf = (device) => {
    if (!localTime) return startAt;
    const zone = device.timezone ?? defaultTimezone;
    let at = releaseOfZone.get(zone);
    if (at === undefined) {
      at = releaseClock(zone, localTime, startAt);
      releaseOfZone.set(zone, at);
      let group = groups.get(at);
      if (!group) groups.set(at, group = { at, zones: [], devices: 0 });
      group.zones.push(zone);
    }
    /** @type {ReleaseGroup} */ (groups.get(at)).devices++;
    return at;
  };

  const flushSegments = async () => {
    spec.signal?.throwIfAborted();
    if (segments.length === 0) return;
    const queued = segments.reduce((n, s) => n + s.devices.length, 0);
    // Count before enqueueing: a worker may finish a segment before enqueue returns.
    await store.addTotal(campaign.id, queued);
    await queue.enqueue(segments);
    segments = [];
  };
  // Sequence numbers are handed out as segments close, so each segment's are consecutive.
  /** @param {number} releaseAt */
  const closeSegment = (releaseAt) => {
    const devices = open.get(releaseAt);
    if (!devices || devices.length === 0) return;
    open.delete(releaseAt);
    /** @type {Segment} */
    const segment = { campaignId: campaign.id, index: counts.segments, firstSeq: nextSeq, devices };
    const deadlineAt = deadlineFor(timing, releaseAt);
    // A group due after its deadline is still queued, until the deadline, so that its
    // devices are counted as expired then (and nothing of it is ever sent).
    if (releaseAt > startAt) segment.releaseAt = deadlineAt === null ? releaseAt : Math.min(releaseAt, deadlineAt);
    if (deadlineAt !== null) segment.deadlineAt = deadlineAt;
    segments.push(segment);
    nextSeq += devices.length;
    counts.segments++;
  };

  try {
    for await (const item of readAudience(spec.source, { isDisabled: store.disabledFlags })) {
      if ('device' in item) {
        const releaseAt = releaseOf(item.device);
        let devices = open.get(releaseAt);
        if (!devices) open.set(releaseAt, devices = []);
        devices.push(item.device);
        counts.devices++;
        if (devices.length === segmentSize) {
          closeSegment(releaseAt);
          if (segments.length === SEGMENTS_PER_ENQUEUE) await flushSegments();
        }
      } else if ('skipped' in item) counts.skipped++;
      else if ('duplicate' in item) counts.duplicates++;
      else if ('disabled' in item) counts.excluded++;
    }
    for (const releaseAt of [...open.keys()].sort((a, b) => a - b)) closeSegment(releaseAt);
    await flushSegments();
    await store.setReleases(campaign.id, [...groups.values()].map((g) => ({ ...g, zones: [...g.zones].sort() })));
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
    excluded: counts.excluded, releaseGroups: groups.size }, 'campaign enqueued');
  return { campaign: await store.require(campaign.id), counts };
}
