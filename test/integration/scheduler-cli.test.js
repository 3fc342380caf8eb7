// pushctl schedule through the real binary: every bad input gets a message naming the
// field, exit 2 and nothing stored (more cases of the same checks, without a process
// each, are in test/unit/scheduler-time.test.js); a good schedule can be listed, shown, paused,
// resumed and removed, and keeps the message it was added with.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { uniquePrefix, dropPrefix, testEnv, pushctl, makeAudience, makeMessage, REDIS_URL } from '../support/harness.js';

const prefix = uniquePrefix();
const env = testEnv({ prefix, snsUrl: 'http://127.0.0.1:9' });
const redis = new Redis(REDIS_URL);
/** @type {Awaited<ReturnType<typeof makeAudience>>} */
let audience;
/** @type {string} */
let message;

before(async () => {
  audience = await makeAudience(30);
  message = await makeMessage(audience.dir);
});

after(async () => {
  await audience.remove();
  await dropPrefix(prefix);
  redis.disconnect();
});

/** The options every valid add needs but the one a case leaves out or spoils. */
const valid = () => ['--cron', '0 9 * * 1', '--timezone', 'Europe/Helsinki', '--audience', audience.path, '--message', message];

/**
 * Runs pushctl, expects exit 2 with `expected` on stderr, nothing on stdout and no key of schedule `id`.
 * @param {string} id @param {string[]} args @param {RegExp} expected
 */
async function rejects(id, args, expected) {
  const result = await pushctl(args, env);
  assert.equal(result.code, 2, `exit code for ${args.join(' ')}: ${result.stderr}`);
  assert.match(result.stderr, expected);
  assert.equal(result.stdout, '');
  assert.deepEqual(await redis.keys(`{${prefix}}:schedule:${id}*`), [], 'nothing stored');
  assert.equal(await redis.zscore(`{${prefix}}:schedules`, id), null);
}

/**
 * @param {string} id @param {string[]} options replacing valid() entirely
 */
const add = (id, options) => ['schedule', 'add', id, ...options];
/** valid() with one option's value replaced (or removed when value is null). @param {string} flag @param {string | null} value */
const withOption = (flag, value) => {
  const args = valid();
  const i = args.indexOf(flag);
  if (value === null) args.splice(i, 2);
  else args[i + 1] = value;
  return args;
};

test('every bad input: a message naming the field, exit 2, nothing stored', { concurrency: 4 }, async (t) => {
  /** @type {[string, string[], RegExp][]} */
  const cases = [
    ['bad-cron', add('bad-cron', withOption('--cron', '61 * * * *')), /^pushctl: --cron "61 \* \* \* \*" is not a valid cron expression \(minute: 61 /],
    ['bad-zone', add('bad-zone', withOption('--timezone', 'Europe/Helsingfors')), /--timezone "Europe\/Helsingfors" is not an IANA time zone such as Europe\/Helsinki/],
    ['no-zone', add('no-zone', withOption('--timezone', null)), /schedule add needs --timezone/],
    ['past', add('past', [...withOption('--cron', null), '--at', '2020-01-01T09:00']), /--at 2020-01-01T09:00 is in the past \(2020-01-01 09:00 Europe\/Helsinki/],
    ['no-when', add('no-when', withOption('--cron', null)), /schedule add needs exactly one of --cron EXPR \(repeating\) or --at TIME \(once\)/],
    ['no-audience', add('no-audience', withOption('--audience', null)), /schedule add needs exactly one of --audience FILE or --query SQL/],
    ['no-message', add('no-message', withOption('--message', null)), /schedule add needs --message FILE/],
    ['missing-audience', add('missing-audience', withOption('--audience', '/nonexistent/audience.csv')), /\/nonexistent\/audience\.csv/],
    ['missing-message', add('missing-message', withOption('--message', '/nonexistent/message.json')), /--message \/nonexistent\/message\.json: cannot read the file \(no such file\)/],
    ['bad-rate', add('bad-rate', [...valid(), '--rate', 'fast']), /--rate must be a positive number/],
    // The id is a required argument of schedule add (its usage says <schedule-id>), refused as commander refuses one missing.
    ['', ['schedule', 'add', ...valid()], /^pushctl: missing required argument 'schedule-id'/],
    ['nope', ['schedule', 'show', 'nope'], /no schedule with id "nope"/],
  ];
  await Promise.all(cases.map(([id, args, expected]) => t.test(`${id || '(no id)'}: ${args.slice(1).join(' ')}`, () => rejects(id, args, expected))));
});

test('a schedule is stored with its message as it was; list, show, pause, resume and remove', async () => {
  const id = 'weekly';
  const added = await pushctl([...add(id, [...valid(), '--name', 'Weekly digest', '--rate', '50', '--missed', 'catch-up', '--grace', '2h']), '--json'], env);
  assert.equal(added.code, 0, added.stderr);
  const view = JSON.parse(added.stdout);
  assert.equal(view.state, 'active');
  assert.equal(view.stored, true);
  assert.equal(view.devicesNow, 30);
  assert.equal(view.graceMs, 7_200_000);
  assert.equal(new Date(view.nextFireAt).getUTCDay(), 1);
  assert.match(view.nextCampaignId, /^s-weekly-\d{8}T0[67]0000Z$/);

  // A later edit of the message file changes nothing planned.
  await writeFile(message, JSON.stringify({ title: 'Changed', body: 'after the schedule was added' }));
  const shown = JSON.parse((await pushctl(['schedule', 'show', id, '--json'], env)).stdout);
  assert.equal(shown.message.title, 'Sale');
  assert.equal(shown.send.audience, audience.path);
  assert.equal(shown.send.rate, '50');
  assert.equal(shown.send.name, 'Weekly digest');
  assert.equal(shown.send.cron, undefined, 'schedule options are not send options');
  assert.deepEqual(shown.fires, []);

  const again = await pushctl(add(id, valid()), env);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /schedule "weekly" already exists; remove it first/);

  const dry = await pushctl([...add('dry', valid()), '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^dry run, nothing stored: schedule dry: cron "0 9 \* \* 1" in Europe\/Helsinki/);
  // No governor runs here: the forecast says so and estimates from the fixed rate.
  assert.match(dry.stdout, /\nForecast: no governor is running: estimate from the fixed rate \([\d.]+\/s\) alone: about /);
  assert.equal(await redis.exists(`{${prefix}}:schedule:dry`), 0);

  assert.equal((await pushctl(['schedule', 'pause', id, '--json'], env)).stdout, '{"id":"weekly","state":"paused"}\n');
  assert.equal((await pushctl(['schedule', 'resume', id], env)).stdout, 'weekly active\n');
  const table = (await pushctl(['schedule', 'list'], env)).stdout;
  assert.match(table, /^ID\s+STATE\s+WHEN\s+NEXT FIRE\s+LAST FIRE\nweekly\s+active\s+cron "0 9 \* \* 1" in Europe\/Helsinki\s+20\d\d-\d\d-\d\d 09:00 Europe\/Helsinki/);
  assert.equal((await pushctl(['schedule', 'remove', id], env)).stdout, 'weekly removed\n');
  assert.deepEqual(await redis.keys(`{${prefix}}:schedule*`), []);
});
