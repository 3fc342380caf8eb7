// Bad input: a clear message naming the problem, exit 2, and nothing enqueued.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { uniquePrefix, dropPrefix, testEnv, pushctl, makeAudience, makeMessage, deviceArn, REDIS_URL } from '../support/harness.js';

const prefix = uniquePrefix();
/** @type {Awaited<ReturnType<typeof makeAudience>>} */
let audience;
/** @type {string} */
let message;
const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9' });
const redis = new Redis(REDIS_URL);

before(async () => {
  audience = await makeAudience(50, { extraLines: ['not-an-arn,GCM,u,en', `arn:aws:sns:us-east-1:123456789012:endpoint/WNS/app/x,WNS,u,en`] });
  message = await makeMessage(audience.dir);
});

after(async () => {
  await audience.remove();
  await dropPrefix(prefix);
  redis.disconnect();
});

/** Nothing under this test's prefix: no campaign, no job. */
async function assertNothingStored() {
  const keys = await redis.keys(`{${prefix}}*`);
  assert.deepEqual(keys.filter((k) => !k.endsWith(':bucket')), []);
}

/** @param {string[]} args @param {RegExp} expected */
async function rejects(args, expected, code = 2, extraEnv = {}) {
  const result = await pushctl(args, { ...env, ...extraEnv });
  assert.equal(result.code, code, `exit code for ${args.join(' ')}: ${result.stderr}`);
  assert.match(result.stderr, expected);
  assert.equal(result.stdout, '');
  await assertNothingStored();
  return result;
}

test('--strict rejects malformed lines, naming each', async () => {
  await rejects(['send', '--audience', audience.path, '--message', message, '--strict', '--yes'],
    /2 invalid line\(s\)[\s\S]*line 52: endpointArn is not an SNS platform endpoint ARN[\s\S]*line 53: platform "WNS"/);
});

test('missing audience column', async () => {
  const path = join(audience.dir, 'no-platform.csv');
  await writeFile(path, 'endpointArn,userId\narn:aws:sns:us-east-1:123456789012:endpoint/GCM/app/a,u1\n');
  await rejects(['send', '--audience', path, '--message', message, '--yes'], /no-platform\.csv.*platform/);
});

test('message without a title', async () => {
  const path = join(audience.dir, 'untitled.json');
  await writeFile(path, JSON.stringify({ body: 'no title' }));
  await rejects(['send', '--audience', audience.path, '--message', path, '--yes'], /untitled\.json: title is missing/);
});

test('oversized payload', async () => {
  const path = join(audience.dir, 'huge.json');
  await writeFile(path, JSON.stringify({ title: 'Big', body: 'x'.repeat(5000) }));
  await rejects(['send', '--audience', audience.path, '--message', path, '--yes'], /huge\.json: .*payload.*4096/);
});

test('unreadable audience and message files', async () => {
  await rejects(['send', '--audience', join(audience.dir, 'missing.csv'), '--message', message, '--yes'], /missing\.csv/);
  await rejects(['send', '--audience', audience.path, '--message', join(audience.dir, 'missing.json'), '--yes'], /missing\.json.*no such file/);
});

test('bad SQL names the problem', async () => {
  await rejects(['send', '--query', 'SELEC endpoint_arn FROM devices', '--message', message, '--yes'], /--query/);
  await rejects(['send', '--query', 'SELECT endpoint_arn, platform FROM no_such_table_here', '--message', message, '--yes'], /no_such_table_here/);
});

test('bad flags and a missing confirmation', async () => {
  await rejects(['send', '--audience', audience.path, '--message', message, '--rate', 'fast', '--yes'], /--rate must be a positive number/);
  await rejects(['send', '--audience', audience.path, '--message', message, '--kind', 'flash sale', '--yes'], /--kind must be a short name .* got "flash sale"/);
  await rejects(['send', '--audience', audience.path, '--message', message, '--kind', '', '--yes'], /--kind must be a short name/);
  await rejects(['send', '--audience', audience.path, '--message', message, '--bogus'], /bogus/);
  await rejects(['send', '--message', message], /exactly one of --audience FILE or --query SQL/);
  // 50 devices is over a threshold of 10, and the test has no terminal to ask on.
  await rejects(['send', '--audience', audience.path, '--message', message], /add --yes/, 2, { CONFIRM_THRESHOLD: '10' });
});

test('status of an unknown or removed campaign: exit 2, saying it may have been removed and after how long', async () => {
  await rejects(['status', 'c-mwrfi8tu-d82412'], /no campaign with id "c-mwrfi8tu-d82412": it is unknown here, or it finished more than 30 days ago and was removed \(CAMPAIGN_RETENTION_DAYS=30\)/);
  await rejects(['status', 'c-mwrfi8tu-d82412', '--json'], /finished more than 7 days ago/, 2, { CAMPAIGN_RETENTION_DAYS: '7' });
  await rejects(['status', 'c-mwrfi8tu-d82412'], /^pushctl: no campaign with id "c-mwrfi8tu-d82412" \(pushctl list shows them\)$/m, 2, { CAMPAIGN_RETENTION_DAYS: '0' });
});

test('a bad environment variable is named', async () => {
  await rejects(['list'], /SEND_RATE must be a number/, 2, { SEND_RATE: 'lots' });
});

test('--dry-run counts and enqueues nothing', async () => {
  const result = await pushctl(['send', '--audience', audience.path, '--message', message, '--dry-run', '--json'], env);
  assert.equal(result.code, 0, result.stderr);
  const plan = JSON.parse(result.stdout);
  assert.equal(plan.devices, 50);
  assert.equal(plan.skipped, 2);
  assert.ok(plan.estimatedSeconds > 0);
  await assertNothingStored();
});

test('unreachable Redis: exit 1 naming the URL', async () => {
  const result = await pushctl(['send', '--audience', audience.path, '--message', message, '--yes'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Redis is not reachable at redis:\/\/127\.0\.0\.1:1/);
});

// Audience CSV as users' tools write it (RFC 4180): quoted line breaks, Excel's ";",
// and a quote that is never closed.
test('an unclosed quote in a large file: exit 2 naming the line it opened on, nothing enqueued', async () => {
  const rows = ['endpointArn,platform,userId'];
  for (let i = 0; i < 30_000; i++) rows.push(`${deviceArn(i)},${i % 3 === 0 ? 'APNS' : 'GCM'},${i === 6 ? '"user-6' : `user-${i}`}`);
  const path = join(audience.dir, 'runaway.csv');
  await writeFile(path, `${rows.join('\n')}\n`);
  const result = await pushctl(['send', '--audience', path, '--message', message, '--yes'], env);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /runaway\.csv line 8: a quoted field opens here and is not closed within 1048576 characters/);
  assert.equal(result.stdout, '');
  await assertNothingStored();
});

test('an Excel file (";", BOM, CRLF, a quoted line break) is read in full with the right line numbers', async () => {
  const rows = ['\uFEFFendpointArn;platform;userId;locale'];
  rows.push(`${deviceArn(1)};GCM;"first line\r\nsecond line";fi`);
  for (let i = 2; i <= 10; i++) rows.push(`${deviceArn(i)};${i % 3 === 0 ? 'APNS' : 'GCM'};user-${i};en`);
  rows.push(`${deviceArn(11)};WNS;user-11;en`);
  const path = join(audience.dir, 'excel.csv');
  await writeFile(path, `${rows.join('\r\n')}\r\n`);
  const result = await pushctl(['send', '--audience', path, '--message', message, '--dry-run', '--json'], env);
  assert.equal(result.code, 0, result.stderr);
  const plan = JSON.parse(result.stdout);
  assert.equal(plan.devices, 10);
  assert.equal(plan.skipped, 1);
  // Header line 1, the two-line record 2-3, then user-2..user-10 on lines 4-12: WNS is line 13.
  const strict = await pushctl(['send', '--audience', path, '--message', message, '--strict', '--yes'], env);
  assert.equal(strict.code, 2, strict.stderr);
  assert.match(strict.stderr, /1 invalid line\(s\)[\s\S]*line 13: platform "WNS"/);
  await assertNothingStored();
});
