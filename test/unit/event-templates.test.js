// Event templates: {{name}} placeholders filled in string values only, every missing
// param reported, and the filled message validated like a campaign's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PermanentError } from '../../shared/errors.js';
import { createTemplateStore, fillPlaceholders } from '../../shared/events/templates.js';

/** @type {string} */
let dir;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pushpace-templates-'));
  await writeFile(join(dir, 'greeting.json'), JSON.stringify({
    title: 'Hello {{ name }}', body: '{{name}} has {{count}} new {{what}}', badge: 3,
    locales: { fi: { body: '{{name}}: {{count}} uutta' } }, data: { user: '{{name}}' }
  }));
  await writeFile(join(dir, 'big.json'), JSON.stringify({ title: 'Big', body: '{{text}}' }));
  await writeFile(join(dir, 'broken.json'), '{ "title": ');
  await writeFile(join(dir, 'list.json'), '["not", "an", "object"]');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('fillPlaceholders', () => {
  it('fills strings at any depth and leaves keys, numbers and unknown syntax alone', () => {
    const filled = fillPlaceholders({ a: 'x{{p}}y', n: 1, list: ['{{p}}', { '{{p}}': '{{ p }}' }], raw: '{p} {{}} {{1p}}' }, { p: 'Q' });
    assert.deepEqual(filled, { a: 'xQy', n: 1, list: ['Q', { '{{p}}': 'Q' }], raw: '{p} {{}} {{1p}}' });
  });

  it('puts values in as text, so quotes and braces in a param cannot change the structure', () => {
    const filled = fillPlaceholders({ body: 'Said: {{quote}}' }, { quote: '"}, "evil": {"' });
    assert.deepEqual(filled, { body: 'Said: "}, "evil": {"' });
    assert.deepEqual(fillPlaceholders({ body: '{{n}} {{b}}' }, { n: 4.5, b: false }), { body: '4.5 false' });
  });

  it('does not fill a placeholder from a value inserted by another', () => {
    assert.deepEqual(fillPlaceholders({ body: '{{a}}' }, { a: '{{b}}', b: 'no' }), { body: '{{b}}' });
  });

  it('names every missing param, and ignores params the template does not use', () => {
    assert.throws(() => fillPlaceholders({ t: '{{a}} {{b}} {{a}}' }, { c: 1 }, 'template "x"'),
      (error) => error instanceof PermanentError && error.message === 'template "x": missing params "a", "b"');
    assert.throws(() => fillPlaceholders({ t: '{{toString}}' }, {}), /missing param "toString"/, 'inherited properties are not params');
  });
});

describe('createTemplateStore', () => {
  it('renders a template into a validated message, locales and data included', async () => {
    const templates = createTemplateStore(dir);
    const message = await templates.render('greeting', { name: 'Ann', count: 2, what: 'lists' });
    assert.deepEqual(message, {
      title: 'Hello Ann', body: 'Ann has 2 new lists', badge: 3,
      locales: { fi: { body: 'Ann: 2 uutta' } }, data: { user: 'Ann' }
    });
    // Cached after the first read, and each render fills its own copy.
    const other = await templates.render('greeting', { name: 'Bo', count: 1, what: 'list' });
    assert.equal(other.title, 'Hello Bo');
  });

  it('checks the size once filled, so a long param can make an event poison', async () => {
    const templates = createTemplateStore(dir);
    await assert.rejects(templates.render('big', { text: 'x'.repeat(5000) }),
      (error) => error instanceof PermanentError && /^template "big": the APNS payload for the default locale is \d+ bytes; the limit is 4096/.test(error.message));
  });

  it('reports unknown, broken and non-object templates, and refuses names that leave the directory', async () => {
    const templates = createTemplateStore(dir);
    await assert.rejects(templates.render('missing', {}), (error) => error instanceof PermanentError && error.message === `template "missing" does not exist (no missing.json in ${dir})`);
    await assert.rejects(templates.render('broken', {}), /^PermanentError: template "broken": broken\.json is not valid JSON/);
    await assert.rejects(templates.render('list', {}), /template "list": list\.json must be a JSON object/);
    await assert.rejects(templates.render('../etc/passwd', {}), /is not a valid template name/);
  });

  it('reads a directory relative to the working directory', async () => {
    const templates = createTemplateStore(relative(process.cwd(), new URL('../../templates', import.meta.url).pathname) || '.');
    const message = await templates.render('list-shared', { sharerName: 'Ann', listName: 'Weekend', listId: '7' });
    assert.equal(message.body, 'Ann shared "Weekend" with you');
  });
});
