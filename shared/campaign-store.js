// Campaigns live in Redis: one hash each for state and counters, a 2-bit
// outcome per device, a bitmap of finished segments, a capped list of failure
// reasons. pushctl, the workers and (later) the dashboard all read them here.
import { randomBytes } from 'node:crypto';
import { InputError, NotFoundError } from './errors.js';
import { redisKeys } from './redis.js';

/** @typedef {import('./types.js').CampaignState} CampaignState */
/** @typedef {import('./types.js').SendOutcome} SendOutcome */
/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./redis.js').PushRedis} PushRedis */

/**
 * @typedef {object} Campaign
 * @property {string} id
 * @property {string} name
 * @property {CampaignState} state
 * @property {Message} message
 * @property {string} source        where the audience came from, for people reading status
 * @property {number | null} maxRate sends/s cap for this campaign alone
 * @property {number} createdAt     ms since epoch
 * @property {number | null} finishedAt
 * @property {boolean} enqueued     every segment is on the queue
 * @property {number} total         devices enqueued
 * @property {number} segmentsTotal
 * @property {number} segmentsDone
 * @property {number} delivered
 * @property {number} disabled
 * @property {number} failed
 * @property {number} cancelled     devices dropped unsent by a cancel
 * @property {number} skipped       audience lines rejected as invalid
 * @property {number} duplicates    audience lines naming an endpoint already listed
 * @property {number} excluded      endpoints left out because they were already disabled
 * @property {string | null} error
 */

const CODES = /** @type {const} */ ({ delivered: 1, disabled: 2, failed: 3 });
const COUNTERS = ['total', 'segmentsTotal', 'segmentsDone', 'delivered', 'disabled', 'failed', 'cancelled', 'skipped', 'duplicates', 'excluded'];

/** A short, time-sortable id people can type: c-<base36 ms>-<6 random>. */
export function newCampaignId() {
  return `c-${Date.now().toString(36)}-${randomBytes(4).toString('hex').slice(0, 6)}`;
}

/**
 * @param {PushRedis} redis
 * @param {{ keyPrefix: string }} config
 */
export function createCampaignStore(redis, { keyPrefix }) {
  const keys = redisKeys(keyPrefix);

  /** @param {string} id */
  async function get(id) {
    const hash = await redis.hgetall(keys.campaign(id).hash);
    return hash.id ? parseCampaign(hash) : null;
  }

  /** @param {string} id */
  async function require(id) {
    const campaign = await get(id);
    if (!campaign) throw new NotFoundError(`no campaign with id "${id}" (pushctl list shows them)`);
    return campaign;
  }

  /**
   * @param {string} id
   * @param {CampaignState} to
   * @param {CampaignState[]} from
   */
  async function transition(id, to, from) {
    const old = await redis.setState(keys.campaign(id).hash, to, ...from);
    if (old === 'missing') throw new NotFoundError(`no campaign with id "${id}" (pushctl list shows them)`);
    if (!from.includes(/** @type {CampaignState} */ (old))) {
      throw new InputError(`campaign ${id} is ${old}; only a campaign that is ${from.join(' or ')} can be made ${to}`);
    }
    return require(id);
  }

  return {
    keys,
    get,
    require,

    /**
     * Creates a campaign in state running with nothing enqueued yet.
     * @param {{ id?: string, name: string, message: Message, source: string, maxRate?: number | null,
     *           skipped?: number, duplicates?: number, excluded?: number }} spec
     */
    async create(spec) {
      const id = spec.id ?? newCampaignId();
      const now = Date.now();
      const k = keys.campaign(id);
      await redis.multi()
        .hset(k.hash, {
          id, name: spec.name, state: 'running', message: JSON.stringify(spec.message), source: spec.source,
          maxRate: spec.maxRate ?? '', createdAt: now, enqueued: '0',
          total: 0, segmentsTotal: 0, segmentsDone: 0, delivered: 0, disabled: 0, failed: 0, cancelled: 0,
          skipped: spec.skipped ?? 0, duplicates: spec.duplicates ?? 0, excluded: spec.excluded ?? 0
        })
        .zadd(keys.campaigns, now, id)
        .exec();
      return require(id);
    },

    /** @param {{ limit?: number }} [options] newest first */
    async list({ limit = 50 } = {}) {
      const ids = await redis.zrevrange(keys.campaigns, 0, limit - 1);
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hgetall(keys.campaign(id).hash);
      const rows = /** @type {[Error | null, Record<string, string>][]} */ (await pipeline.exec());
      return rows.map(([, hash]) => hash).filter((hash) => hash?.id).map(parseCampaign);
    },

    /** @param {string} id */
    pause: (id) => transition(id, 'paused', ['running']),
    /** @param {string} id */
    resume: (id) => transition(id, 'running', ['paused']),
    /** @param {string} id */
    cancel: (id) => transition(id, 'cancelled', ['running', 'paused']),

    /**
     * Marks a campaign failed (enqueueing broke off); workers drop what is left of it.
     * @param {string} id
     * @param {string} reason
     */
    async fail(id, reason) {
      await redis.hset(keys.campaign(id).hash, 'error', reason);
      await redis.setState(keys.campaign(id).hash, 'failed', 'running', 'paused');
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
      const k = keys.campaign(id);
      return redis.finishSegment(k.hash, k.segments, 'enqueued', segmentsTotal, 0);
    },

    /**
     * Records outcomes once per device; returns how many were new.
     * @param {string} id
     * @param {SendOutcome[]} outcomes
     */
    async recordOutcomes(id, outcomes) {
      if (outcomes.length === 0) return 0;
      const k = keys.campaign(id);
      const args = [];
      for (const o of outcomes) args.push(o.seq, CODES[o.outcome], o.endpointArn, o.reason ?? '');
      return redis.recordOutcomes(k.hash, k.outcomes, k.failures, keys.disabledEndpoints, ...args);
    },

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
     * @returns {Promise<boolean[]>}
     */
    async doneFlags(id, firstSeq, count) {
      const args = [];
      for (let i = 0; i < count; i++) args.push('GET', 'u2', `#${firstSeq + i}`);
      const values = /** @type {number[]} */ (await redis.call('BITFIELD_RO', keys.campaign(id).outcomes, ...args));
      return values.map((v) => v !== 0);
    },

    /**
     * Marks a segment finished (idempotent) and completes the campaign when it was the last.
     * @param {string} id
     * @param {number} index
     * @param {number} dropped devices left unsent because the campaign was cancelled or failed
     */
    async finishSegment(id, index, dropped = 0) {
      const k = keys.campaign(id);
      return redis.finishSegment(k.hash, k.segments, 'segment', index, dropped);
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
    state: /** @type {CampaignState} */ (hash.state),
    message: JSON.parse(hash.message),
    source: hash.source,
    maxRate: hash.maxRate ? Number(hash.maxRate) : null,
    createdAt: Number(hash.createdAt),
    finishedAt: hash.finishedAt ? Number(hash.finishedAt) : null,
    enqueued: hash.enqueued === '1',
    error: hash.error || null,
    ...counters
  });
}
