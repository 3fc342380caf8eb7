// The scheduler core against real Redis, in virtual time: several scheduler instances
// (each with its own connection and clock, as separate processes would have) tick at
// the instants a test chooses. Launches are stubs that create the campaign with the id
// they are given, as pushctl send does.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { createScheduleStore } from '../../shared/scheduler/schedule-store.js';
import { createScheduler } from '../../shared/scheduler/scheduler.js';
import { scheduleTiming, campaignIdFor, firesBetween } from '../../shared/scheduler/schedule-spec.js';
import { enqueueCampaign } from '../../shared/campaign/enqueue-campaign.js';
import { uniquePrefix, dropPrefix, makeAudience, waitFor, REDIS_URL } from '../support/harness.js';

const logger = pino({ level: 'silent' });
const MESSAGE = { title: 'Digest', body: 'This week in the app' };
/** @type {Set<string>} */
const prefixes = new Set();
/** @type {import('../../shared/redis.js').PushRedis[]} */
const connections = [];

after(async () => {
  for (const redis of connections) redis.disconnect();
  for (const prefix of prefixes) await dropPrefix(prefix);
});

/** A test's world: a key prefix, a virtual clock and a record of every launch. */
function world() {
  const prefix = uniquePrefix();
  prefixes.add(prefix);
  const config = { keyPrefix: prefix };
  const connect = () => {
    const redis = createRedis(REDIS_URL, { name: 'pushpace:test-scheduler' });
    connections.push(redis);
    return redis;
  };
  const redis = connect();
  const store = createScheduleStore(redis, config);
  const campaigns = createCampaignStore(redis, config);
  const clock = { now: 0 };
  /** @type {string[]} every launch, in order (a campaign id twice would be a duplicate) */
  const launches = [];
  /** @type {string[]} every outcome an instance recorded (onFire: what the metrics count) */
  const recorded = [];

  /** The stub launch: creates and "enqueues" the campaign after a random short delay. @type {import('../../shared/scheduler/scheduler.js').Launch} */
  const launch = async ({ campaignId, signal }) => {
    await sleep(Math.random() * 8);
    signal.throwIfAborted();
    launches.push(campaignId);
    await campaigns.create({ id: campaignId, name: 'digest', message: MESSAGE, source: 'test' });
    await campaigns.markEnqueued(campaignId, 0);
    return { devices: 0 };
  };

  /**
   * A scheduler instance with its own connection; its clock runs `skew()` ms off the world's.
   * @param {{ skew?: () => number, leaseMs?: number, toleranceMs?: number }} [options]
   */
  const instance = ({ skew = () => 0, leaseMs = 150, toleranceMs = 60_000 } = {}) => {
    const own = connect();
    return createScheduler({
      store: createScheduleStore(own, config), campaigns: createCampaignStore(own, config), launch, logger,
      now: () => clock.now + skew(), leaseMs, toleranceMs, onFire: (state) => recorded.push(state)
    });
  };

  /**
   * Stores a schedule as pushctl schedule add would, created at the clock's now.
   * @param {Record<string, string>} input id, cron or at, timeZone, missed, grace
   */
  const add = async (input) => {
    const timing = scheduleTiming(/** @type {any} */ ({ timeZone: 'UTC', ...input }), { now: clock.now, defaultGraceMs: 3_600_000, minIntervalMs: 60_000 });
    const spec = { ...timing, send: { audience: '/dev/null', name: 'digest', message: '/dev/null' }, message: MESSAGE, messageSource: '/dev/null' };
    await store.add(spec);
    return spec;
  };

  return { prefix, redis, store, campaigns, clock, launches, recorded, launch, instance, add };
}

/** @param {string} iso */
const at = (iso) => Date.parse(iso);

test('3 schedulers over 20 fires: each fire makes exactly one campaign; restarts between fires lose none', async () => {
  const w = world();
  w.clock.now = at('2025-03-20T00:00:00Z');
  // 09:00 Helsinki daily, across the spring-forward change (30 March): 07:00 UTC, then 06:00 UTC.
  const schedule = await w.add({ id: 'digest', cron: '0 9 * * *', timeZone: 'Europe/Helsinki' });
  const expected = firesBetween(schedule, w.clock.now, at('2025-04-08T23:59:00Z'));
  assert.equal(expected.length, 20);
  assert.equal(new Date(expected[9]).toISOString(), '2025-03-29T07:00:00.000Z');
  assert.equal(new Date(expected[10]).toISOString(), '2025-03-30T06:00:00.000Z');

  // Each instance's clock is up to 1.5 s off, differently on every tick (jitter and skew).
  const jitter = () => Math.floor(Math.random() * 1500);
  let schedulers = [w.instance({ skew: jitter }), w.instance({ skew: jitter }), w.instance({ skew: jitter })];
  for (const [i, fire] of expected.entries()) {
    // Just before the fire nothing happens.
    w.clock.now = fire - 2000;
    await Promise.all(schedulers.map((s) => s.tick()));
    assert.equal(w.launches.length, i, `nothing launched before fire ${i}`);
    // Around the fire all three tick at once, twice.
    for (const offset of [0, 700]) {
      w.clock.now = fire + offset;
      await Promise.all(schedulers.map((s) => s.tick()));
    }
    if (i === 6) {
      // One scheduler restarts between fires.
      await schedulers[0].close();
      schedulers[0] = w.instance({ skew: jitter });
    }
    if (i === 12) {
      // All of them restart between fires (a deploy).
      await Promise.all(schedulers.map((s) => s.close()));
      schedulers = [w.instance({ skew: jitter }), w.instance({ skew: jitter }), w.instance({ skew: jitter })];
    }
  }
  await Promise.all(schedulers.map((s) => s.close()));

  const ids = expected.map((fire) => campaignIdFor('digest', fire));
  assert.deepEqual(w.launches, ids, 'one launch per fire, in order, none twice');
  for (const id of ids) assert.equal((await w.campaigns.require(id)).enqueued, true);
  const records = await w.store.fires('digest', 50);
  assert.equal(records.length, 20);
  assert.ok(records.every((r) => r.state === 'launched' && r.attempts === 1), JSON.stringify(records.filter((r) => r.state !== 'launched')));
  assert.equal((await w.store.require('digest')).after, expected[19], 'the cursor is at the last fire');
  assert.deepEqual(w.recorded, Array(20).fill('launched'), 'each outcome reported once, by the scheduler that recorded it');
});

test('a scheduler that died holding a fire: another one takes it over once the claim lapses, and launches it once', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T05:00:00Z');
  const schedule = await w.add({ id: 'died-before-launch', cron: '0 6 * * *' });
  const fire = at('2025-06-02T06:00:00Z');
  w.clock.now = fire + 100;
  // The dead scheduler's claim: taken, never launched, never renewed.
  assert.equal((await w.store.claimFire(schedule, fire, { holder: 'dead', leaseMs: 150 })).status, 'claimed');
  const survivor = w.instance();
  await survivor.tick();
  assert.deepEqual(w.launches, [], 'the claim is still live: nobody else launches');
  await sleep(200);
  w.clock.now = fire + 1000;
  await survivor.tick();
  assert.deepEqual(w.launches, [campaignIdFor('died-before-launch', fire)]);
  const [record] = await w.store.fires('died-before-launch');
  assert.equal(record.state, 'launched');
  assert.equal(record.attempts, 2);
  await survivor.tick();
  assert.equal(w.launches.length, 1);
  await survivor.close();
});

/**
 * A scheduler claimed the 06:00 fire of a new schedule `id`, created its campaign (and
 * enqueued all of it, if `enqueued`), and died; another scheduler ticks once the claim lapsed.
 * @param {ReturnType<typeof world>} w
 * @param {string} id
 * @param {{ enqueued: boolean }} options
 */
async function diedAfterCreating(w, id, { enqueued }) {
  w.clock.now = at('2025-06-02T05:00:00Z');
  const schedule = await w.add({ id, cron: '0 6 * * *' });
  const fire = at('2025-06-02T06:00:00Z');
  const campaignId = campaignIdFor(id, fire);
  await w.store.claimFire(schedule, fire, { holder: 'dead', leaseMs: 100 });
  await w.campaigns.create({ id: campaignId, name: 'digest', message: MESSAGE, source: 'test' });
  if (enqueued) await w.campaigns.markEnqueued(campaignId, 0);
  await sleep(150);
  w.clock.now = fire + 2000;
  const survivor = w.instance();
  await survivor.tick();
  await survivor.close();
  const [record] = await w.store.fires(id);
  return { campaignId, record };
}

test('a scheduler that died after launching but before recording it: the fire is recorded, not launched again', async () => {
  const w = world();
  const { campaignId, record } = await diedAfterCreating(w, 'died-after-launch', { enqueued: true });
  assert.deepEqual(w.launches, []);
  assert.equal(record.state, 'launched');
  assert.equal(record.campaignId, campaignId);
});

test('a scheduler that died part-way through enqueueing: the half-queued campaign is failed, never sent twice', async () => {
  const w = world();
  const { campaignId, record } = await diedAfterCreating(w, 'died-mid-enqueue', { enqueued: false });
  assert.deepEqual(w.launches, []);
  assert.equal((await w.campaigns.require(campaignId)).state, 'failed');
  assert.equal(record.state, 'failed');
  assert.match(/** @type {string} */ (record.reason), /stopped part-way through enqueueing/);
});

test('a scheduler that loses its claim while launching stops before creating the campaign', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T05:00:00Z');
  await w.add({ id: 'stolen', cron: '0 6 * * *' });
  const fire = at('2025-06-02T06:00:00Z');
  const lease = w.store.keys.schedule('stolen').fireLease(fire);
  /** @type {AbortSignal | undefined} */
  let seen;
  const s = createScheduler({
    store: w.store, campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs: 150, toleranceMs: 60_000,
    launch: async (launch) => {
      seen = launch.signal;
      // Another holder has the fire now (as if this process had stalled past its lease).
      await w.redis.set(lease, 'thief', 'PX', 10_000);
      await sleep(150);
      launch.signal.throwIfAborted();
      return w.launch(launch);
    }
  });
  w.clock.now = fire + 100;
  await s.tick();
  await s.close();
  assert.equal(seen?.aborted, true);
  assert.deepEqual(w.launches, []);
  assert.equal(await w.campaigns.get(campaignIdFor('stolen', fire)), null);
  const [record] = await w.store.fires('stolen');
  assert.equal(record.state, 'claimed', 'left for the holder that took it over');
  assert.equal(await w.redis.get(lease), 'thief');
});

/**
 * A world with schedule `id` firing daily at 06:00 UTC (the clock before it), a 3-device
 * audience, and launchers that are the launch's own enqueue (enqueue-campaign.js),
 * enqueueing into a queue that records which launcher enqueued what.
 * @param {string} id
 */
async function launcherWorld(id) {
  const w = world();
  w.clock.now = at('2025-06-02T05:00:00Z');
  await w.add({ id, cron: '0 6 * * *' });
  const fire = at('2025-06-02T06:00:00Z');
  const audience = await makeAudience(3);
  /** @type {{ by: string, devices: number }[]} */
  const enqueued = [];
  /**
   * @param {string} by  names the launcher in `enqueued`
   * @returns {import('../../shared/scheduler/scheduler.js').Launch}
   */
  const launcher = (by) => async ({ campaignId, signal }) => {
    const queue = /** @type {import('../../shared/types.js').QueueAdapter<any>} */ (/** @type {unknown} */ ({
      enqueue: async (/** @type {{ devices: unknown[] }[]} */ segments) => {
        for (const s of segments) enqueued.push({ by, devices: s.devices.length });
      }
    }));
    const { campaign } = await enqueueCampaign({ id: campaignId, source: { file: audience.path }, message: MESSAGE, name: 'digest', sourceLabel: 'test', signal },
      { store: w.campaigns, queue, segmentSize: 100, logger });
    return { devices: campaign.total };
  };
  return { w, fire, campaignId: campaignIdFor(id, fire), audience, enqueued, launcher };
}

test('a launch that finds its campaign id taken, its claim still live, looks again: no error noted, nothing failed', async () => {
  const { w, fire, campaignId, audience, enqueued, launcher } = await launcherWorld('taken');
  const s = createScheduler({
    store: w.store, campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs: 150, toleranceMs: 60_000,
    launch: async (launch) => {
      // Another launch of the same fire created its campaign and enqueued it between this
      // scheduler's look for an earlier attempt and its own create.
      await launcher('other')(launch);
      return launcher('this')(launch);
    }
  });
  try {
    w.clock.now = fire + 100;
    await s.tick();
    const [waiting] = await w.store.fires('taken');
    assert.equal(waiting.state, 'claimed');
    assert.equal(waiting.error, null, 'not noted as an error to retry');
    await sleep(200); // the claim lapses; looking again finds the campaign enqueued
    w.clock.now = fire + 1000;
    await s.tick();
    const [record] = await w.store.fires('taken');
    assert.equal(record.state, 'launched');
    assert.equal(record.campaignId, campaignId);
    const campaign = await w.campaigns.require(campaignId);
    assert.deepEqual({ state: campaign.state, total: campaign.total, enqueued: campaign.enqueued, error: campaign.error },
      { state: 'running', total: 3, enqueued: true, error: null });
    assert.deepEqual(enqueued, [{ by: 'other', devices: 3 }]);
  } finally {
    await s.close();
    await audience.remove();
  }
});

test('a scheduler that stalls past its claim and launches late leaves the campaign another scheduler launched intact, not failed', async () => {
  const { w, fire, campaignId, audience, enqueued, launcher } = await launcherWorld('stale');
  const launchOf = launcher('stale');
  // The stale scheduler: its renewals go unanswered (a long GC pause, a frozen VM), and its
  // launch resumes only after the other scheduler has launched the fire, going on into
  // the launcher, which creates the campaign before it next looks at the aborted signal.
  const stale = createScheduler({
    store: { ...w.store, holdFire: () => new Promise(() => {}) },
    campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs: 150, toleranceMs: 60_000,
    launch: async (launch) => {
      await waitFor(async () => (await w.store.fires('stale'))[0]?.state === 'launched', { timeoutMs: 5000, intervalMs: 10, what: 'the other launch' });
      return launchOf(launch);
    }
  });
  const other = createScheduler({
    store: w.store, campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs: 150, toleranceMs: 60_000, launch: launcher('other')
  });
  try {
    w.clock.now = fire + 100;
    const staleTick = stale.tick();
    await sleep(250); // the stale claim (150 ms) lapses unrenewed
    w.clock.now = fire + 1000;
    await other.tick();
    const launched = await w.campaigns.require(campaignId);
    await staleTick;
    // Looking again finds the fire launched: nothing more happens.
    await stale.tick();
    const campaign = await w.campaigns.require(campaignId);
    assert.equal(campaign.state, 'running', 'not failed by the stale launch');
    assert.equal(campaign.error, null);
    assert.equal(campaign.enqueued, true, 'not reset by a second create');
    assert.equal(campaign.total, 3);
    assert.equal(campaign.createdAt, launched.createdAt);
    assert.deepEqual(enqueued, [{ by: 'other', devices: 3 }], 'the stale launch enqueued nothing');
    const [record] = await w.store.fires('stale');
    assert.equal(record.state, 'launched');
    assert.equal(record.attempts, 2);
    assert.equal(record.error, null, 'no error noted for a retry');
  } finally {
    await Promise.all([stale.close(), other.close()]);
    await audience.remove();
  }
});

test('a scheduler whose renewals go unanswered (Redis unreachable) stops launching before its lease can lapse', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T05:00:00Z');
  await w.add({ id: 'unanswered', cron: '0 6 * * *' });
  const fire = at('2025-06-02T06:00:00Z');
  const leaseMs = 300;
  /** @type {number | null} ms from the launch's start to its abort */
  let abortedAfter = null;
  const s = createScheduler({
    // ioredis queues commands while disconnected: a renewal then neither succeeds nor fails.
    store: { ...w.store, holdFire: () => new Promise(() => {}) },
    campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs, toleranceMs: 60_000,
    launch: async (launch) => {
      const started = performance.now();
      /** @type {NodeJS.Timeout | undefined} */
      let timer;
      await new Promise((resolve) => {
        launch.signal.addEventListener('abort', resolve, { once: true });
        timer = setTimeout(resolve, 2000);
      });
      clearTimeout(timer);
      if (launch.signal.aborted) abortedAfter = performance.now() - started;
      return w.launch(launch);
    }
  });
  w.clock.now = fire + 100;
  await s.tick();
  await s.close();
  assert.ok(abortedAfter !== null && abortedAfter < leaseMs, `aborted after ${abortedAfter} ms, lease ${leaseMs} ms`);
  assert.deepEqual(w.launches, []);
  assert.equal(await w.campaigns.get(campaignIdFor('unanswered', fire)), null);
});

test('skip: fires missed while every scheduler was down are recorded as skipped and never sent', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T08:30:00Z');
  await w.add({ id: 'hourly', cron: '0 * * * *', missed: 'skip' });
  const s = w.instance();
  // Up at 09:00: launched. Then down until 12:20: 10:00, 11:00 and 12:00 are missed.
  w.clock.now = at('2025-06-02T09:00:00.500Z');
  await s.tick();
  w.clock.now = at('2025-06-02T12:20:00Z');
  await s.tick();
  // 13:00 is picked up 40 s late: within SCHEDULER_TOLERANCE_SECONDS (60 s), so on time.
  w.clock.now = at('2025-06-02T13:00:40Z');
  await s.tick();
  await s.close();
  assert.deepEqual(w.launches, [campaignIdFor('hourly', at('2025-06-02T09:00:00Z')), campaignIdFor('hourly', at('2025-06-02T13:00:00Z'))]);
  const states = Object.fromEntries((await w.store.fires('hourly')).map((r) => [new Date(r.at).toISOString().slice(11, 16), r.state]));
  assert.deepEqual(states, { '13:00': 'launched', '12:00': 'skipped', '11:00': 'skipped', '10:00': 'skipped', '09:00': 'launched' });
});

test('catch-up: only the latest missed fire is sent, and only within the grace window', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T08:30:00Z');
  await w.add({ id: 'hourly', cron: '0 * * * *', missed: 'catch-up', grace: '90m' });
  await w.add({ id: 'daily', cron: '0 9 * * *', missed: 'catch-up', grace: '1h' });
  const s = w.instance();
  // Down from before 09:00 until 11:20. hourly: 09:00 is beyond the 90 min grace, 10:00
  // is within it but superseded by 11:00, the latest, which is sent. daily: 09:00 is
  // its latest, but 2 h 20 min late, beyond its 1 h grace.
  w.clock.now = at('2025-06-02T11:20:00Z');
  await s.tick();
  assert.deepEqual(w.launches, [campaignIdFor('hourly', at('2025-06-02T11:00:00Z'))]);
  // Down again until 14:45: 12:00 and 13:00 are beyond grace; 14:00, the latest, is 45 min late: sent.
  w.clock.now = at('2025-06-02T14:45:00Z');
  await s.tick();
  await s.close();
  assert.deepEqual(w.launches, [campaignIdFor('hourly', at('2025-06-02T11:00:00Z')), campaignIdFor('hourly', at('2025-06-02T14:00:00Z'))]);
  const hourly = Object.fromEntries((await w.store.fires('hourly')).map((r) => [new Date(r.at).toISOString().slice(11, 16), [r.state, r.reason?.split(':')[0]]]));
  assert.deepEqual(hourly, {
    '14:00': ['launched', undefined], '13:00': ['skipped', 'missed'], '12:00': ['skipped', 'missed'],
    '11:00': ['launched', undefined], '10:00': ['skipped', 'superseded'], '09:00': ['skipped', 'missed']
  });
  const [daily] = await w.store.fires('daily');
  assert.equal(daily.state, 'skipped');
  assert.match(/** @type {string} */ (daily.reason), /catch-up grace of 1 h/);
});

test('catch-up with an on-time fire also due: the latest missed fire is superseded, only the on-time one goes out', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T07:30:00Z');
  await w.add({ id: 'hourly', cron: '0 * * * *', missed: 'catch-up', grace: '2h' });
  const s = w.instance();
  // Down from before 08:00 until 09:00:30: 08:00 is missed (within the grace), 09:00 is on time.
  w.clock.now = at('2025-06-02T09:00:30Z');
  await s.tick();
  await s.close();
  assert.deepEqual(w.launches, [campaignIdFor('hourly', at('2025-06-02T09:00:00Z'))]);
  const fires = Object.fromEntries((await w.store.fires('hourly')).map((r) => [new Date(r.at).toISOString().slice(11, 16), [r.state, r.reason?.split(':')[0]]]));
  assert.deepEqual(fires, { '09:00': ['launched', undefined], '08:00': ['skipped', 'superseded'] });
});

test('after a long outage the cursor jumps over many missed fires at once; the next fire is on time', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T08:00:30Z');
  await w.add({ id: 'minutely', cron: '* * * * *' });
  const s = w.instance();
  w.clock.now = at('2025-06-02T11:00:10Z'); // 180 fires missed, 11:00 on time
  await s.tick();
  w.clock.now = at('2025-06-02T11:01:01Z');
  await s.tick();
  await s.close();
  assert.deepEqual(w.launches, [campaignIdFor('minutely', at('2025-06-02T11:00:00Z')), campaignIdFor('minutely', at('2025-06-02T11:01:00Z'))]);
});

test('pause, resume and remove take effect on running schedulers; fires in a pause are not sent', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T08:30:00Z');
  await w.add({ id: 'hourly', cron: '0 * * * *', missed: 'catch-up', grace: '2h' });
  const s = w.instance();
  await w.store.pause('hourly');
  w.clock.now = at('2025-06-02T09:00:01Z');
  await s.tick();
  assert.deepEqual(w.launches, []);
  w.clock.now = at('2025-06-02T09:30:00Z');
  await w.store.resume('hourly', w.clock.now);
  await s.tick();
  assert.deepEqual(w.launches, [], 'the 09:00 fire fell in the pause: catch-up does not send it');
  w.clock.now = at('2025-06-02T10:00:02Z');
  await s.tick();
  assert.deepEqual(w.launches, [campaignIdFor('hourly', at('2025-06-02T10:00:00Z'))]);
  await w.store.remove('hourly');
  w.clock.now = at('2025-06-02T11:00:02Z');
  await s.tick();
  await s.close();
  assert.equal(w.launches.length, 1);
  assert.deepEqual(await w.redis.keys(`{${w.prefix}}:schedule*`), []);
});

test('remove while a fire is being launched: that launch completes, no later fire is launched, nothing is left', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T08:30:00Z');
  await w.add({ id: 'removed', cron: '0 * * * *' });
  const fire = at('2025-06-02T09:00:00Z');
  /** @type {AbortSignal | undefined} */
  let seen;
  const s = createScheduler({
    store: w.store, campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs: 150, toleranceMs: 60_000,
    launch: async (launch) => {
      seen = launch.signal;
      await w.store.remove('removed');
      // Longer than the lease, with renewals every 50 ms: the claim must survive the remove.
      await sleep(250);
      launch.signal.throwIfAborted();
      return w.launch(launch);
    }
  });
  w.clock.now = fire + 500;
  await s.tick();
  assert.equal(seen?.aborted, false, 'the launch in progress was not aborted');
  assert.deepEqual(w.launches, [campaignIdFor('removed', fire)]);
  const campaign = await w.campaigns.require(campaignIdFor('removed', fire));
  assert.equal(campaign.enqueued, true);
  assert.notEqual(campaign.state, 'failed');
  w.clock.now = at('2025-06-02T10:00:02Z');
  await s.tick();
  await s.close();
  assert.equal(w.launches.length, 1, 'no fire after the remove');
  assert.equal(await w.store.get('removed'), null);
  assert.deepEqual(await w.redis.keys(`{${w.prefix}}:schedule*`), [], 'the fire record goes once the launch is recorded');
});

test('a launch that fails for a passing reason is retried; bad input fails the fire at once', async () => {
  const w = world();
  w.clock.now = at('2025-06-02T08:30:00Z');
  await w.add({ id: 'flaky', cron: '0 9 * * *' });
  await w.add({ id: 'broken', cron: '0 9 * * *' });
  let failures = 1;
  const { InputError, UnavailableError } = await import('../../shared/errors.js');
  const s = createScheduler({
    store: w.store, campaigns: w.campaigns, logger, now: () => w.clock.now, leaseMs: 150, toleranceMs: 60_000,
    launch: async (fire) => {
      if (fire.schedule.id === 'broken') throw new InputError('/data/audience.csv has no device to send to (0 invalid, 0 disabled)');
      if (failures-- > 0) throw new UnavailableError('PostgreSQL is not reachable');
      return w.launch(fire);
    }
  });
  w.clock.now = at('2025-06-02T09:00:00.300Z');
  await s.tick();
  assert.deepEqual(w.launches, []);
  const [waiting] = await w.store.fires('flaky');
  assert.equal(waiting.state, 'claimed');
  assert.equal(waiting.error, 'PostgreSQL is not reachable');
  await sleep(160); // the retry pause is min(lease, 1 s): the lease here
  w.clock.now = at('2025-06-02T09:00:05Z');
  await s.tick();
  await s.close();
  assert.deepEqual(w.launches, [campaignIdFor('flaky', at('2025-06-02T09:00:00Z'))]);
  const [flaky] = await w.store.fires('flaky');
  assert.equal(flaky.state, 'launched');
  assert.equal(flaky.attempts, 2);
  const [broken] = await w.store.fires('broken');
  assert.equal(broken.state, 'failed');
  assert.match(/** @type {string} */ (broken.reason), /has no device to send to/);
});

test('daylight-saving changes in Helsinki and New York: every fire at its instant, never twice, never skipped', async () => {
  const w = world();
  w.clock.now = at('2025-03-01T00:00:00Z');
  await w.add({ id: 'hel-0330', cron: '30 3 * * *', timeZone: 'Europe/Helsinki' });
  await w.add({ id: 'nyc-0230', cron: '30 2 * * *', timeZone: 'America/New_York' });
  await w.add({ id: 'nyc-0130', cron: '30 1 * * *', timeZone: 'America/New_York' });
  await w.add({ id: 'hel-hourly', cron: '0 * * * *', timeZone: 'Europe/Helsinki' });
  // Two schedulers tick every 20 virtual minutes through each change; between the
  // windows the clock jumps (those fires are skipped, and not looked at here).
  // Ticks 20 minutes apart need an on-time window longer than that.
  const toleranceMs = 25 * 60_000;
  const schedulers = [w.instance({ toleranceMs }), w.instance({ skew: () => 20_000, toleranceMs })];
  const windows = [['2025-03-08T20:00Z', '2025-03-10T08:00Z'], ['2025-03-29T20:00Z', '2025-03-31T02:00Z'],
    ['2025-10-25T20:00Z', '2025-10-27T02:00Z'], ['2025-11-01T20:00Z', '2025-11-03T08:00Z']];
  for (const [from, to] of windows) {
    w.clock.now = at(from);
    await Promise.all(schedulers.map((s) => s.tick()));
    w.launches.length = 0;
    for (let t = at(from); t <= at(to); t += 20 * 60_000) {
      w.clock.now = t;
      await Promise.all(schedulers.map((s) => s.tick()));
    }
    const fired = (/** @type {string} */ id) => w.launches.filter((c) => c.startsWith(`s-${id}-`)).map((c) => c.slice(-16));
    // The hourly schedule fires once in every real hour of the window: none twice, none skipped.
    const everyHour = [];
    for (let h = at(from) + 3_600_000; h <= at(to); h += 3_600_000) everyHour.push(new Date(h).toISOString().replace(/[-:]|\.\d{3}/g, ''));
    assert.deepEqual(fired('hel-hourly'), everyHour, `hel-hourly from ${from}`);
    if (from.startsWith('2025-03-29')) {
      assert.deepEqual(fired('hel-0330'), ['20250330T010000Z', '20250331T003000Z'], 'Helsinki spring: 04:00 EEST on the day, then 03:30 EEST');
      assert.ok(everyHour.includes('20250330T000000Z') && everyHour.includes('20250330T010000Z'), '02:00 EET then 04:00 EEST, an hour apart');
    }
    if (from.startsWith('2025-10-25')) {
      assert.deepEqual(fired('hel-0330'), ['20251026T003000Z', '20251027T013000Z'], 'Helsinki autumn: the first 03:30 only');
      assert.ok(everyHour.includes('20251026T000000Z') && everyHour.includes('20251026T010000Z'), 'the repeated 03:00 fires in each real hour');
    }
    if (from.startsWith('2025-03-08')) {
      assert.deepEqual(fired('nyc-0230'), ['20250309T070000Z', '20250310T063000Z'], 'New York spring: 03:00 EDT on the day');
      assert.deepEqual(fired('nyc-0130'), ['20250309T063000Z', '20250310T053000Z']);
    }
    if (from.startsWith('2025-11-01')) {
      assert.deepEqual(fired('nyc-0230'), ['20251102T073000Z', '20251103T073000Z'], 'New York autumn: 02:30 EST, once');
      assert.deepEqual(fired('nyc-0130'), ['20251102T053000Z', '20251103T063000Z'], 'New York autumn: the first 01:30 (EDT) only');
    }
  }
  await Promise.all(schedulers.map((s) => s.close()));
  const all = await w.redis.zrange(`{${w.prefix}}:campaigns`, '0', '-1');
  assert.equal(new Set(all).size, all.length);
});
