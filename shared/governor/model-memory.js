// The governor's memory of past campaigns' wake-up traffic, in Redis: one JSON entry per
// finished campaign (shared/pacing/wake-up-memory.js), newest first, the last KEEP kept. The
// governor writes an entry when a campaign ends and gives its controller the prior the
// entries make; `pushctl model show|reset` reads and clears them.
import { redisKeys } from '../redis.js';
import { memoryEntryOf, priorFromMemory } from '../pacing/wake-up-memory.js';

/** Entries kept: a few weeks of daily campaigns; older ones weigh next to nothing anyway. */
const KEEP = 50;

/**
 * @param {import('ioredis').Redis} redis
 * @param {string} keyPrefix
 * @param {Parameters<typeof priorFromMemory>[2]} configured  the PACING_* prior (the controller's options)
 */
export function createModelMemory(redis, keyPrefix, configured) {
  const key = redisKeys(keyPrefix).modelMemory;

  /** @returns {Promise<import('../pacing/wake-up-memory.js').MemoryEntry[]>} */
  async function entries() {
    const lines = await redis.lrange(key, 0, KEEP - 1);
    return lines.flatMap((line) => {
      try {
        const entry = JSON.parse(line);
        return Number.isFinite(entry?.at) && entry.requestsPerSend > 0 ? [entry] : [];
      } catch {
        return []; // a hand edit or an older format: the rest still count
      }
    });
  }

  return {
    entries,
    /**
     * Keeps what a finished campaign taught; false when it taught too little to keep.
     * @param {import('../pacing/controller.js').FinishedCampaign} finished
     * @param {string | null} [kind]
     */
    async remember(finished, kind = null) {
      const entry = memoryEntryOf(finished, { at: finished.endedAt, kind, sends: finished.sends });
      if (!entry) return false;
      await redis.multi().lpush(key, JSON.stringify(entry)).ltrim(key, 0, KEEP - 1).exec();
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

/** @typedef {ReturnType<typeof createModelMemory>} ModelMemory */
