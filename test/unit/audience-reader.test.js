import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAudience, summarizeAudience } from '../../shared/audience/audience-reader.js';

/** @typedef {import('../../shared/types.js').AudienceItem} AudienceItem */

/** @param {number} n */
const arn = (n, platform = 'GCM') => `arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/pushpace-test/0b1d2c3e-0000-4000-a000-${String(n).padStart(12, '0')}`;

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pushpace-audience-reader-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Writes a CSV audience from rows of [endpointArn, platform].
 * @param {string} name
 * @param {string[][]} rows
 */
async function csv(name, rows) {
  const path = join(dir, name);
  await writeFile(path, ['endpointArn,platform', ...rows.map((row) => row.join(','))].join('\n'));
  return path;
}

/** @param {AsyncIterable<AudienceItem>} items */
async function collect(items) {
  /** @type {AudienceItem[]} */
  const out = [];
  for await (const item of items) out.push(item);
  return out;
}

/**
 * A fake SMISMEMBER over a set of disabled ARNs that records each batch it is asked.
 * @param {Set<string>} disabled
 */
function fakeDisabledCheck(disabled) {
  /** @type {string[][]} */
  const calls = [];
  /** @param {string[]} arns */
  const isDisabled = async (arns) => {
    calls.push([...arns]);
    return arns.map((value) => disabled.has(value));
  };
  return { isDisabled, calls };
}

describe('readAudience', () => {
  it('yields a repeated endpoint as a duplicate with its line, keeping the first', async () => {
    const path = await csv('dups.csv', [[arn(1), 'GCM'], [arn(2), 'GCM'], [arn(1), 'GCM'], [arn(1), 'gcm']]);
    assert.deepEqual(await collect(readAudience({ file: path })), [
      { device: { endpointArn: arn(1), platform: 'GCM' }, line: 2 },
      { device: { endpointArn: arn(2), platform: 'GCM' }, line: 3 },
      { duplicate: { line: 4, endpointArn: arn(1) } },
      { duplicate: { line: 5, endpointArn: arn(1) } }
    ]);
  });

  it('marks disabled endpoints, asks in batches and keeps the order of every item', async () => {
    /** @type {string[][]} */
    const rows = [];
    for (let i = 1; i <= 10; i++) {
      rows.push([arn(i), 'GCM']);
      if (i === 4) rows.push([arn(2), 'GCM']); // a duplicate between devices
      if (i === 6) rows.push(['', 'GCM']); // a skipped line between devices
    }
    const path = await csv('disabled.csv', rows);
    const { isDisabled, calls } = fakeDisabledCheck(new Set([arn(3), arn(7), arn(10)]));
    const items = await collect(readAudience({ file: path }, { isDisabled, batchSize: 3 }));

    assert.deepEqual(calls.map((batch) => batch.length), [3, 3, 3, 1]);
    assert.deepEqual(calls.flat(), Array.from({ length: 10 }, (_, i) => arn(i + 1)), 'each endpoint asked once, duplicates not at all');
    const summary = items.map((item) => {
      if ('device' in item) return `device ${item.line}`;
      if ('disabled' in item) return `disabled ${item.disabled.line}`;
      if ('duplicate' in item) return `duplicate ${item.duplicate.line}`;
      return `skipped ${item.skipped.line}`;
    });
    assert.deepEqual(summary, [
      'device 2', 'device 3', 'disabled 4', 'device 5', 'duplicate 6', 'device 7', 'device 8', 'skipped 9',
      'disabled 10', 'device 11', 'device 12', 'disabled 13'
    ]);
    const disabledItem = items.find((item) => 'disabled' in item);
    assert.deepEqual(disabledItem, { disabled: { line: 4, endpointArn: arn(3) } });
  });

  it('counts a duplicate of a disabled endpoint as a duplicate', async () => {
    const path = await csv('dup-disabled.csv', [[arn(1), 'GCM'], [arn(1), 'GCM']]);
    const { isDisabled } = fakeDisabledCheck(new Set([arn(1)]));
    assert.deepEqual(await collect(readAudience({ file: path }, { isDisabled })), [
      { disabled: { line: 2, endpointArn: arn(1) } },
      { duplicate: { line: 3, endpointArn: arn(1) } }
    ]);
  });

  it('does not hold a long run of skipped lines behind one unchecked device', async () => {
    /** @type {string[][]} */
    const rows = [[arn(1), 'GCM']];
    for (let i = 0; i < 50; i++) rows.push(['', 'GCM']);
    rows.push([arn(2), 'GCM']);
    const path = await csv('run.csv', rows);
    const { isDisabled, calls } = fakeDisabledCheck(new Set());
    const iterator = readAudience({ file: path }, { isDisabled, batchSize: 5 });
    // With 4 × batchSize items held, the first device is checked alone; without that
    // bound both devices would wait for one check at the end of the file.
    const first = await iterator.next();
    assert.deepEqual(first.value, { device: { endpointArn: arn(1), platform: 'GCM' }, line: 2 });
    assert.deepEqual(calls, [[arn(1)]]);
    await iterator.return(undefined);
  });

  it('fails when isDisabled answers the wrong number of flags', async () => {
    const path = await csv('wrong.csv', [[arn(1), 'GCM'], [arn(2), 'GCM']]);
    const isDisabled = async () => [false];
    await assert.rejects(collect(readAudience({ file: path }, { isDisabled })), /isDisabled answered 1 flags for 2 endpoints/);
  });

  it('passes an error from isDisabled through', async () => {
    const path = await csv('error.csv', [[arn(1), 'GCM']]);
    const isDisabled = async () => {
      throw new Error('redis down');
    };
    await assert.rejects(collect(readAudience({ file: path }, { isDisabled })), /redis down/);
  });
});

describe('summarizeAudience', () => {
  it('counts devices per platform, skipped lines, duplicates and disabled endpoints', async () => {
    /** @type {string[][]} */
    const rows = [[arn(1), 'GCM'], [arn(2, 'APNS'), 'APNS'], [arn(3, 'APNS_SANDBOX'), 'APNS_SANDBOX'], [arn(1), 'GCM'], [arn(4), 'GCM']];
    for (let i = 0; i < 150; i++) rows.push([arn(1000 + i), 'WNS']);
    const path = await csv('summary.csv', rows);
    const { isDisabled } = fakeDisabledCheck(new Set([arn(4)]));
    const summary = await summarizeAudience(readAudience({ file: path }, { isDisabled }));
    assert.equal(summary.devices, 3);
    assert.equal(summary.duplicates, 1);
    assert.equal(summary.disabled, 1);
    assert.equal(summary.skipped, 150);
    assert.equal(summary.skippedLines.length, 100, 'only the first 100 are kept');
    assert.deepEqual(summary.skippedLines[0], { line: 7, reason: 'platform "WNS" is not one of APNS, APNS_SANDBOX, GCM' });
    assert.equal(summary.skippedLines[99]?.line, 106);
    assert.deepEqual(summary.byPlatform, { APNS: 1, APNS_SANDBOX: 1, GCM: 1 });
  });

  it('summarises the example audience: 2,000 devices, 3 invalid lines, 2 duplicates', async () => {
    const summary = await summarizeAudience(readAudience({ file: new URL('../../examples/audience.csv', import.meta.url).pathname }));
    assert.equal(summary.devices, 2000);
    assert.equal(summary.duplicates, 2);
    assert.deepEqual(summary.skippedLines.map((skipped) => skipped.line), [102, 1004, 1505]);
    assert.equal(summary.byPlatform.APNS + summary.byPlatform.APNS_SANDBOX + summary.byPlatform.GCM, 2000);
  });
});
