// --audience -: the checks on --format, the terminal refusal and where the input ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { stdinFormat, spoolStdin } from '../../shared/audience/stdin-source.js';

test('--format is required with --audience - and refused with a file', () => {
  assert.equal(stdinFormat('-', 'csv'), 'csv');
  assert.equal(stdinFormat('-', 'ndjson'), 'ndjson');
  assert.equal(stdinFormat('users.csv', undefined), undefined);
  assert.throws(() => stdinFormat('-', undefined), /needs --format csv or --format ndjson/);
  assert.throws(() => stdinFormat('-', 'json'), /--format must be csv or ndjson, got "json"/);
  assert.throws(() => stdinFormat('users.csv', 'csv'), /--format is only for --audience -/);
});

test('a terminal is refused before anything is read, naming heroku run --no-tty', async () => {
  const terminal = Object.assign(new PassThrough(), { isTTY: true });
  await assert.rejects(spoolStdin(terminal, 'csv'), (error) => {
    assert.equal(/** @type {any} */ (error).code, 'PUSH_ERR_INPUT');
    assert.match(/** @type {Error} */ (error).message, /standard input, which is a terminal here: .*with heroku run, add --no-tty/);
    return true;
  });
});

test('the copy holds every byte up to the end or the first EOT, and close removes it', async () => {
  const whole = await spoolStdin(Readable.from([Buffer.from('a,b\n1,'), Buffer.from('2\n')]), 'csv');
  assert.equal(await readFile(whole.file, 'utf8'), 'a,b\n1,2\n');
  assert.match(whole.file, /audience\.csv$/);
  await whole.close();
  assert.equal(existsSync(whole.file), false);
  // The EOT in the second chunk ends it; the third chunk is never read.
  const open = new PassThrough();
  open.write('{"a":1}\n');
  open.write('{"b":2}\n\x04junk');
  const cut = await spoolStdin(open, 'ndjson');
  assert.equal(await readFile(cut.file, 'utf8'), '{"a":1}\n{"b":2}\n');
  await cut.close();
});
