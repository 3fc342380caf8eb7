import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readAudienceFile } from '../../shared/audience/file-source.js';
import { splitCsv } from '../../shared/audience/csv-layout.js';
import { InputError } from '../../shared/errors.js';

/** @typedef {import('../../shared/types.js').AudienceItem} AudienceItem */

/** @param {number} n */
const arn = (n, platform = 'GCM') => `arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/pushpace-test/0b1d2c3e-0000-4000-a000-${String(n).padStart(12, '0')}`;

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pushpace-file-source-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * @param {string} name
 * @param {string} content
 */
async function file(name, content) {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** @param {string} path */
async function readAll(path) {
  /** @type {AudienceItem[]} */
  const items = [];
  for await (const item of readAudienceFile(path)) items.push(item);
  return items;
}

/** @param {AudienceItem[]} items */
const lines = (items) => items.map((item) => ('device' in item ? item.line : 'skipped' in item ? item.skipped.line : -1));

describe('readAudienceFile: CSV', () => {
  it('reads devices with case-insensitive, aliased, trimmed header names and ignores extra columns', async () => {
    const path = await file('a.csv', [
      ' Endpoint_ARN ,PLATFORM,user_id,Locale,email,timezone',
      `${arn(1)},GCM,u1,fi,a@example.com,Europe/Helsinki`,
      `${arn(2, 'APNS')},apns,,,b@example.com,`
    ].join('\n'));
    assert.deepEqual(await readAll(path), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: 'u1', locale: 'fi', timezone: 'Europe/Helsinki' }, line: 2 },
      { device: { endpointArn: arn(2, 'APNS'), platform: 'APNS' }, line: 3 }
    ]);
  });

  it('ignores blank lines but counts them in line numbers, and reads a last line without a newline', async () => {
    const path = await file('blank.csv', `endpointArn,platform\n\n${arn(1)},GCM\n   \n\n${arn(2)},GCM`);
    const items = await readAll(path);
    assert.deepEqual(lines(items), [3, 6]);
  });

  it('strips a UTF-8 BOM and CRLF line ends', async () => {
    const path = await file('bom.csv', `\uFEFFendpointArn,platform,userId\r\n${arn(1)},GCM,u1\r\n${arn(2)},GCM,u2\r\n`);
    const items = await readAll(path);
    assert.deepEqual(items.map((item) => 'device' in item && item.device.userId), ['u1', 'u2']);
  });

  it('reads RFC 4180 quoted fields with commas and doubled quotes', async () => {
    const path = await file('quoted.csv', `"endpointArn","platform","userId"\n"${arn(1)}",GCM,"Smith, ""J"""\n${arn(2)}, "GCM" ,u2\n`);
    const items = await readAll(path);
    assert.deepEqual(items.map((item) => 'device' in item && item.device.userId), ['Smith, "J"', 'u2']);
  });

  it('skips a line with the wrong number of fields or text after a closing quote', async () => {
    const path = await file('bad.csv', [
      'endpointArn,platform,userId',
      `${arn(1)},GCM`,
      `${arn(3)},GCM,"x"y`,
      `${arn(4)},GCM,ok`
    ].join('\n'));
    assert.deepEqual(await readAll(path), [
      { skipped: { line: 2, reason: 'has 2 fields; the header has 3' } },
      { skipped: { line: 3, reason: 'has text after the closing quote of field 3' } },
      { device: { endpointArn: arn(4), platform: 'GCM', userId: 'ok' }, line: 4 }
    ]);
  });

  it('reads a quoted field that spans lines as one record, reported by the line it starts on', async () => {
    const path = await file('multiline.csv', [
      'endpointArn,platform,userId',
      `${arn(1)},GCM,"first line`,
      'second line"',
      `${arn(2)},GCM,u2`,
      '',
      `${arn(3)},GCM,"a`,
      '',
      'b ""c"""',
      `${arn(4)},GCM,u4`
    ].join('\r\n'));
    assert.deepEqual(await readAll(path), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: 'first line\nsecond line' }, line: 2 },
      { device: { endpointArn: arn(2), platform: 'GCM', userId: 'u2' }, line: 4 },
      { device: { endpointArn: arn(3), platform: 'GCM', userId: 'a\n\nb "c"' }, line: 6 },
      { device: { endpointArn: arn(4), platform: 'GCM', userId: 'u4' }, line: 9 }
    ]);
  });

  it('does not take the continuation of a quoted field for a device of its own', async () => {
    const path = await file('continuation.csv', [
      'endpointArn,platform,userId',
      `${arn(1)},GCM,"note`,
      `${arn(2)},GCM,u2"`,
      `${arn(3)},GCM,u3`
    ].join('\n'));
    assert.deepEqual(await readAll(path), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: `note\n${arn(2)},GCM,u2` }, line: 2 },
      { device: { endpointArn: arn(3), platform: 'GCM', userId: 'u3' }, line: 4 }
    ]);
  });

  it('says which lines a skipped record spans', async () => {
    const path = await file('span.csv', [
      'endpointArn,platform,userId',
      `${arn(1)},"GCM`,
      `",u1,extra`,
      `${arn(2)},GCM,u2`
    ].join('\n'));
    assert.deepEqual(await readAll(path), [
      { skipped: { line: 2, reason: 'has 4 fields; the header has 3 (a quoted field holds a line break: the record spans lines 2-3)' } },
      { device: { endpointArn: arn(2), platform: 'GCM', userId: 'u2' }, line: 4 }
    ]);
  });

  it('detects ";" and tab delimiters from the header', async () => {
    const semicolon = await file('excel.csv', `\uFEFFendpointArn;platform;userId\r\n${arn(1)};GCM;"Smith; J"\r\n${arn(2)};GCM;a,b\r\n`);
    assert.deepEqual(await readAll(semicolon), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: 'Smith; J' }, line: 2 },
      { device: { endpointArn: arn(2), platform: 'GCM', userId: 'a,b' }, line: 3 }
    ]);
    const tab = await file('tabs.tsv', `"endpointArn"\tplatform\tuserId\n${arn(1)}\tGCM\t u 1\n${arn(2)}\tGCM\t"x\ty"\n`);
    assert.deepEqual(await readAll(tab), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: 'u 1' }, line: 2 },
      { device: { endpointArn: arn(2), platform: 'GCM', userId: 'x\ty' }, line: 3 }
    ]);
  });

  it('names the delimiters it tried when no header split finds the columns', async () => {
    const path = await file('pipes.csv', `endpointArn|platform\n${arn(1)}|GCM\n`);
    await assert.rejects(readAll(path), (error) => error instanceof InputError &&
      error.message.startsWith(`${path}: header has no endpointArn column`) && /separated by ",", ";" or tab/.test(error.message));
  });

  it('fails naming the line where a quote opened that is never closed', async () => {
    const path = await file('unclosed.csv', [
      'endpointArn,platform,userId',
      `${arn(1)},GCM,u1`,
      `${arn(2)},GCM,"u2`,
      `${arn(3)},GCM,u3`,
      `${arn(4)},GCM,u4`
    ].join('\n'));
    await assert.rejects(readAll(path), (error) => error instanceof InputError &&
      error.message.startsWith(`${path} line 3: a quoted field opens here and is not closed before the end of the file`));
  });

  it('fails at the cap, not at the end of the file, when an unclosed quote would swallow the rest of a large file', async () => {
    const rows = ['endpointArn,platform,userId', `${arn(1)},GCM,u1`, `${arn(2)},GCM,u2`, `${arn(3)},"GCM,u3`];
    for (let i = 4; i < 40_000; i++) rows.push(`${arn(i)},GCM,user-${i}`);
    const path = await file('runaway.csv', rows.join('\n'));
    /** @type {AudienceItem[]} */
    const items = [];
    await assert.rejects(async () => {
      for await (const item of readAudienceFile(path)) items.push(item);
    }, (error) => error instanceof InputError &&
      error.message.startsWith(`${path} line 4: a quoted field opens here and is not closed within 1048576 characters`));
    assert.deepEqual(lines(items), [2, 3]);
  });

  it('passes device validation reasons through with the physical line', async () => {
    const path = await file('invalid.csv', `endpointArn,platform\n${arn(1)},WNS\n,GCM\n`);
    assert.deepEqual(await readAll(path), [
      { skipped: { line: 2, reason: 'platform "WNS" is not one of APNS, APNS_SANDBOX, GCM' } },
      { skipped: { line: 3, reason: 'endpointArn is missing' } }
    ]);
  });

  it('throws InputError before yielding anything when the header lacks endpointArn or platform', async () => {
    for (const [header, missing] of [['arn,platform', 'endpointArn'], ['endpoint_arn,os', 'platform']]) {
      const path = await file('header.csv', `${header}\n${arn(1)},GCM\n`);
      /** @type {AudienceItem[]} */
      const items = [];
      await assert.rejects(async () => {
        for await (const item of readAudienceFile(path)) items.push(item);
      }, (error) => error instanceof InputError && error.message.startsWith(`${path}: header has no ${missing} column`));
      assert.equal(items.length, 0);
    }
  });

  it('rejects a header naming the same field twice', async () => {
    const path = await file('twice.csv', `endpointArn,platform,endpoint_arn\n${arn(1)},GCM,${arn(2)}\n`);
    await assert.rejects(readAll(path), /header names endpointArn twice \(columns 1 and 3\)/);
  });

  it('rejects an empty CSV file', async () => {
    const path = await file('empty.csv', '\n\n');
    await assert.rejects(readAll(path), (error) => error instanceof InputError && /the file is empty/.test(error.message));
  });

  it('keeps line numbers right across read chunks in a large file', async () => {
    const count = 30_000;
    const rows = ['endpointArn,platform,userId'];
    for (let i = 1; i <= count; i++) rows.push(`${arn(i)},GCM,user-${i}`);
    const path = await file('large.csv', `${rows.join('\r\n')}\r\n`);
    let expected = 2;
    for await (const item of readAudienceFile(path)) {
      assert.ok('device' in item);
      assert.equal(item.line, expected);
      assert.equal(item.device.userId, `user-${expected - 1}`);
      expected += 1;
    }
    assert.equal(expected, count + 2);
  });

  it('skips a line longer than a megabyte without buffering it, and goes on', async () => {
    const path = await file('long.csv', `endpointArn,platform\n${'x'.repeat(3 << 20)}\n${arn(1)},GCM\n`);
    assert.deepEqual(await readAll(path), [
      { skipped: { line: 2, reason: 'is longer than 1048576 characters' } },
      { device: { endpointArn: arn(1), platform: 'GCM' }, line: 3 }
    ]);
  });

  it('closes the file when the consumer stops early', async () => {
    const rows = ['endpointArn,platform'];
    for (let i = 1; i <= 50_000; i++) rows.push(`${arn(i)},GCM`);
    const path = await file('early.csv', rows.join('\n'));
    const before = (await readdir('/proc/self/fd')).length;
    let seen = 0;
    for await (const item of readAudienceFile(path)) {
      assert.ok('device' in item);
      if (++seen === 10) break;
    }
    let open = (await readdir('/proc/self/fd')).length;
    for (let wait = 0; open > before && wait < 50; wait++) {
      await sleep(20);
      open = (await readdir('/proc/self/fd')).length;
    }
    assert.equal(open, before);
  });
});

describe('readAudienceFile: NDJSON', () => {
  it('reads one JSON object per line, skipping bad JSON and non-objects', async () => {
    const path = await file('a.ndjson', [
      JSON.stringify({ endpointArn: arn(1), platform: 'GCM', userId: 'u1' }),
      '',
      '{"endpointArn": "oops"',
      '[1, 2]',
      JSON.stringify({ endpoint_arn: arn(2, 'APNS'), platform: 'APNS', user_id: 7 })
    ].join('\n'));
    assert.deepEqual(await readAll(path), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: 'u1' }, line: 1 },
      { skipped: { line: 3, reason: 'not valid JSON' } },
      { skipped: { line: 4, reason: 'not a JSON object' } },
      { device: { endpointArn: arn(2, 'APNS'), platform: 'APNS', userId: '7' }, line: 5 }
    ]);
  });

  it('accepts .jsonl and .json-lines too', async () => {
    for (const name of ['b.jsonl', 'c.json-lines']) {
      const path = await file(name, `${JSON.stringify({ endpointArn: arn(1), platform: 'GCM' })}\n`);
      assert.equal((await readAll(path)).length, 1);
    }
  });
});

describe('readAudienceFile: format sniffing', () => {
  it('reads a file without a known extension as NDJSON when it starts with "{"', async () => {
    const path = await file('audience.txt', `\n  ${JSON.stringify({ endpointArn: arn(1), platform: 'GCM' })}\n`);
    assert.deepEqual(await readAll(path), [{ device: { endpointArn: arn(1), platform: 'GCM' }, line: 2 }]);
  });

  it('reads it as CSV otherwise', async () => {
    const path = await file('audience', `endpointArn,platform\n${arn(1)},GCM\n`);
    assert.deepEqual(await readAll(path), [{ device: { endpointArn: arn(1), platform: 'GCM' }, line: 2 }]);
  });

  it('rejects a JSON array with advice', async () => {
    const path = await file('audience.json', `[${JSON.stringify({ endpointArn: arn(1), platform: 'GCM' })}]`);
    await assert.rejects(readAll(path), (error) => error instanceof InputError && /JSON array; write one JSON object per line/.test(error.message));
  });

  it('yields nothing for an empty file of unknown format', async () => {
    assert.deepEqual(await readAll(await file('nothing', '')), []);
  });
});

describe('readAudienceFile: unreadable files', () => {
  it('throws InputError naming the path for a missing file', async () => {
    const path = join(dir, 'missing.csv');
    await assert.rejects(readAll(path), (error) => error instanceof InputError && error.message === `${path}: cannot read the audience file: no such file; check the path`);
  });

  it('throws InputError for a directory', async () => {
    const path = join(dir, 'folder.csv');
    await mkdir(path);
    await assert.rejects(readAll(path), (error) => error instanceof InputError && error.message === `${path}: cannot read the audience file: it is a directory`);
  });
});

describe('splitCsv', () => {
  it('splits plain and quoted fields', () => {
    assert.deepEqual(splitCsv('a,b,,c'), ['a', 'b', '', 'c']);
    assert.deepEqual(splitCsv('"a,1","b""2",c'), ['a,1', 'b"2', 'c']);
    assert.deepEqual(splitCsv('"",x,""'), ['', 'x', '']);
    assert.deepEqual(splitCsv('a"b,c'), ['a"b', 'c']);
    assert.equal(typeof splitCsv('"open'), 'string');
    assert.deepEqual(splitCsv('a;"b;c";d', ';'), ['a', 'b;c', 'd']);
  });
});
