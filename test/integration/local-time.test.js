// Local-time delivery: an audience spread over 5 time zones is released group by
// group at each zone's local time, and the groups, overlapping, share the one bucket.
//
// Real zones release whole quarter-hours apart; to see five releases within seconds
// the zone arithmetic runs on a virtual clock 3,600 times faster than real time
// (15 virtual minutes = 0.25 s), injected into the launcher. Everything after it (the
// queue holding segments until their release, workers, the bucket) runs in real time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { startStack, waitForFinish, campaignStatus, pushctl, deviceArn, REDIS_URL } from '../support/harness.js';
import { loadConfig } from '../../config/index.js';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { createSegmentQueue } from '../../shared/queue/create-queue.js';
import { enqueueCampaign } from '../../shared/campaign/enqueue-campaign.js';
import { nextLocalOccurrence, parseLocalTime } from '../../shared/campaign/local-time.js';
import { canonicalTimezone } from '../../shared/zoned-time.js';

const RATE = 500;
const PER_ZONE = 250;
const SCALE = 3600;
const LOCAL_TIME = '09:00';
// None of these has daylight-saving time; their offsets put 09:00 local 0, 30, 45, 60 and 90 minutes apart.
// Named as this Node's ICU names them, as the audience reader does (Asia/Yangon may come out as Asia/Rangoon).
const ZONES = ['Asia/Yangon', 'Asia/Dhaka', 'Asia/Kathmandu', 'Asia/Kolkata', 'Asia/Karachi'].map((zone) => /** @type {string} */ (canonicalTimezone(zone)));
const EXPECTED_OFFSET_MINUTES = [0, 30, 45, 60, 90];
// Devices that name no zone get the campaign's default zone.
const DEFAULT_ZONE = ZONES[2];
const WITHOUT_ZONE = 20;
// The virtual start: 09:00 in Yangon (UTC+06:30) on a quiet day.
const VIRTUAL_START = Date.parse('2025-01-15T02:30:00Z');

/** @type {Map<string, string>} endpoint -> zone */
const zoneOf = new Map();
/** @type {{ zone: string, at: number }[]} */
const deliveries = [];
/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
const redis = createRedis(REDIS_URL);

before(async () => {
  stack = await startStack({
    devices: 0,
    // Enough segments at once that every released group draws from the bucket, rather than wait behind another's.
    settings: { SEND_RATE: RATE, SEGMENT_SIZE: 100, WORKER_CONCURRENCY: 16 },
    emulator: { onDelivery: (arn) => { deliveries.push({ zone: /** @type {string} */ (zoneOf.get(arn)), at: Date.now() }); } }
  });
});
after(async () => {
  await stack.close();
  redis.disconnect();
});

test('5 time zones are released group by group at their local time, together never above the rate', { timeout: 40_000 }, async () => {
  const lines = ['endpointArn,platform,timezone'];
  let n = 0;
  for (const zone of [...ZONES, '']) {
    for (let i = 0; i < (zone ? PER_ZONE : WITHOUT_ZONE); i++, n++) {
      zoneOf.set(deviceArn(n), zone || DEFAULT_ZONE);
      lines.push(`${deviceArn(n)},${n % 3 === 0 ? 'APNS' : 'GCM'},${zone}`);
    }
  }
  const path = join(stack.audience.dir, 'zones.csv');
  await writeFile(path, lines.join('\n') + '\n');

  const config = loadConfig(stack.env);
  const queue = createSegmentQueue(config, pino({ level: 'silent' }));
  const realStart = Date.now() + 1500;
  /** The zone arithmetic on the virtual clock, mapped back to real time. @type {typeof nextLocalOccurrence} */
  const releaseClock = (zone, time) => realStart + (nextLocalOccurrence(zone, time, VIRTUAL_START) - VIRTUAL_START) / SCALE;
  const expected = new Map(ZONES.map((zone, i) => [zone, realStart + (EXPECTED_OFFSET_MINUTES[i] * 60_000) / SCALE]));
  let id;
  try {
    ({ campaign: { id } } = await enqueueCampaign({
      source: { file: path }, message: { title: 'Morning', body: 'Good morning' }, name: 'local time', sourceLabel: path,
      timing: { localTime: parseLocalTime(LOCAL_TIME), defaultTimezone: DEFAULT_ZONE }
    }, { store: createCampaignStore(redis, config), queue, segmentSize: config.segmentSize, logger: pino({ level: 'silent' }), releaseClock }));
  } finally {
    await queue.close();
  }

  // Before the first release: status shows every group waiting.
  const [waiting, text] = await Promise.all([campaignStatus(id, stack.env), pushctl(['status', id], stack.env)]);
  assert.ok(Date.now() < realStart, 'still before the first release (the test machine is slow)');
  assert.equal(deliveries.length, 0, 'nothing sent before the first release');
  assert.deepEqual(waiting.waiting, {
    groups: 5, zones: 5, devices: 5 * PER_ZONE + WITHOUT_ZONE, nextAt: new Date(realStart).toISOString(), nextZones: [ZONES[0]]
  });
  assert.deepEqual(waiting.releases.map((/** @type {{ at: string, zones: string[], devices: number }} */ g) => [g.at, g.zones, g.devices]),
    ZONES.map((zone) => [new Date(/** @type {number} */ (expected.get(zone))).toISOString(), [zone], PER_ZONE + (zone === DEFAULT_ZONE ? WITHOUT_ZONE : 0)]));
  assert.match(text.stdout, new RegExp(`local +09:00 in each device's time zone \\(default ${DEFAULT_ZONE}\\), 5 release group`));
  assert.match(text.stdout, /waiting +5 zone\(s\), 1,270 devices, next at/);

  const status = await waitForFinish(id, stack.env, 30_000);
  assert.equal(status.state, 'completed');
  assert.equal(status.delivered, 5 * PER_ZONE + WITHOUT_ZONE);
  assert.equal(status.waiting, null);
  const stats = stack.emulator.stats();
  assert.equal(stats.published, status.delivered);
  assert.equal(stats.distinctTargets, stats.published);

  const report = [];
  for (const zone of ZONES) {
    const release = /** @type {number} */ (expected.get(zone));
    const times = deliveries.filter((d) => d.zone === zone).map((d) => d.at);
    const first = Math.min(...times);
    report.push(`${zone} +${first - release} ms`);
    assert.equal(times.length, PER_ZONE + (zone === DEFAULT_ZONE ? WITHOUT_ZONE : 0), `${zone}: every device once`);
    assert.ok(first >= release, `${zone}: first delivery ${release - first} ms before its release`);
    assert.ok(first < release + 500, `${zone}: first delivery ${first - release} ms after its release`);
  }
  console.log(`# local time: first delivery after each release: ${report.join(', ')}; most in one second ${stats.maxPerSecond} at ${RATE}/s`);
  // Groups 2-4 are released 0.25 s apart and each needs 0.5 s at the full rate: they overlap, and together stay at the rate.
  assert.ok(stats.maxPerSecond <= RATE * 1.1, `${stats.maxPerSecond} sends in one second at ${RATE}/s`);
  assert.ok(stats.maxPerSecond >= RATE * 0.8, `the overlapping groups used the rate: ${stats.maxPerSecond} in the busiest second`);
});
