// The governor: the one process (across all dynos, by a Redis lease) that steers the
// shared token bucket's rate. Each tick it counts the sends since the last tick from
// the bucket's grant counters, reads the gateway's metrics, asks the pacing controller
// for a rate and writes it where every worker takes tokens. Each decision is logged
// as one JSON line with its inputs, so a run can be replayed through the controller.
//
// The controller's state (the sends whose wake-ups are still to come, its estimates) lives
// in memory. So that a governor taking over does not start from the priors, forgetting
// minutes of sends in flight, every tick also appends its observation to a journal in
// Redis covering the wake-up horizon; the new lease holder replays the journal through
// its controller before its first decision, and counts sends on from the last entry's
// grant counter, so none made across the handover go uncounted.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { createLease } from './governor-lease.js';
import { redisKeys } from '../redis.js';
import { liveModelOf, foldHourBaseline } from './live-model.js';

/** @typedef {import('../redis.js').PushRedis} PushRedis */
/** @typedef {import('../token-bucket.js').TokenBucket} TokenBucket */
/** @typedef {import('../types.js').GatewaySample} GatewaySample */
/** @typedef {import('../pacing/controller.js').Observation} Observation */
/** @typedef {import('../pacing/controller.js').RateDecision} RateDecision */
/**
 * @typedef {{ update(observation: Observation): RateDecision, snapshot?(): unknown,
 *   replay?(observation: Observation): void,
 *   setGainPrior?(prior: import('../pacing/controller.js').GainPrior | null): void,
 *   takeFinished?(): import('../pacing/controller.js').FinishedCampaign | null }} Controller
 *   replay: feeds a past observation in, as update does, without acting on (or reporting) a
 *   decision; update is used when a controller has none. setGainPrior/takeFinished: the
 *   memory across campaigns (model-memory.js), when the controller has it.
 */

/** @typedef {Observation & { granted: number }} JournalEntry  an observation and the grant counter it was counted up to */

/** A dead holder is replaced within about ttl + ttl/3; 5 s is "within seconds" yet tolerates a slow Redis. */
export const DEFAULT_LEASE_TTL_MS = 5000;

/** How far back the journal reaches: beyond the default wake-up kernel (open delay, long tail and session). */
export const JOURNAL_HORIZON_MS = 60 * 60_000;

/**
 * Creates a governor; nothing happens until start().
 * @param {object} options
 * @param {PushRedis} options.redis        used for the lease (the bucket has its own reference)
 * @param {string} options.keyPrefix       KEY_PREFIX: the lease key is under its hash tag
 * @param {Pick<TokenBucket, 'settings' | 'set'>} options.bucket
 * @param {Controller} options.controller  createController / createInspectableController, or a fake
 * @param {() => Promise<GatewaySample | null>} options.readGateway  null when no metrics are available
 * @param {() => Promise<number | null>} [options.readRemaining]  devices the running campaigns still
 *   have to send (campaign-progress.js devicesStillToSend); null, or no function, when unknown
 * @param {() => Promise<string | null | undefined>} [options.readKind]  the message kind the running campaigns
 *   name, when they all name the same one; null when they name none or several; undefined when none runs.
 *   The memory keeps each kind's wake-up response apart.
 * @param {import('pino').Logger} options.logger
 * @param {number} options.tickMs          time between decisions (the controller's metrics window)
 * @param {() => number} [options.now]     the controller's clock, ms
 * @param {number} [options.maxRate]       sends/s never written above, whatever the controller says
 * @param {number} [options.leaseTtlMs]
 * @param {string} [options.holderId]      unique per process; host, pid and a random part by default
 * @param {number} [options.journalMs]     how much history a new holder replays
 * @param {import('./model-memory.js').ModelMemory} [options.memory]  what finished campaigns taught: each
 *   campaign's prior comes from it, and each finished campaign is kept in it
 * @param {{ store: import('./live-model.js').LiveModelStore, options: Readonly<import('../pacing/controller-options.js').ControllerOptions> }} [options.liveModel]
 *   where each tick publishes what the controller believes (pushctl send --dry-run forecasts from it);
 *   needs a controller with snapshot()
 */
export function createGovernor({
  redis, keyPrefix, bucket, controller, readGateway, readRemaining = async () => null, readKind = async () => undefined, logger, tickMs,
  now = Date.now, maxRate, leaseTtlMs = DEFAULT_LEASE_TTL_MS,
  holderId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, journalMs = JOURNAL_HORIZON_MS, memory, liveModel
}) {
  if (!(tickMs > 0)) throw new RangeError(`tickMs must be > 0, got ${tickMs}`);
  if (maxRate !== undefined && !(maxRate >= 0)) throw new RangeError(`maxRate must be ≥ 0, got ${maxRate}`);
  const keys = redisKeys(keyPrefix);
  const lease = createLease(redis, { key: keys.governorLease, holderId, ttlMs: leaseTtlMs });
  const journalLength = Math.max(1, Math.ceil(journalMs / tickMs));
  // Renewing three times per TTL leaves two chances for a slow or failed renew.
  const renewMs = Math.max(1, Math.floor(leaseTtlMs / 3));
  // How long a lease changes hands in: a successor's first tick comes this soon after the last entry.
  const handoverSlackMs = leaseTtlMs + 2 * tickMs;

  let stopped = true;
  /** Whether we believe Redis holds our id; lease.valid() adds the local deadline. */
  let held = false;
  let tickCount = 0;
  /** granted + grantedTransactional at the last tick; null right after acquiring the lease. */
  /** @type {number | null} */
  let lastGranted = null;
  /** The newest observation's time this controller has seen, live or replayed. */
  let lastSeenNow = -Infinity;
  /** @type {NodeJS.Timeout | undefined} */
  let leaseTimer;
  /** @type {NodeJS.Timeout | undefined} */
  let tickTimer;
  /** When the next tick comes (wall clock, ms): the time the last decision holds until. */
  let nextTickAt = 0;
  /** @type {Promise<void>} */
  let leaseWork = Promise.resolve();
  /** @type {Promise<void>} */
  let tickWork = Promise.resolve();
  /** The message kind the controller's prior was made for (null: every kind). */
  let priorKind = /** @type {string | null} */ (null);
  /** The kind of the campaign being learned: undefined before its first send, null when its sends mixed kinds. */
  let learningKind = /** @type {string | null | undefined} */ (undefined);
  /** The baseline by UTC hour learned from the ticks; read from Redis when the lease is taken. @type {import('./live-model.js').LiveModel['baselineByHour']} */
  let baselineByHour = [];
  /** The open-delay shape the memory holds, for forecasts between campaigns. @type {{ medianFactor: number, sigmaFactor: number } | null} */
  let rememberedShape = null;

  async function checkLease() {
    try {
      if (held) {
        held = await lease.renew();
        if (!held) {
          clearTimeout(tickTimer);
          logger.warn({ holderId }, 'governor lease lost: another governor steers the rate now');
        }
      } else {
        held = await lease.acquire();
        if (held && !stopped) {
          logger.info({ holderId, leaseTtlMs }, 'governor lease acquired: steering the rate');
          lastGranted = null;
          await replayJournal();
          if (liveModel) baselineByHour = await liveModel.store.readBaselineByHour().catch(() => baselineByHour);
          // A campaign that ended within the replayed turn was kept by the holder of that turn.
          controller.takeFinished?.();
          await usePriorFromMemory();
          scheduleTick(0);
        }
      }
    } catch (error) {
      // Redis unreachable: keep trying. lease.valid() runs out on its own after
      // ttl, so ticks stop before another governor could have taken over.
      logger.warn({ err: error, holderId }, 'governor lease check failed');
    }
  }

  function leaseLoop() {
    if (stopped) return;
    leaseWork = checkLease().finally(() => {
      if (!stopped) leaseTimer = setTimeout(leaseLoop, renewMs);
    });
  }

  /** @param {number} delayMs */
  function scheduleTick(delayMs) {
    clearTimeout(tickTimer);
    tickTimer = setTimeout(() => {
      tickWork = tick().finally(() => {
        // The next tick comes when the last decision said it would hold until.
        if (nextTickAt <= Date.now()) nextTickAt = nextTickBoundary(Date.now(), tickMs);
        if (!stopped && held) scheduleTick(nextTickAt - Date.now());
      });
    }, delayMs);
  }

  /**
   * Brings the controller up to date with the observations the journal holds that it has
   * not seen (all of them for a fresh one; those of another holder's turn for one that led
   * before), and continues the send count from the last entry. A journal that cannot be
   * read leaves the controller as it is: it then starts from its priors, as it would alone.
   */
  async function replayJournal() {
    try {
      const at = now();
      /** @type {JournalEntry[]} */
      const entries = [];
      let skipped = 0;
      let newest = -Infinity;
      for (const line of await redis.lrange(keys.governorJournal, 0, -1)) {
        const entry = parseJournalEntry(line);
        // One bad line (a partial write, a hand edit, an older format) must not cost the rest.
        // Entries out of order, or ahead of our clock by more than a handover's slack (a
        // clock far off: ours or the writer's), are skipped: replayed, they would move the
        // controller's time past ours, and it would drop the sends it is then told of.
        if (!entry || entry.now <= newest || entry.now < at - journalMs || entry.now > at + handoverSlackMs) {
          skipped++;
          continue;
        }
        newest = entry.now;
        entries.push(entry);
      }
      const unseen = entries.filter((e) => e.now > lastSeenNow);
      for (const { granted, ...observation } of unseen) {
        if (controller.replay) controller.replay(observation);
        else controller.update(observation);
        lastSeenNow = observation.now;
      }
      // Sends since the last entry are counted into the first tick only across a handover;
      // after a longer gap (no governor ran) they would pile up in one time bin.
      const last = entries.at(-1);
      if (last && at - last.now <= handoverSlackMs) lastGranted = last.granted;
      if (skipped > 0) logger.warn({ holderId, skipped }, 'governor journal entries skipped: unreadable, out of order or out of range');
      if (unseen.length > 0) logger.info({ holderId, replayed: unseen.length, from: unseen[0].now, to: lastSeenNow }, 'governor journal replayed');
    } catch (error) {
      logger.warn({ err: error, holderId }, 'replaying the governor journal failed; the controller starts from what it knows');
    }
  }

  /** One decision: observe, decide, write, log. Acts only while the lease is certainly ours. */
  async function tick() {
    if (stopped || !lease.valid()) return;
    try {
      const settings = await bucket.settings();
      const granted = settings.granted + settings.grantedTransactional;
      // A counter going backwards (bucket key deleted) counts as no sends, not negative ones.
      const sent = lastGranted === null ? 0 : Math.max(0, granted - lastGranted);
      lastGranted = granted;
      const [gateway, read, kind] = await Promise.all([readOrNull(readGateway, 'gateway metrics'),
        readOrNull(readRemaining, 'the devices still to send'), readOrNull(readKind, 'the running campaigns\' kind')]);
      // Anything but a count (a corrupt counter read as NaN) is unknown: the controller would refuse it.
      const remaining = countOrNull(read);
      // Campaigns of another kind started (or all ended): the prior for their kind. The
      // controller takes it at once while it has learned nothing since its last reset (these
      // sends are the campaign's first), else at its next reset.
      if ((kind ?? null) !== priorKind) {
        priorKind = kind ?? null;
        await usePriorFromMemory();
      }
      // Sends while no campaign runs (transactional ones) say nothing of a campaign's kind.
      if (sent > 0 && kind !== undefined) learningKind = learningKind === undefined || learningKind === kind ? kind : null;
      const at = now();
      // The rate holds until the next tick, on the wall clock's boundary.
      const wall = Date.now();
      nextTickAt = nextTickBoundary(wall, tickMs);
      const untilNextMs = nextTickAt - wall;
      const decision = controller.update({ now: at, sent, gateway, remaining, untilNextMs });
      lastSeenNow = at;
      const rate = maxRate === undefined ? decision.rate : Math.min(decision.rate, maxRate);
      // readGateway may have taken a while: if the lease ran out meanwhile, a successor
      // may already be writing, and a late write of ours would override it.
      const written = !stopped && lease.valid();
      if (written) {
        await bucket.set({ rate });
        /** @type {JournalEntry} */
        const entry = { now: at, sent, gateway, remaining, untilNextMs, granted };
        await redis.multi().rpush(keys.governorJournal, JSON.stringify(entry)).ltrim(keys.governorJournal, -journalLength, -1).exec();
      }
      const finished = controller.takeFinished?.();
      if (finished && written) await rememberCampaign(finished, learningKind ?? null);
      if (finished) learningKind = undefined;
      if (written) await publishLiveModel({ at, rate, reason: decision.reason, remaining, observed: gateway !== null && sent === 0 });
      tickCount += 1;
      logger.info({
        tick: tickCount, now: at, sent, gateway, remaining, rate, reason: decision.reason,
        ...(rate !== decision.rate ? { controllerRate: decision.rate } : {}),
        ...(written ? {} : { written: false }),
        ...(typeof controller.snapshot === 'function' ? { snapshot: controller.snapshot() } : {})
      }, 'governor tick');
    } catch (error) {
      logger.error({ err: error }, 'governor tick failed; the bucket keeps its last rate');
    }
  }

  /**
   * Publishes the controller's beliefs for forecasts; a failure costs only the forecast.
   * @param {{ at: number, rate: number, reason: string, remaining: number | null, observed: boolean }} tick
   *   observed: a window of the gateway with no sends of ours in it, which teaches the hour's baseline
   */
  async function publishLiveModel({ at, rate, reason, remaining, observed }) {
    if (!liveModel || typeof controller.snapshot !== 'function') return;
    try {
      const snapshot = /** @type {Record<string, any>} */ (controller.snapshot());
      if (observed && Number.isFinite(snapshot.baseline)) baselineByHour = foldHourBaseline(baselineByHour, at, snapshot.baseline);
      const idle = remaining === null || remaining === 0;
      await liveModel.store.publish(liveModelOf(snapshot, liveModel.options, {
        at, rate, reason, remaining, baselineByHour, rememberedShape: idle ? rememberedShape : null
      }), tickMs);
    } catch (error) {
      logger.warn({ err: error }, 'publishing the live model failed; forecasts fall back to the fixed rate');
    }
  }

  /**
   * Keeps what a finished campaign taught, then gives the controller the prior for the next.
   * Memory is a help, not a need: a failure is logged and the controller keeps its prior.
   * @param {import('../pacing/controller.js').FinishedCampaign} finished
   * @param {string | null} kind  the message kind its sends named, or null
   */
  async function rememberCampaign(finished, kind) {
    if (!memory) return;
    try {
      const kept = await memory.remember(finished, kind);
      logger.info({ holderId, ...finished, kind, kept }, kept ? 'campaign wake-up response remembered' : 'campaign too small to remember');
    } catch (error) {
      logger.warn({ err: error }, 'remembering the campaign\'s wake-up response failed');
    }
    await usePriorFromMemory();
  }

  /** Gives the controller the prior the memory makes (the configured one when it is empty). */
  async function usePriorFromMemory() {
    if (!memory || !controller.setGainPrior) return;
    try {
      const prior = await memory.prior(now(), priorKind);
      controller.setGainPrior(prior.fromMemory > 0 ? prior.gainPrior : null);
      rememberedShape = prior.fromMemory > 0 ? prior.shape : null;
      if (prior.fromMemory > 0) logger.info({ holderId, kind: priorKind, ...prior.gainPrior, fromMemory: prior.fromMemory, campaigns: prior.entries }, 'next campaign starts from memory');
    } catch (error) {
      logger.warn({ err: error }, 'reading the wake-up memory failed; the next campaign starts from PACING_*');
    }
  }

  /**
   * A read that fails counts as unknown (null): metrics unavailable, and the controller decays
   * to its safe rate; devices remaining unknown, and the plan keeps room for sends that may follow.
   * @template T
   * @param {() => Promise<T | null>} read
   * @param {string} what
   * @returns {Promise<T | null>}
   */
  async function readOrNull(read, what) {
    try {
      return await read();
    } catch (error) {
      logger.warn({ err: error }, `reading ${what} failed`);
      return null;
    }
  }

  return {
    holderId,

    /** Starts competing for the lease; ticks run while it is held. */
    start() {
      if (!stopped) return;
      stopped = false;
      leaseLoop();
    },

    /** Stops ticking, waits for the tick in flight and releases the lease so another governor takes over at once. */
    async stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(leaseTimer);
      clearTimeout(tickTimer);
      await Promise.allSettled([leaseWork, tickWork]);
      if (held) {
        held = false;
        try {
          await lease.release();
          logger.info({ holderId }, 'governor lease released');
        } catch (error) {
          // It expires on its own within the TTL.
          logger.warn({ err: error, holderId }, 'releasing the governor lease failed');
        }
      }
    },

    /** Whether this governor currently steers the rate. */
    leading() {
      return held && lease.valid();
    }
  };
}

/** @typedef {ReturnType<typeof createGovernor>} Governor */

/**
 * A journal line as an entry, or null when it is not one: not JSON, or a field the
 * controller would refuse (it throws on a bad `now` or `sent`) or the send count needs.
 * @param {string} line
 * @returns {JournalEntry | null}
 */
function parseJournalEntry(line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return null;
  }
  if (!entry || typeof entry !== 'object') return null;
  const { now, sent, granted } = entry;
  if (!Number.isFinite(now) || !Number.isFinite(sent) || sent < 0 || !Number.isFinite(granted) || granted < 0) return null;
  const untilNextMs = Number.isFinite(entry.untilNextMs) && entry.untilNextMs > 0 ? entry.untilNextMs : undefined;
  return { now, sent, granted, gateway: entry.gateway ?? null, remaining: countOrNull(entry.remaining), ...(untilNextMs === undefined ? {} : { untilNextMs }) };
}

/** A device count as the controller takes it, or null (unknown) for anything else. @param {unknown} value */
function countOrNull(value) {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * When the next tick comes, for a tick at wall-clock time `t`: the boundary after the nearest
 * whole multiple of tickMs. Ticks fall on those boundaries, not tickMs after the previous
 * tick ended: the controller's time bins are aligned the same way, and its plan assumes it
 * decides at the start of a bin. A tick that drifts into its bin (each one late by the time
 * the previous took) makes the plan count that bin's sends so far twice, and the rate sags by
 * up to half until the phase wraps round. Aligned ticks also keep a scrape's window at tickMs.
 *
 * The nearest boundary, not the next: a timer can fire a millisecond before the boundary it
 * was set for, and a tick that then read its inputs within that millisecond was told its
 * decision held for the few ms to the boundary. The plan for a few ms is the maximum rate,
 * and it held for a whole tick, the next being set for the boundary after: 1,159 devices went
 * out at once on the demo's real gateway, p95 9.8 s and 433 failed requests (bench/RESULTS.md
 * 2026-11-30 16:47, active probe; a replay of that run plans 29.7/s for a 2-s hold and 2,000/s
 * for 10 ms). So a decision holds between half a tick and a tick and a half.
 * @param {number} t       ms, wall clock
 * @param {number} tickMs
 */
export function nextTickBoundary(t, tickMs) {
  return (Math.floor(t / tickMs + 0.5) + 1) * tickMs;
}
