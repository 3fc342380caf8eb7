// pushctl as users expect a command line to behave (issue 13, points 3 and 9): a rate
// that is a real number or nothing, help per command, suggestions, options refused where
// they do not belong, --watch that fits the terminal, exit statuses scripts can test, an
// idempotent cancel, and a test send to one device. Against a real Redis and the SNS
// emulator, with pushctl as a child process.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRedis } from '../../shared/redis.js';
import { createCampaignStore } from '../../shared/campaign/campaign-store.js';
import { uniquePrefix, dropPrefix, testEnv, pushctl, startEmulator, makeAudience, makeMessage, deviceArn, REDIS_URL } from '../support/harness.js';

const prefix = uniquePrefix();
const redis = createRedis(REDIS_URL);
const store = createCampaignStore(redis, { keyPrefix: prefix });
/** @type {Awaited<ReturnType<typeof startEmulator>>} */
let sns;
/** @type {Record<string, string>} */
let env;
/** @type {Awaited<ReturnType<typeof makeAudience>>} */
let files;
/** @type {string} */
let message;

before(async () => {
  sns = await startEmulator();
  env = testEnv({ prefix, snsUrl: sns.url });
  files = await makeAudience(3);
  message = await makeMessage(files.dir);
});

after(async () => {
  await sns.emulator.close();
  await files.remove();
  await dropPrefix(prefix);
  redis.disconnect();
});

/** Runs pushctl and expects `code`; returns its output. @param {string[]} args @param {number} [code] */
async function run(args, code = 0) {
  const result = await pushctl(args, env);
  assert.equal(result.code, code, `exit code of pushctl ${args.join(' ')}: ${result.stderr}`);
  return result;
}

/** The bucket's rate as stored in Redis (null until someone sets it). */
const storedRate = async () => redis.hget(`{${prefix}}:bucket`, 'rate');

describe('pushctl rate takes only a real rate', () => {
  before(async () => {
    await run(['rate', '300']);
  });

  test('anything but a plain decimal number is refused, quoting it, and changes nothing', async () => {
    for (const given of ['', ' ', '0x10', 'abc', '-5', '1e3', '12abc', 'Infinity', '+5', '5.']) {
      const { stderr, stdout } = await run(['rate', given], 2);
      assert.match(stderr, /^pushctl: rate: RATE must be a plain decimal number of sends per second/m, `rate "${given}"`);
      assert.ok(stderr.includes(`got "${given}"`), `quotes what was given: ${stderr}`);
      assert.equal(stdout, '');
      assert.equal(await storedRate(), '300', `rate "${given}" left the rate alone`);
    }
  });

  test('0 stops every send only with --yes; rate then says stopped', async () => {
    const refused = await run(['rate', '0'], 2);
    assert.match(refused.stderr, /rate 0 stops every send of every worker.*add --yes/);
    assert.equal(await storedRate(), '300');

    await run(['rate', '0', '--yes']);
    assert.equal(await storedRate(), '0');
    const shown = await run(['rate']);
    assert.match(shown.stdout, /stopped/);
    assert.doesNotMatch(shown.stdout, /\?|NaN|Infinity/);
    assert.equal(JSON.parse((await run(['rate', '--json'])).stdout).rate, 0);

    await run(['rate', '12.5']);
    assert.equal(await storedRate(), '12.5');
    await run(['rate', '300']);
  });

  test('--burst is a whole number and needs a rate', async () => {
    assert.match((await run(['rate', '--burst', '5'], 2)).stderr, /--burst needs a RATE/);
    assert.match((await run(['rate', '100', '--burst', '2.5'], 2)).stderr, /--burst must be a whole number ≥ 1, got "2\.5"/);
    assert.equal(await storedRate(), '300');
  });
});

describe('help, version and suggestions', () => {
  test('each command has its own --help, the same as pushctl help COMMAND', async () => {
    const send = (await run(['send', '--help'])).stdout;
    const status = (await run(['status', '--help'])).stdout;
    assert.match(send, /^Usage: pushctl send \[options\]/);
    assert.match(send, /--audience <file>/);
    assert.match(send, /--to <arn>/);
    assert.doesNotMatch(send, /--watch/);
    assert.match(status, /^Usage: pushctl status \[options\] <campaign-id>/);
    assert.match(status, /--exit-status/);
    assert.doesNotMatch(status, /--audience/);
    assert.equal((await run(['help', 'send'])).stdout, send);
    assert.match((await run(['rate', '--help'])).stdout, /rate 0 --yes/);
    assert.match((await run(['schedule', 'add', '--help'])).stdout, /--cron <expr>/);
    const global = (await run(['--help'])).stdout;
    for (const command of ['send', 'status', 'list', 'pause', 'resume', 'cancel', 'rate', 'db', 'schedule', 'help']) {
      assert.match(global, new RegExp(`^  ${command}\\b`, 'm'), `pushctl --help lists ${command}`);
    }
  });

  test('README shows every command the help lists, and every option of send, status and rate', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    /** @param {string} help */
    const listed = (help) => [...help.matchAll(/^  ([a-z-]+) /gm)].map((m) => m[1]);
    for (const command of listed((await run(['--help'])).stdout).filter((c) => c !== 'help')) {
      assert.match(readme, new RegExp(`pushctl (?:[a-z]+\\|)*${command}\\b`), `README mentions pushctl ${command}`);
    }
    for (const command of ['send', 'status', 'rate']) {
      const flags = [...(await run([command, '--help'])).stdout.matchAll(/^ +(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]).filter((f) => f !== '--help');
      for (const flag of flags) assert.ok(readme.includes(flag), `README mentions ${command} ${flag}`);
    }
  });

  test('--version prints package.json\'s version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    assert.equal((await run(['--version'])).stdout, `${version}\n`);
  });

  test('an unknown command or option: exit 2 with a suggestion', async () => {
    assert.match((await run(['stauts', 'c-1'], 2)).stderr, /unknown command 'stauts'[\s\S]*Did you mean status\?/);
    assert.match((await run(['send', '--mesage', 'm.json'], 2)).stderr, /unknown option '--mesage'[\s\S]*Did you mean --message\?/);
    assert.match((await run(['schedule', 'lsit'], 2)).stderr, /Did you mean list\?/);
  });

  test('an option of another command is refused, and so is an extra argument', async () => {
    const { stderr, stdout } = await run(['list', '--audience', 'x'], 2);
    assert.match(stderr, /^pushctl: unknown option '--audience'/m);
    assert.equal(stdout, '');
    assert.match((await run(['status', 'c-1', '--burst', '5'], 2)).stderr, /unknown option '--burst'/);
    assert.match((await run(['list', 'extra'], 2)).stderr, /too many arguments/);
    assert.match((await run(['status'], 2)).stderr, /missing required argument 'campaign-id'/);
  });
});

/** A campaign that ends in `state`, made through the store as workers would. @param {'completed' | 'expired' | 'cancelled' | 'failed' | 'running'} state */
async function campaignIn(state) {
  const { id } = await store.create({ name: `ends ${state}`, message: { title: 'a', body: 'b' }, source: 'test', deadlineAt: Date.now() + 60_000 });
  const endpointArn = deviceArn(0);
  if (state === 'completed' || state === 'expired') {
    await store.addTotal(id, 1);
    await store.recordOutcomes(id, [{ seq: 0, endpointArn, outcome: state === 'completed' ? 'delivered' : 'expired' }]);
    await store.finishSegment(id, 0);
    assert.equal(await store.markEnqueued(id, 1), state);
  } else if (state === 'cancelled') {
    await store.cancel(id);
  } else if (state === 'failed') {
    await store.fail(id, 'enqueue interrupted');
  }
  return id;
}

describe('status --watch', () => {
  test('--exit-status: 0 for a completed campaign, 3 for one cancelled, expired or failed', async () => {
    for (const [state, code] of /** @type {const} */ ([['completed', 0], ['cancelled', 3], ['expired', 3], ['failed', 3]])) {
      const id = await campaignIn(state);
      const { stdout } = await run(['status', id, '--watch', '--exit-status'], code);
      assert.match(stdout, new RegExp(`  ${state}(  expired 1)?\\n$`));
      const json = await run(['status', id, '--watch', '--exit-status', '--json'], code);
      assert.equal(JSON.parse(json.stdout.trim().split('\n').at(-1) ?? '').state, state);
    }
    // Without --exit-status a finished watch is a success whatever the state, as before.
    await run(['status', await campaignIn('cancelled'), '--watch']);
    assert.match((await run(['status', 'c-1', '--exit-status'], 2)).stderr, /--exit-status needs --watch/);
  });

  test('each line fits 80 columns when stdout is not a terminal', async () => {
    const id = await campaignIn('expired');
    const { stdout } = await run(['status', id, '--watch']);
    const lines = stdout.split('\n').filter(Boolean);
    assert.ok(lines.length > 0);
    for (const line of lines) assert.ok(line.length <= 80, `${line.length} columns: ${line}`);
    assert.match(String(lines.at(-1)), /expired/);
  });
});

test('cancel of a cancelled campaign is a success that says so', async () => {
  const id = await campaignIn('running');
  assert.equal((await run(['cancel', id])).stdout, `${id} cancelled\n`);
  assert.equal((await run(['cancel', id])).stdout, `${id} was already cancelled\n`);
  assert.deepEqual(JSON.parse((await run(['cancel', id, '--json'])).stdout), { id, state: 'cancelled', alreadyCancelled: true });
  assert.match((await run(['cancel', await campaignIn('completed')], 2)).stderr, /is completed; only a campaign that is running or paused can be made cancelled/);
});

describe('send --to: a test send to one device', () => {
  const arn = deviceArn(1);

  test('publishes once through SNS and prints the outcome', async () => {
    sns.emulator.reset();
    const { stdout } = await run(['send', '--to', arn, '--message', message, '--json']);
    const answer = JSON.parse(stdout);
    assert.equal(answer.outcome, 'delivered');
    assert.equal(answer.platform, 'GCM');
    assert.match(answer.messageId, /\S/);
    const stats = sns.emulator.stats();
    assert.equal(stats.published, 1);
    assert.equal(sns.emulator.deliveriesFor(arn).length, 1);
    assert.match((await run(['send', '--to', deviceArn(0), '--message', message])).stdout, /^delivered to an APNS endpoint \(SNS message id \S+\)\n$/);
    assert.deepEqual(await redis.keys(`{${prefix}}:campaign:*`).then((keys) => keys.filter((k) => !k.includes(':campaign:c-'))), [], 'no campaign of its own');
  });

  test('a disabled endpoint: exit 1, saying so, and it is left out of campaigns from then on', async () => {
    sns.emulator.reset();
    sns.emulator.setFaults({ disabledEndpoints: [arn] });
    const { stdout } = await run(['send', '--to', arn, '--message', message], 1);
    assert.match(stdout, /^disabled: SNS says the endpoint is disabled/);
    assert.equal(await redis.sismember(`{${prefix}}:endpoints:disabled`, arn), 1);
    sns.emulator.reset();
  });

  test('bad input is refused before anything is sent', async () => {
    sns.emulator.reset();
    const bad = join(files.dir, 'untitled.json');
    await writeFile(bad, JSON.stringify({ body: 'no title' }));
    /** @type {[string[], RegExp][]} */
    const cases = [
      [['--to', 'not-an-arn', '--message', message], /--to must be an SNS platform endpoint ARN/],
      [['--to', 'arn:aws:sns:us-east-1:123456789012:endpoint/WNS/app/x', '--message', message], /--to: platform "WNS" is not one of APNS, APNS_SANDBOX, GCM/],
      [['--to', arn, '--message', bad], /untitled\.json: title is missing/],
      [['--to', arn], /send needs --message FILE/],
      [['--to', arn, '--audience', files.path, '--message', message], /option '--to <arn>' cannot be used with option '--audience <file>'/],
      [['--to', arn, '--message', message, '--deadline', '2099-01-01T00:00Z'], /option '--to <arn>' cannot be used with option '--deadline <iso8601>'/]
    ];
    for (const [args, expected] of cases) {
      const { stderr, stdout } = await run(['send', ...args], 2);
      assert.match(stderr, expected);
      assert.equal(stdout, '');
    }
    assert.equal(sns.emulator.stats().published, 0);
  });

  test('with sending stopped (rate 0) nothing is sent: exit 1', async () => {
    sns.emulator.reset();
    await run(['rate', '0', '--yes']);
    try {
      assert.match((await run(['send', '--to', arn, '--message', message], 1)).stderr, /sending is stopped/);
      assert.equal(sns.emulator.stats().published, 0);
    } finally {
      await run(['rate', '300']);
    }
  });
});
