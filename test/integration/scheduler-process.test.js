// Three real scheduler processes (producers/scheduler.js) on a schedule firing every
// second, in real time: each fire becomes exactly one campaign, launched through
// pushctl send's code path with the schedule's send options; one process is killed
// (SIGKILL) mid-way and no fire is lost.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRedis } from '../../shared/redis.js';
import { createScheduleStore } from '../../shared/scheduler/schedule-store.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { campaignIdFor } from '../../shared/scheduler/schedule-spec.js';
import { ROOT, REDIS_URL, uniquePrefix, dropPrefix, testEnv, pushctl, makeAudience, makeMessage, waitFor } from '../support/harness.js';

const prefix = uniquePrefix();
// A dead scheduler's claim lapses after 1 s, well inside the 5 s on-time window.
// Each fire a second apart: the sub-minute guard (SCHEDULE_MIN_INTERVAL_SECONDS) is lowered for this test.
const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9', SCHEDULER_LEASE_MS: 1000, SCHEDULER_TOLERANCE_SECONDS: 5, SCHEDULE_MIN_INTERVAL_SECONDS: 1 });
const redis = createRedis(REDIS_URL);
/** @type {import('node:child_process').ChildProcess[]} */
const children = [];

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  redis.disconnect();
  await dropPrefix(prefix);
});

/** Spawns a scheduler; resolves once it logs that it started. */
async function startScheduler() {
  const child = spawn(process.execPath, [join(ROOT, 'producers/scheduler.js')], { cwd: ROOT, env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
  child.stderr?.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + 15_000;
  while (!output.includes('"msg":"scheduler started"')) {
    if (child.exitCode !== null) throw new Error(`scheduler exited with ${child.exitCode}: ${output}`);
    if (Date.now() > deadline) throw new Error(`scheduler did not start: ${output}`);
    await sleep(25);
  }
  return { child, output: () => output };
}

test('3 scheduler processes: every fire is one campaign, sent through pushctl send; a killed one loses no fire', async () => {
  const audience = await makeAudience(20);
  try {
    const message = await makeMessage(audience.dir);
    const added = await pushctl(['schedule', 'add', 'every-second', '--cron', '* * * * * *', '--timezone', 'UTC',
      '--audience', audience.path, '--message', message, '--name', 'Tick', '--rate', '10', '--ttl', '2h'], env);
    assert.equal(added.code, 0, added.stderr);

    const store = createScheduleStore(redis, { keyPrefix: prefix });
    const campaigns = createCampaignStore(redis, { keyPrefix: prefix });
    /** Fires with an outcome, oldest first. A schedule's fires are settled in order. */
    const settledFires = async () => (await store.fires('every-second', 50)).filter((f) => f.state !== 'claimed').reverse();

    const schedulers = await Promise.all([startScheduler(), startScheduler(), startScheduler()]);
    // Two fires launched while all three run, then one of them dies mid-way.
    await waitFor(async () => (await settledFires()).length >= 2, { timeoutMs: 20_000, what: 'two fires launched by three schedulers' });
    schedulers[0].child.kill('SIGKILL');
    const killedAt = Date.now();
    // A fire later than any claim the killed process held could lapse (1 s) has an outcome:
    // so has every fire before it, that claim's included.
    await waitFor(async () => (await settledFires()).some((f) => f.at > killedAt + 1000), { timeoutMs: 20_000, what: 'a fire settled after the killed scheduler\'s claim lapsed' });
    const paused = await pushctl(['schedule', 'pause', 'every-second'], env);
    assert.equal(paused.code, 0, paused.stderr);
    // Launches in progress finish before a scheduler exits on SIGTERM; unclaimed fires are not launched once paused.
    for (const s of schedulers.slice(1)) {
      s.child.kill('SIGTERM');
      const [code] = await once(s.child, 'exit');
      assert.equal(code, 0, `a scheduler stops cleanly on SIGTERM: ${s.output()}`);
    }

    const fires = (await store.fires('every-second', 50)).reverse();
    assert.ok(fires.length >= 3, `fires: ${JSON.stringify(fires)}`);
    // No gap: every second from the first fire to the last has a record.
    for (let i = 1; i < fires.length; i++) assert.equal(fires[i].at - fires[i - 1].at, 1000, `fire ${i} follows the one before`);
    const ids = (await redis.zrange(`{${prefix}}:campaigns`, '0', '-1')).sort();
    assert.deepEqual(ids, fires.map((f) => campaignIdFor('every-second', f.at)).sort(), 'one campaign per fire, with the derived id');
    let withoutForecast = 0;
    for (const fire of fires) {
      // SIGKILL can land in the few ms a launch enqueues: that fire's campaign is then failed, not sent twice.
      const acceptable = fire.state === 'launched' || (fire.state === 'failed' && /stopped part-way/.test(fire.reason ?? ''));
      assert.ok(acceptable, `fire ${new Date(fire.at).toISOString()}: ${JSON.stringify(fire)}`);
      const campaign = await campaigns.require(/** @type {string} */ (fire.campaignId));
      if (fire.state === 'launched') {
        assert.equal(campaign.enqueued, true);
        assert.equal(campaign.total, 20);
        assert.equal(campaign.maxRate, 10);
        assert.equal(campaign.name, 'Tick');
        assert.equal(campaign.message.title, 'Sale');
        // Send flags travel with the schedule; times count from the fire's planned instant.
        assert.equal(campaign.ttlMs, 7_200_000);
        assert.equal(campaign.startAt, fire.at);
        // The fire's forecast is kept with the campaign, as pushctl send keeps its own (no governor here: the fixed rate's).
        const kept = (await campaigns.reportSlots(campaign.id)).forecast;
        if (kept === null) withoutForecast++;
        else {
          assert.equal(JSON.parse(kept).source, 'fixed-rate');
          assert.ok(JSON.parse(kept).durationSeconds > 0, kept);
        }
      }
    }
    assert.ok(fires.filter((f) => f.state === 'launched').length >= fires.length - 1);
    // At most the fire the SIGKILL cut between its launch and keeping its forecast has none.
    assert.ok(withoutForecast <= 1, `${withoutForecast} launched campaigns without their forecast`);
  } finally {
    await audience.remove();
  }
});

test('the scheduler refuses a bad environment with the variable named, exit 2', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'producers/scheduler.js')], {
    cwd: ROOT, env: { ...env, SCHEDULER_LEASE_MS: '9000', SCHEDULER_TOLERANCE_SECONDS: '5' }, stdio: ['ignore', 'pipe', 'pipe']
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
  const [code] = await once(child, 'exit');
  assert.equal(code, 2);
  assert.match(stderr, /SCHEDULER_LEASE_MS \(9000\) must be shorter than SCHEDULER_TOLERANCE_SECONDS \(5 s\)/);
});
