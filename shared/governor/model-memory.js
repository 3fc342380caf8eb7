// The governor's memory of past campaigns' wake-up traffic, in Redis: one JSON entry per
// finished campaign (shared/pacing/wake-up-memory.js), newest first, the last KEEP kept. The
// governor writes an entry when a campaign ends and gives its controller the prior the
// entries make, and notes it in the report of each campaign it came from (the `learned` slot);
// `pushctl model show|reset` reads and clears them.
import { redisKeys } from '../redis.js';
import { memoryEntryOf, priorFromMemory } from '../pacing/wake-up-memory.js';

/** Entries kept: a few weeks of daily campaigns; older ones weigh next to nothing anyway. */
const KEEP = 50;
/** The longest a campaign's report looks back for what was learned: the finished index keeps a day. */
const RECENT_MS = 86_400_000;

/**
 * @param {import('../redis.js').RedisClient} redis
 * @param {string} keyPrefix
 * @param {Parameters<typeof priorFromMemory>[2]} configured  the PACING_* prior (the controller's options)
 */
export function createModelMemory(redis, keyPrefix, configured) {
  const keys = redisKeys(keyPrefix);
  const key = keys.modelMemory;

  /**
   * Writes what was learned into the `learned` report slot (campaign-report.js) of each
   * campaign that finished since the previous entry's last send, and has none yet. The
   * estimate covers their sends together: the governor counts sends, not whose they are.
   * @param {import('../pacing/wake-up-memory.js').MemoryEntry} entry
   * @param {number} since  ms since the epoch
   */
  async function noteInReports(entry, since) {
    const ids = await redis.zrangebyscore(keys.finishedCampaigns, Math.max(since, entry.at - RECENT_MS), '+inf');
    const learned = JSON.stringify({ ...entry, campaigns: ids.length });
    for (const id of ids) {
      const hash = keys.campaign(id).hash;
      // HSETNX: a campaign keeps what was first learned of it; a gone campaign is not recreated.
      if (await redis.exists(hash)) await redis.hsetnx(hash, 'learned', learned);
    }
  }

  const entries = () => readMemoryEntries(redis, keyPrefix);

  return {
    entries,
    /**
     * Keeps what a finished campaign taught; false when it taught too little to keep.
     * @param {import('../pacing/controller.js').FinishedCampaign} finished
     * @param {string | null} [kind]
     */
    async remember(finished, kind = null) {
      const entry = memoryEntryOf(finished, {
        at: finished.endedAt, kind, sends: finished.sends, seconds: (finished.endedAt - finished.startedAt) / 1000,
        baselineRps: finished.baselineRps, capacityRps: finished.capacityRps,
        startPrior: { requestsPerSend: finished.priorRequestsPerSend, requestsPerSendSd: finished.priorRequestsPerSendSd }
      });
      if (!entry) return false;
      const since = (await entries())[0]?.at ?? finished.endedAt - RECENT_MS;
      await redis.multi().lpush(key, JSON.stringify(entry)).ltrim(key, 0, KEEP - 1).exec();
      await noteInReports(entry, since);
      return true;
    },
    /**
     * The prior the next campaign starts from, and how it was made.
     * @param {number} now
     * @param {string | null} [kind]
     */
    async prior(now, kind = null) {
      return priorFromMemory(await entries(), { now, kind }, configured);
    },
    /** Forgets every entry: the next campaign starts from PACING_* again. @returns {Promise<number>} entries removed */
    async reset() {
      const count = await redis.llen(key);
      await redis.del(key);
      return count;
    }
  };
}

/**
 * The memory's entries, newest first (the forecast reads them too: shared/forecast/launch-forecast.js).
 * @param {import('../redis.js').RedisClient} redis
 * @param {string} keyPrefix
 * @returns {Promise<import('../pacing/wake-up-memory.js').MemoryEntry[]>}
 */
export async function readMemoryEntries(redis, keyPrefix) {
  const lines = await redis.lrange(redisKeys(keyPrefix).modelMemory, 0, KEEP - 1);
  return lines.flatMap((line) => {
    try {
      const entry = JSON.parse(line);
      return Number.isFinite(entry?.at) && entry.requestsPerSend > 0 ? [entry] : [];
    } catch {
      return []; // a hand edit or an older format: the rest still count
    }
  });
}

/** @typedef {ReturnType<typeof createModelMemory>} ModelMemory */
