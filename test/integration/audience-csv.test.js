// Audience CSV as users' tools write it (RFC 4180): quoted line breaks, Excel's ";",
// and what pushctl send does with a quote that is never closed.
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
  audience = await makeAudience(0);
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
