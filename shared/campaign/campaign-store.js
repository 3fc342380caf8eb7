// Campaigns live in Redis: one hash each for state and counters, a 3-bit
// outcome per device, a bitmap of finished segments, a capped list of failure
// reasons, and for local-time delivery the planned release of each zone group.
// Two indexes, kept in step by the scripts that change a campaign's state: the active
// campaigns (a set), and the recently finished ones (a sorted set by finish time), so
// metrics and the dashboard find a long-running campaign however many came after it.
// pushctl, the workers and the dashboard all read them here.
//
// Retention: when a campaign reaches a final state, the script that puts it there gives
// every key of it a TTL of CAMPAIGN_RETENTION_DAYS (0: kept forever). Its id stays in the
// campaigns index until create() finds the hash gone; list() skips missing hashes meanwhile.
import { randomBytes } from 'node:crypto';
import { CampaignExistsError, InputError, NotFoundError } from '../errors.js';
import { redisKeys } from '../redis.js';

/** @typedef {import('../types.js').CampaignState} CampaignState */
/** @typedef {import('../types.js').SendOutcome} SendOutcome */
/** @typedef {import('../types.js').Message} Message */
/** @typedef {import('../redis.js').PushRedis} PushRedis */

/** @typedef {import('../types.js').Campaign} Campaign */

/** @typedef {import('./local-time.js').ReleaseGroup} ReleaseGroup */

// Outcome codes in the bitfield; 0 is "none yet". Expired and cancelled need a fifth and
// sixth code, so campaigns are created with 3 bits per device (375 KB per million devices);
// those created before (no outcomeBits field) keep their 2-bit layout, never expire, and
// count their cancelled devices per segment instead (finish-segment.lua).
const CODES = /** @type {const} */ ({ delivered: 1, disabled: 2, failed: 3, expired: 4, cancelled: 5 });
// How many ids create() checks for a removed hash at once (the oldest first).
const FORGET_BATCH = 100;
const DAY_MS = 86_400_000;
const OUTCOME_BITS = 3;
const COUNTERS = ['total', 'segmentsTotal', 'segmentsDone', 'delivered', 'disabled', 'failed', 'cancelled', 'expired', 'skipped', 'duplicates',
  'excluded'];

/** A short, time-sortable id people can type: c-<base36 ms>-<6 random>. */
export function newCampaignId() {
  return `c-${Date.now().toString(36)}-${randomBytes(4).toString('hex').slice(0, 6)}`;
}

/**
 * @param {PushRedis} redis
 * @param {{ keyPrefix: string, campaignRetentionDays?: number }} config
 *   campaignRetentionDays: how long a finished campaign's keys are kept (0 or absent: forever)
 */
export function createCampaignStore(redis, { keyPrefix, campaignRetentionDays = 0 }) {
  const keys = redisKeys(keyPrefix);
  const retentionMs = Math.round(campaignRetentionDays * DAY_MS);

  /** @param {string} id */
  async function get(id) {
    const hash = await redis.hgetall(keys.campaign(id).hash);
    return hash.id ? parseCampaign(hash) : null;
  }

  /** @param {string} id */
  async function require(id) {
    const campaign = await get(id);
    if (!campaign) throw new NotFoundError(notFoundMessage(id, campaignRetentionDays));
    return campaign;
  }

  /**
   * Drops from the campaigns index ids whose hash has expired. Only a campaign created
   * more than the retention ago can be gone (its TTL starts when it finishes), so only
   * those, the oldest first, are checked.
   * @param {number} now
   */
  async function forgetRemoved(now) {
    if (retentionMs <= 0) return 0;
    const ids = await redis.zrangebyscore(keys.campaigns, '-inf', `(${now - retentionMs}`, 'LIMIT', 0, FORGET_BATCH);
    if (ids.length === 0) return 0;
    return redis.forgetCampaigns(1 + ids.length, keys.campaigns, ...ids.map((id) => keys.campaign(id).hash), ...ids);
  }

  /**
   * Changes a campaign's state (and the indexes) in one step, if its state is one of `from`.
   * @param {string} id
   * @param {CampaignState} to
   * @param {CampaignState[]} from
   * @param {string} [error] stored with the change
   */
  function setState(id, to, from, error = '') {
    const k = keys.campaign(id);
    return redis.setState(k.hash, keys.activeCampaigns, keys.finishedCampaigns, k.outcomes, k.failures, k.releases, k.leases, k.segments,
      k.undelivered, k.history, to, error, retentionMs, ...from);
  }

  /**
   * finish-segment.lua for one campaign: every key it may give a TTL, then its arguments.
   * @param {string} id
   * @param {'segment' | 'enqueued'} mode
   * @param {number} n the segment's index, or the segment count
   * @param {number} dropped
   */
  function finish(id, mode, n, dropped) {
    const k = keys.campaign(id);
    return redis.finishSegment(k.hash, k.segments, keys.activeCampaigns, keys.finishedCampaigns, k.outcomes, k.failures, k.releases, k.leases,
      k.undelivered, k.history, mode, n, dropped, retentionMs);
  }

  /**
   * The campaigns of `ids` that exist, newest first.
   * @param {string[]} ids
   * @returns {Promise<Campaign[]>}
   */
  async function getMany(ids) {
    if (ids.length === 0) return [];
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.hgetall(keys.campaign(id).hash);
    const rows = /** @type {[Error | null, Record<string, string>][]} */ (await pipeline.exec());
    return rows.map(([, hash]) => hash).filter((hash) => hash?.id).map(parseCampaign).sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Records outcomes once per device; returns how many were new.
   * @param {string} id
   * @param {SendOutcome[]} outcomes
   */
  async function recordOutcomes(id, outcomes) {
    if (outcomes.length === 0) return 0;
    const k = keys.campaign(id);
    const args = [];
    // The ARN, platform and user id go only to the undelivered list (and the ARN to the disabled
    // set and failures list): a delivered device's are not kept.
    for (const o of outcomes) {
      const kept = o.outcome !== 'delivered';
      args.push(o.seq, CODES[o.outcome], kept ? o.endpointArn : '', o.reason ?? '', kept ? o.platform ?? '' : '', kept ? o.userId ?? '' : '');
    }
    return redis.recordOutcomes(k.hash, k.outcomes, k.failures, keys.disabledEndpoints, k.undelivered, ...args);
  }

  /** The campaigns not finished (running, paused, cancelled and still winding down), newest first. */
  async function active() {
    return getMany(await redis.smembers(keys.activeCampaigns));
  }

  /**
   * Moves a campaign from one of `from` to `to`, in one step; the campaign after it, with
   * the state it had. With `idempotent`, a campaign already in `to` is left as it is and
   * returned (a second cancel is a success, not an error).
   * @param {string} id
   * @param {CampaignState} to
   * @param {CampaignState[]} from
   * @param {{ idempotent?: boolean }} [options]
   */
  async function transition(id, to, from, { idempotent = false } = {}) {
    const old = await setState(id, to, from);
    if (old === 'missing') throw new NotFoundError(notFoundMessage(id, campaignRetentionDays));
    if (!from.includes(/** @type {CampaignState} */ (old)) && !(idempotent && old === to)) {
      throw new InputError(`campaign ${id} is ${old}; only a campaign that is ${from.join(' or ')} can be made ${to}`);
    }
    return { ...await require(id), previousState: /** @type {CampaignState} */ (old) };
  }

  return {
    keys,
    get,
    require,

    /**
     * Creates a campaign in state running with nothing enqueued yet. Never over an
     * existing one: a taken id throws CampaignExistsError and changes nothing.
     * @param {{ id?: string, name: string, kind?: string | null, message: Message, source: string, maxRate?: number | null,
     *           skipped?: number, duplicates?: number, excluded?: number, startAt?: number, deadlineAt?: number | null,
     *           ttlMs?: number | null, localTime?: string | null, defaultTimezone?: string | null, createdAt?: number }} spec
     */
    async create(spec) {
      const id = spec.id ?? newCampaignId();
      const now = spec.createdAt ?? Date.now();
      const fields = {
        id, name: spec.name, kind: spec.kind ?? '', state: 'running', message: JSON.stringify(spec.message), source: spec.source,
        maxRate: spec.maxRate ?? '', createdAt: now, enqueued: '0', outcomeBits: OUTCOME_BITS,
        total: 0, segmentsTotal: 0, segmentsDone: 0, delivered: 0, disabled: 0, failed: 0, cancelled: 0, expired: 0,
        skipped: spec.skipped ?? 0, duplicates: spec.duplicates ?? 0, excluded: spec.excluded ?? 0,
        startAt: spec.startAt ?? now, deadlineAt: spec.deadlineAt ?? '', ttlMs: spec.ttlMs ?? '',
        localTime: spec.localTime ?? '', defaultTimezone: spec.localTime ? spec.defaultTimezone ?? '' : ''
      };
      const created = await redis.createCampaign(keys.campaign(id).hash, keys.campaigns, keys.activeCampaigns, id, now,
        ...Object.entries(fields).flat());
      if (created !== 1) throw new CampaignExistsError(id);
      // Housekeeping of the index, bounded: a campaign is created far less often than listed.
      await forgetRemoved(Date.now());
      return require(id);
    },

    /**
     * The newest campaigns, newest first; with `withActive`, every campaign not finished
     * too, however old (a long campaign that many newer ones came after).
     * @param {{ limit?: number, withActive?: boolean }} [options]
     */
    async list({ limit = 50, withActive = false } = {}) {
      const [ids, activeIds] = await Promise.all([
        redis.zrevrange(keys.campaigns, 0, limit - 1),
        withActive ? redis.smembers(keys.activeCampaigns) : []
      ]);
      return getMany([...new Set([...ids, ...activeIds])]);
    },

    active,

    /**
     * The campaigns not finished, and those that finished within `finishedWithinMs`
     * (their last numbers still matter to metrics and charts), newest first.
     * @param {{ finishedWithinMs?: number, now?: number }} [options]
     */
    async current({ finishedWithinMs = 0, now = Date.now() } = {}) {
      const [activeIds, finishedIds] = await Promise.all([
        redis.smembers(keys.activeCampaigns),
        finishedWithinMs > 0 ? redis.zrangebyscore(keys.finishedCampaigns, now - finishedWithinMs, '+inf') : []
      ]);
      return getMany([...new Set([...activeIds, ...finishedIds])]);
    },

    /** @param {string} id */
    pause: (id) => transition(id, 'paused', ['running']),
    /** @param {string} id */
    resume: (id) => transition(id, 'running', ['paused']),
    /** A running or paused campaign; one already cancelled is returned unchanged (previousState 'cancelled'). @param {string} id */
    cancel: (id) => transition(id, 'cancelled', ['running', 'paused'], { idempotent: true }),

    /**
     * Marks a running or paused campaign failed (enqueueing broke off), with the reason, in
     * one step; workers drop what is left of it. A campaign in any other state is left alone.
     * @param {string} id
     * @param {string} reason
     */
    async fail(id, reason) {
      await setState(id, 'failed', ['running', 'paused'], reason);
    },

    /**
     * Adds enqueued devices to the campaign's total as segments go onto the queue.
     * @param {string} id
     * @param {number} devices
     */
    async addTotal(id, devices) {
      await redis.hincrby(keys.campaign(id).hash, 'total', devices);
    },

    /**
     * Stores what the enqueue pass left out of the audience, for status.
     * @param {string} id
     * @param {{ skipped: number, duplicates: number, excluded: number }} counts
     */
    async setAudienceCounts(id, { skipped, duplicates, excluded }) {
      await redis.hset(keys.campaign(id).hash, { skipped, duplicates, excluded });
    },

    /**
     * Declares enqueueing finished; completes the campaign if every segment is already done.
     * @param {string} id
     * @param {number} segmentsTotal
     */
    async markEnqueued(id, segmentsTotal) {
      return finish(id, 'enqueued', segmentsTotal, 0);
    },

    /** Records outcomes once per device (recordOutcomes above). */
    recordOutcomes,

    /**
     * Starts a pass over a segment: the new pass owns it from now on, and any
     * older pass still running (its queue lock lapsed) gets no more tokens.
     * @param {string} id
     * @param {number} index
     * @returns {Promise<string>} the pass id to present when taking tokens
     */
    async claimSegment(id, index) {
      const pass = randomBytes(6).toString('hex');
      await redis.hset(keys.campaign(id).leases, String(index), pass);
      return pass;
    },

    /**
     * Which of a segment's devices already have an outcome (from an earlier delivery of it).
     * @param {string} id
     * @param {number} firstSeq
     * @param {number} count
     * @param {number} [bits] the campaign's outcomeBits, when the caller has it (saves a round trip)
     * @returns {Promise<boolean[]>}
     */
    async doneFlags(id, firstSeq, count, bits) {
      const width = bits ?? Number(await redis.hget(keys.campaign(id).hash, 'outcomeBits') ?? 2);
      const args = [];
      for (let i = 0; i < count; i++) args.push('GET', `u${width}`, `#${firstSeq + i}`);
      const values = /** @type {number[]} */ (await redis.call('BITFIELD_RO', keys.campaign(id).outcomes, ...args));
      return values.map((v) => v !== 0);
    },

    /**
     * Stores a local-time campaign's release plan: when each group of zones goes out.
     * @param {string} id
     * @param {ReleaseGroup[]} groups
     */
    async setReleases(id, groups) {
      if (groups.length === 0) return;
      /** @type {Record<string, string>} */
      const fields = {};
      for (const group of groups) fields[String(group.at)] = JSON.stringify({ zones: group.zones, devices: group.devices });
      await redis.hset(keys.campaign(id).releases, fields);
    },

    /**
     * A local-time campaign's release plan, earliest first; empty for one sent at once.
     * @param {string} id
     * @returns {Promise<ReleaseGroup[]>}
     */
    async releases(id) {
      const hash = await redis.hgetall(keys.campaign(id).releases);
      return Object.entries(hash).map(([at, value]) => ({ at: Number(at), ...JSON.parse(value) })).sort((a, b) => a.at - b.at);
    },

    /**
     * Marks a segment finished (idempotent) and completes the campaign when it was the last.
     * @param {string} id
     * @param {number} index
     * @param {number} dropped devices left unsent because the campaign was cancelled or failed
     */
    async finishSegment(id, index, dropped = 0) {
      return finish(id, 'segment', index, dropped);
    },

    /**
     * Drops a segment's devices left unsent because the campaign was cancelled (or failed),
     * and marks the segment finished. A 3-bit campaign records each as cancelled (code 5),
     * once per device whichever pass drops it, so delivered + disabled + failed + expired +
     * cancelled = total exactly; a 2-bit campaign has no code for it and counts them on the
     * segment, once per segment.
     * @param {Pick<Campaign, 'id' | 'outcomeBits'>} campaign
     * @param {number} index
     * @param {{ seq: number, endpointArn: string, platform?: import('../types.js').Platform, userId?: string }[]} devices
     */
    async dropSegment(campaign, index, devices) {
      if (campaign.outcomeBits !== 3) return finish(campaign.id, 'segment', index, devices.length);
      await recordOutcomes(campaign.id, devices.map((device) => ({ ...device, outcome: /** @type {const} */ ('cancelled') })));
      return finish(campaign.id, 'segment', index, 0);
    },

    /**
     * Per endpoint: is it known to be disabled? One round trip for the batch.
     * @param {string[]} arns
     */
    async disabledFlags(arns) {
      if (arns.length === 0) return [];
      const flags = /** @type {number[]} */ (await redis.smismember(keys.disabledEndpoints, ...arns));
      return flags.map((f) => f === 1);
    },

    /**
     * The report's slots other parts fill in, as stored (JSON text) or null: `learned`
     * (what the governor's model learned in this campaign) and `forecast` (the launch's
     * forecast). campaign-report.js reads them.
     * @param {string} id
     * @returns {Promise<{ learned: string | null, forecast: string | null }>}
     */
    async reportSlots(id) {
      const [learned, forecast] = await redis.hmget(keys.campaign(id).hash, 'learned', 'forecast');
      return { learned, forecast };
    },

    /**
     * The newest failure reasons of a campaign.
     * @param {string} id
     * @param {number} [limit]
     * @returns {Promise<{ seq: number, endpointArn: string, reason: string }[]>}
     */
    async failures(id, limit = 20) {
      const rows = await redis.lrange(keys.campaign(id).failures, -limit, -1);
      return rows.map((row) => JSON.parse(row));
    }
  };
}

/** @typedef {ReturnType<typeof createCampaignStore>} CampaignStore */

/**
 * What `pushctl status` says about an id it cannot find: never created here (another
 * KEY_PREFIX?), or finished long enough ago to have been removed.
 * @param {string} id
 * @param {number} retentionDays
 */
function notFoundMessage(id, retentionDays) {
  if (retentionDays <= 0) return `no campaign with id "${id}" (pushctl list shows them)`;
  const days = `${retentionDays} day${retentionDays === 1 ? '' : 's'}`;
  return `no campaign with id "${id}": it is unknown here, or it finished more than ${days} ago and was removed ` +
    `(CAMPAIGN_RETENTION_DAYS=${retentionDays}); pushctl list shows the campaigns kept`;
}

/**
 * @param {Record<string, string>} hash
 * @returns {Campaign}
 */
function parseCampaign(hash) {
  /** @type {Record<string, number>} */
  const counters = {};
  for (const name of COUNTERS) counters[name] = Number(hash[name] ?? 0);
  return /** @type {Campaign} */ ({
    id: hash.id,
    name: hash.name,
    kind: hash.kind || null,
    state: /** @type {CampaignState} */ (hash.state),
    message: JSON.parse(hash.message),
    source: hash.source,
    maxRate: hash.maxRate ? Number(hash.maxRate) : null,
    createdAt: Number(hash.createdAt),
    finishedAt: hash.finishedAt ? Number(hash.finishedAt) : null,
    enqueued: hash.enqueued === '1',
    error: hash.error || null,
    startAt: hash.startAt ? Number(hash.startAt) : Number(hash.createdAt),
    deadlineAt: hash.deadlineAt ? Number(hash.deadlineAt) : null,
    ttlMs: hash.ttlMs ? Number(hash.ttlMs) : null,
    localTime: hash.localTime || null,
    defaultTimezone: hash.defaultTimezone || null,
    outcomeBits: hash.outcomeBits === '3' ? 3 : 2,
    ...counters
  });
}
