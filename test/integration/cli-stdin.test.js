// `pushctl send --audience - --format csv|ndjson`: the audience on standard input, for
// `heroku run`, whose one-off dyno has none of the operator's files. It is read twice (a
// scan, then the enqueue) from a temporary copy that is removed afterwards; bad input
// stores nothing; an EOT byte (what `heroku run --no-tty` sends after a redirected file)
// ends it even while the connection stays open.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { runPushctl } from '../../scripts/run-pushctl.js';
import { uniquePrefix, dropPrefix, testEnv, makeMessage, deviceArn, campaignStatus, REDIS_URL, ROOT } from '../support/harness.js';

const prefix = uniquePrefix();
/** @type {string} */
let dir;
/** @type {string} */
let message;
/** @type {Record<string, string>} */
let env;
const redis = new Redis(REDIS_URL);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pushpace-stdin-test-'));
  message = await makeMessage(dir);
  // pushctl's own temporary directory, to see that it removes its copy of stdin.
  env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9', TMPDIR: join(dir, 'tmp') });
  await mkdir(env.TMPDIR);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
  await dropPrefix(prefix);
  redis.disconnect();
});

const platformOf = (/** @type {number} */ i) => (i % 3 === 0 ? 'APNS' : 'GCM'); // as deviceArn's
const csv = (/** @type {number} */ count, /** @type {string[]} */ extra = []) =>
  ['endpointArn,platform,userId', ...Array.from({ length: count }, (_, i) => `${deviceArn(i)},${platformOf(i)},u${i}`), ...extra].join('\n') + '\n';

/** Campaign keys under this file's prefix (the bucket aside). */
const stored = async () => (await redis.keys(`{${prefix}}*`)).filter((key) => !key.endsWith(':bucket')).sort();

test('a CSV on standard input is enqueued as a campaign, invalid lines named "stdin line N", and its copy removed', async () => {
  const run = await runPushctl(['send', '--audience', '-', '--format', 'csv', '--message', message, '--yes', '--json'],
    { env, input: csv(30, ['not-an-arn,GCM,x']) });
  assert.equal(run.code, 0, run.stderr);
  const answer = JSON.parse(run.stdout);
  assert.equal(answer.devices, 30);
  assert.equal(answer.skipped, 1);
  assert.match(run.stderr, /stdin line 32: /);
  assert.equal((await campaignStatus(answer.id, env)).total, 30);
  assert.deepEqual(await readdir(env.TMPDIR), [], 'the temporary copy is gone');
});

test('NDJSON on standard input, with --format ndjson', async () => {
  const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify({ endpointArn: deviceArn(100 + i), platform: platformOf(100 + i) })).join('\n');
  const run = await runPushctl(['send', '--audience', '-', '--format', 'ndjson', '--message', message, '--dry-run', '--json'], { env, input: lines });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).devices, 12);
});

test('bad input on standard input stores nothing and exits 2 naming the problem', async () => {
  const before = await stored();
  /** @type {[string[], string, RegExp][]} */
  const cases = [
    [['--audience', '-'], csv(3), /--audience - reads the audience from standard input and needs --format csv or --format ndjson/],
    [['--audience', '-', '--format', 'xml'], csv(3), /--format must be csv or ndjson, got "xml"/],
    [['--audience', join(dir, 'users.csv'), '--format', 'csv'], '', /--format is only for --audience -/],
    [['--audience', '-', '--format', 'csv', '--strict'], csv(5, ['bad,GCM,x']), /--strict: 1 invalid line\(s\) in stdin; nothing was enqueued\n {2}stdin line 7: /],
    [['--audience', '-', '--format', 'csv'], csv(5, ['"unclosed,GCM,x']), /stdin line 7: a quoted field opens here and is not closed before the end of the file/],
    [['--audience', '-', '--format', 'csv'], '', /stdin: the file is empty/],
    // --format decides, not the content: CSV read as NDJSON is all invalid lines.
    [['--audience', '-', '--format', 'ndjson'], csv(3), /stdin has no device to send to \(4 invalid, 0 disabled\)/]
  ];
  for (const [options, input, expected] of cases) {
    const run = await runPushctl(['send', ...options, '--message', message, '--yes'], { env, input });
    assert.equal(run.code, 2, `${options.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, expected);
    assert.equal(run.stdout, '');
  }
  assert.deepEqual(await stored(), before, 'no campaign or segment was stored');
  assert.deepEqual(await readdir(env.TMPDIR), [], 'no temporary copy is left behind');
});

test('schedule add refuses --audience -: a schedule reads its audience again at every fire', async () => {
  const run = await runPushctl(['schedule', 'add', `s-${prefix}`, '--cron', '0 9 * * mon', '--timezone', 'UTC',
    '--audience', '-', '--message', message], { env, input: csv(2) });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /schedule add cannot take --audience - \(standard input\)/);
});

test('an EOT byte ends the audience though standard input stays open (heroku run --no-tty)', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'producers/pushctl.js'), 'send', '--audience', '-', '--format', 'csv',
    '--message', message, '--dry-run', '--json'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
  child.stdin.on('error', () => {});
  child.stdin.write(csv(7) + '\x04');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code, signal] = await once(child, 'exit');
  clearTimeout(timer);
  child.stdin.destroy();
  assert.equal(signal, null, 'pushctl ended by itself, not killed after 20 s');
  assert.equal(code, 0);
  assert.equal(JSON.parse(stdout).devices, 7);
});
