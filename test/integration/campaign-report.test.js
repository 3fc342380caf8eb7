// pushctl report and pushctl failures against a real Redis, a worker and the SNS emulator:
// a small campaign where the emulator fails some endpoints and reports others disabled,
// then its report (text and JSON, with the gateway's p95 against the SLO from a governor
// decision) and its failures export, which `pushctl send --audience --dry-run` reads back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRedis } from '../../shared/redis.js';
import { createSeriesStore } from '../../shared/metrics/series-store.js';
import { startStack, waitForFinish, deviceArn, pushctl, REDIS_URL } from '../support/harness.js';

const DEVICES = 60;
const FAILING = [1, 2, 4];
const DISABLED = [5, 7];
// A reason with a comma and a quote: the CSV must quote it.
const REASON_MESSAGE = 'Invalid parameter: "Token", rejected';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
const redis = createRedis(REDIS_URL);
let id = '';

before(async () => {
  stack = await startStack({ devices: DEVICES, settings: { SEND_RATE: 20 } });
  // A governor decision, fresh when the campaign starts: its p95 is over the SLO.
  await createSeriesStore(redis, { keyPrefix: stack.prefix }).appendGovernor({ p95Ms: 450, sloMs: 400, rate: 40, reason: 'test' });
  const failEndpoints = Object.fromEntries(FAILING.map((i) => [deviceArn(i), { code: 'InvalidParameter', status: 400, message: REASON_MESSAGE }]));
  ({ id } = await stack.send([], { failEndpoints, disabledEndpoints: DISABLED.map(deviceArn) }));
  await waitForFinish(id, stack.env);
});

after(async () => {
  await stack?.close();
  redis.disconnect();
});

test('report --json: outcomes, duration, timeline with p95 against the SLO, no learned slot, the launch\'s forecast', async () => {
  const run = await pushctl(['report', id, '--json'], stack.env);
  assert.equal(run.code, 0, run.stderr);
  const r = JSON.parse(run.stdout);
  assert.equal(r.state, 'completed');
  assert.deepEqual([r.outcomes.total, r.outcomes.delivered, r.outcomes.failed, r.outcomes.disabled, r.outcomes.pending],
    [DEVICES, DEVICES - FAILING.length - DISABLED.length, FAILING.length, DISABLED.length, 0]);
  assert.ok(r.durationSeconds > 0.2 && r.durationSeconds < 30, `duration ${r.durationSeconds}`);
  assert.ok(r.timeline.length >= 3, 'the start, a sample of the worker\'s sampler, the end');
  assert.equal(r.timeline.at(-1).processed, DEVICES);
  assert.ok(r.rate.averagePerSecond > 0 && r.rate.averagePerSecond <= 30, `average ${r.rate.averagePerSecond}`);
  assert.deepEqual([r.gateway.sloMs, r.gateway.p95MaxMs], [400, 450]);
  assert.ok(r.gateway.pointsWithP95 >= 1 && r.gateway.pointsOverSlo === r.gateway.pointsWithP95, JSON.stringify(r.gateway));
  assert.ok(r.timeline.some((/** @type {any} */ p) => p.p95Ms === 450 && p.sloMs === 400));
  assert.deepEqual(r.failureReasons.map((/** @type {any} */ x) => x.count), [FAILING.length]);
  assert.equal(r.learned, null);
  // pushctl send kept the forecast made at launch: no governor ran then, so the fixed rate's.
  assert.equal(r.forecast.source, 'fixed-rate');
  const duration = r.forecastComparison.find((/** @type {any} */ c) => c.field === 'durationSeconds');
  assert.deepEqual([duration.forecast, duration.actual], [r.forecast.durationSeconds, r.durationSeconds]);
});

test('report text names the outcomes, the SLO and the slots; a stored forecast is compared with what happened', async () => {
  const plain = await pushctl(['report', id], stack.env);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, new RegExp(`${DEVICES} devices: delivered ${DEVICES - 5} .*failed 3 .*disabled 2`));
  assert.match(plain.stdout, /SLO 400 ms; over the SLO in (\d+) of \1 points/);
  assert.match(plain.stdout, /learned {3}not recorded/);
  assert.match(plain.stdout, /forecast vs actual \(made without a governor: the fixed rate alone\):\n {2}durationSeconds /);
  const hash = `{${stack.prefix}}:campaign:${id}`;
  const launched = await redis.hget(hash, 'forecast');
  await redis.hdel(hash, 'forecast');
  assert.match((await pushctl(['report', id], stack.env)).stdout, /forecast {2}not recorded/);

  await redis.hset(hash, 'forecast', JSON.stringify({ durationSeconds: 0.5, averageRate: 80 }), 'learned', JSON.stringify({ requestsPerSend: 1.5 }));
  const filled = await pushctl(['report', id], stack.env);
  assert.match(filled.stdout, /learned {3}\{"requestsPerSend":1\.5\}/);
  assert.match(filled.stdout, /forecast vs actual:\n {2}durationSeconds +0\.5 +[\d.]+ +forecast [\d.]+× actual\n {2}averageRate +80 +[\d.]+ +forecast [\d.]+× actual/);
  const json = JSON.parse((await pushctl(['report', id, '--json'], stack.env)).stdout);
  assert.deepEqual(json.forecastComparison.map((/** @type {any} */ c) => c.field), ['durationSeconds', 'averageRate']);
  assert.equal(json.forecastComparison[1].actual, json.rate.averagePerSecond);
  assert.equal(json.forecastComparison[0].ratio, Math.round((0.5 / json.durationSeconds) * 100) / 100);
  assert.equal(json.forecastComparison[0].withinRange, null, 'no range stored');
  // A forecast with a range (pushctl send stores one): the report says whether the actual fell in it.
  await redis.hset(hash, 'forecast', JSON.stringify({ source: 'governor', durationSeconds: 0.5, durationLowSeconds: 0.1, durationHighSeconds: 0.2 }));
  const ranged = await pushctl(['report', id], stack.env);
  assert.match(ranged.stdout, /forecast vs actual \(from the live governor\):\n {2}durationSeconds +0\.5 \(0\.1-0\.2\) +[\d.]+ +forecast [\d.]+× actual, outside its range/);
  await redis.hdel(hash, 'learned');
  await redis.hset(hash, 'forecast', /** @type {string} */ (launched));
});

test('failures --format csv is RFC 4180 and reads back as an audience: send --dry-run sees the failed and the disabled', async () => {
  const file = join(stack.audience.dir, 'failures.csv');
  const run = await pushctl(['failures', id, '--format', 'csv', '--output', file], stack.env);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, '', 'rows go to the file only');
  assert.match(run.stderr, /^5 device\(s\) not delivered written to /);
  assert.doesNotMatch(run.stderr, /arn:aws/, 'no device identifiers outside the export');
  const csv = await readFile(file, 'utf8');
  const lines = csv.split('\r\n').filter(Boolean);
  assert.equal(lines[0], 'endpointArn,platform,userId,outcome,reason');
  assert.equal(lines.length, 1 + FAILING.length + DISABLED.length);
  const quoted = `${REASON_MESSAGE.replaceAll('"', '""')}"`;
  for (const i of FAILING) assert.ok(lines.some((l) => l.startsWith(`${deviceArn(i)},${i % 3 === 0 ? 'APNS' : 'GCM'},user-${i},failed,`) && l.includes(quoted)), `device ${i}: ${csv}`);
  for (const i of DISABLED) assert.ok(lines.some((l) => l.startsWith(`${deviceArn(i)},`) && l.includes(',disabled,')), `device ${i}`);

  const dry = await pushctl(['send', '--audience', file, '--message', stack.message, '--dry-run', '--json'], stack.env);
  assert.equal(dry.code, 0, dry.stderr);
  const plan = JSON.parse(dry.stdout);
  // The disabled ones are known disabled now, so a resend leaves them out.
  assert.deepEqual([plan.devices, plan.disabled, plan.skipped], [FAILING.length, DISABLED.length, 0]);
});

test('failures --format ndjson to stdout: one object per device with its outcome', async () => {
  const run = await pushctl(['failures', id, '--format', 'ndjson'], stack.env);
  assert.equal(run.code, 0, run.stderr);
  const rows = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(rows.map((r) => r.outcome).sort(), ['disabled', 'disabled', 'failed', 'failed', 'failed']);
  assert.ok(rows.every((r) => r.endpointArn.startsWith('arn:aws:sns:') && ['APNS', 'GCM'].includes(r.platform) && r.userId.startsWith('user-')));
  const lines = await writeNdjsonBack(rows);
  assert.equal(lines, 5);
});

test('bad input: an unknown id and an unknown --format exit 2 with a clear message', async () => {
  for (const args of [['report', 'c-nope-000000'], ['failures', 'c-nope-000000']]) {
    const run = await pushctl(args, stack.env);
    assert.equal(run.code, 2, args.join(' '));
    assert.match(run.stderr, /no campaign with id "c-nope-000000"/);
  }
  const format = await pushctl(['failures', id, '--format', 'xml'], stack.env);
  assert.equal(format.code, 2);
  assert.match(format.stderr, /--format must be csv or ndjson, not "xml"/);
  const missing = await pushctl(['failures', id, '--output', join(stack.audience.dir, 'no/such/dir.csv')], stack.env);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--output .*no such directory/);
});

/** The NDJSON export is an audience too. @param {any[]} rows */
async function writeNdjsonBack(rows) {
  const file = join(stack.audience.dir, 'failures.ndjson');
  await writeFile(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const dry = await pushctl(['send', '--audience', file, '--message', stack.message, '--dry-run', '--json'], stack.env);
  assert.equal(dry.code, 0, dry.stderr);
  const plan = JSON.parse(dry.stdout);
  return plan.devices + plan.disabled;
}
