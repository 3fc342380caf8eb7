import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../shared/errors.js';
import { createRenderer, messageAttributes, parseMessage, readMessageFile, renderForPlatform, validateMessageSize } from '../../shared/sns/message.js';

/** @typedef {import('../../shared/types.js').Message} Message */

/** @param {Record<string, unknown>} fields */
const json = (fields) => JSON.stringify({ title: 'Hello', body: 'World', ...fields });

/**
 * @param {string} text
 * @param {string | RegExp} expected the whole message, or a pattern
 */
function rejects(text, expected, source = 'message.json') {
  assert.throws(() => parseMessage(text, source), (error) => {
    assert.ok(error instanceof InputError, String(error));
    if (typeof expected === 'string') assert.equal(error.message, expected);
    else assert.match(error.message, expected);
    return true;
  });
}

/**
 * The SNS Message and its inner payload for one platform.
 * @param {string} rendered
 * @param {string} platform
 */
function unwrap(rendered, platform) {
  const outer = JSON.parse(rendered);
  assert.deepEqual(Object.keys(outer), ['default', platform]);
  assert.equal(typeof outer[platform], 'string', 'the platform payload is itself a JSON string');
  return { text: outer.default, payload: JSON.parse(outer[platform]) };
}

describe('parseMessage', () => {
  it('accepts the example announcement', async () => {
    const message = parseMessage(await readFile(new URL('../../examples/announcement.json', import.meta.url), 'utf8'), 'announcement.json');
    assert.equal(message.ttlSeconds, 3600);
    assert.deepEqual(Object.keys(message.locales ?? {}).sort(), ['de', 'fi']);
    assert.match(message.deepLink ?? '', /^[a-z-]+:\/\//);
  });

  it('returns only the known fields, with locale tags canonicalised', () => {
    const message = parseMessage(json({ locales: { 'pt-br': { body: 'Olá' } }, badge: 0, sound: 'default' }));
    assert.deepEqual(message, { title: 'Hello', body: 'World', locales: { 'pt-BR': { body: 'Olá' } }, sound: 'default', badge: 0 });
  });

  it('names the file and the field that is wrong', () => {
    rejects(JSON.stringify({ body: 'x' }), 'message.json: title is missing');
    rejects(JSON.stringify({ title: 'x' }), 'promo.json: body is missing', 'promo.json');
    rejects(json({ title: 3 }), 'message.json: title must be a string');
    rejects(json({ body: '  ' }), 'message.json: body is empty');
    rejects(json({ locales: { fi: { body: 5 } } }), 'message.json: locales.fi.body must be a string');
    rejects(json({ locales: { fi: {} } }), 'message.json: locales.fi needs a title or a body');
    rejects(json({ locales: { fi: { titel: 'x' } } }), /locales\.fi: unknown field "titel"/);
    rejects(json({ locales: { 'not a tag': { body: 'x' } } }), /locales\."not a tag" is not a language tag/);
    rejects(json({ locales: { 'pt-BR': { body: 'x' }, 'pt-br': { body: 'y' } } }), /locales has both "pt-BR" and "pt-br"/);
    rejects(json({ locales: ['fi'] }), /locales must be an object/);
  });

  it('rejects unknown top-level fields so that typos do not pass', () => {
    rejects(JSON.stringify({ titel: 'Hello', title: 'Hello', body: 'World' }), /^message\.json: unknown field "titel"; the fields are title, body/);
  });

  it('rejects text that is not a JSON object', () => {
    rejects('{ "title": ', /^message\.json: not valid JSON/);
    rejects('["title"]', /must be a JSON object/);
    rejects('null', /must be a JSON object/);
  });

  it('requires data values to be strings and keeps reserved keys out', () => {
    rejects(json({ data: { offerId: 42 } }), 'message.json: data.offerId must be a string (FCM delivers data values only as strings)');
    rejects(json({ data: { aps: 'x' } }), /data\.aps is a reserved key/);
    rejects(json({ data: { 'google.c.a': 'x' } }), /data\.google\.c\.a is a reserved key/);
    rejects(json({ data: 'x' }), /data must be an object/);
  });

  it('checks ttlSeconds, deepLink, sound and badge', () => {
    for (const ttl of [-1, 1.5, 2_419_201, '60']) rejects(json({ ttlSeconds: ttl }), /ttlSeconds must be a whole number of seconds from 0 to 2419200/);
    assert.equal(parseMessage(json({ ttlSeconds: 0 })).ttlSeconds, 0);
    assert.equal(parseMessage(json({ ttlSeconds: 2_419_200 })).ttlSeconds, 2_419_200);
    rejects(json({ deepLink: 'offers/42' }), /deepLink must be an absolute URL/);
    assert.equal(parseMessage(json({ deepLink: 'myapp://offers/42' })).deepLink, 'myapp://offers/42');
    rejects(json({ sound: '' }), 'message.json: sound is empty');
    rejects(json({ badge: -1 }), /badge must be a whole number/);
  });

  it('rejects a payload over 4096 bytes, counting UTF-8 bytes, naming locale and platform', () => {
    // 2,100 "ä" are 4,200 bytes; 2,100 "a" fit.
    assert.doesNotThrow(() => parseMessage(json({ locales: { fi: { body: 'a'.repeat(2100) } } })));
    rejects(json({ locales: { fi: { body: 'ä'.repeat(2100) } } }), /^message\.json: the APNS payload for locale "fi" is \d+ bytes; the limit is 4096/);
    rejects(json({ body: 'x'.repeat(5000) }), /^message\.json: the APNS payload for the default locale is 50\d\d bytes; the limit is 4096/);
  });
});

describe('validateMessageSize', () => {
  it('checks a message built in code, per platform', () => {
    // The same message has a different size on each platform (GCM wraps data in "data" and
    // adds "notification"), so a payload can fit APNS and still be too large for GCM.
    /** @type {Message} */
    const message = { title: 't', body: 'b', data: { blob: 'x'.repeat(4040) } };
    assert.throws(() => validateMessageSize(message, 'built'), /built: the GCM payload for the default locale is \d+ bytes/);
    assert.doesNotThrow(() => validateMessageSize({ title: 't', body: 'b', data: { blob: 'x'.repeat(3000) } }));
  });
});

describe('renderForPlatform', () => {
  /** @type {Message} */
  const message = {
    title: 'Offers',
    body: 'Save 20%',
    locales: { fi: { title: 'Tarjoukset', body: 'Säästä 20 %' }, de: { body: 'Spare 20 %' }, 'pt-BR': { title: 'Ofertas', body: 'Economize 20%' } },
    data: { campaign: 'weekend' },
    deepLink: 'myapp://offers',
    ttlSeconds: 600,
    sound: 'chime.caf',
    badge: 3
  };

  it('renders APNS with aps, data next to it, and deepLink', () => {
    for (const platform of /** @type {const} */ (['APNS', 'APNS_SANDBOX'])) {
      const { text, payload } = unwrap(renderForPlatform(message, platform), platform);
      assert.equal(text, 'Save 20%');
      assert.deepEqual(payload, {
        aps: { alert: { title: 'Offers', body: 'Save 20%' }, sound: 'chime.caf', badge: 3 },
        campaign: 'weekend',
        deepLink: 'myapp://offers'
      });
    }
  });

  it('renders GCM with notification, data (with deepLink) and time_to_live', () => {
    const { payload } = unwrap(renderForPlatform(message, 'GCM', 'fi'), 'GCM');
    assert.deepEqual(payload, {
      notification: { title: 'Tarjoukset', body: 'Säästä 20 %' },
      data: { campaign: 'weekend', deepLink: 'myapp://offers' },
      time_to_live: 600
    });
  });

  it('leaves out what the message does not have', () => {
    /** @type {Message} */
    const plain = { title: 'Hi', body: 'There' };
    assert.deepEqual(unwrap(renderForPlatform(plain, 'GCM'), 'GCM').payload, { notification: { title: 'Hi', body: 'There' } });
    assert.deepEqual(unwrap(renderForPlatform(plain, 'APNS'), 'APNS').payload, { aps: { alert: { title: 'Hi', body: 'There' } } });
  });

  it('falls back from the exact tag (any case) to the language, then to the default, field by field', () => {
    /** @param {string | undefined} locale */
    const alert = (locale) => unwrap(renderForPlatform(message, 'APNS', locale), 'APNS').payload.aps.alert;
    assert.deepEqual(alert('FI'), { title: 'Tarjoukset', body: 'Säästä 20 %' });
    assert.deepEqual(alert('fi-FI'), { title: 'Tarjoukset', body: 'Säästä 20 %' });
    assert.deepEqual(alert('pt-br'), { title: 'Ofertas', body: 'Economize 20%' });
    assert.deepEqual(alert('pt-PT'), { title: 'Offers', body: 'Save 20%' }, 'no "pt" variant: default');
    assert.deepEqual(alert('de-AT'), { title: 'Offers', body: 'Spare 20 %' }, 'the de variant has only a body');
    assert.deepEqual(alert('sv'), { title: 'Offers', body: 'Save 20%' });
    assert.deepEqual(alert(undefined), { title: 'Offers', body: 'Save 20%' });
    assert.equal(unwrap(renderForPlatform(message, 'GCM', 'de'), 'GCM').text, 'Spare 20 %');
  });
});

describe('messageAttributes', () => {
  it('gives the TTL for every platform as a String attribute', () => {
    assert.deepEqual(messageAttributes({ title: 't', body: 'b', ttlSeconds: 3600 }), {
      'AWS.SNS.MOBILE.APNS.TTL': { DataType: 'String', StringValue: '3600' },
      'AWS.SNS.MOBILE.APNS_SANDBOX.TTL': { DataType: 'String', StringValue: '3600' },
      'AWS.SNS.MOBILE.FCM.TTL': { DataType: 'String', StringValue: '3600' }
    });
    assert.equal(messageAttributes({ title: 't', body: 'b' }), undefined);
  });
});

describe('createRenderer', () => {
  /** @type {Message} */
  const message = { title: 'Offers', body: 'Save', locales: { fi: { body: 'Säästä' } }, ttlSeconds: 60 };

  it('renders what renderForPlatform renders, with the attributes', () => {
    const render = createRenderer(message);
    for (const platform of /** @type {const} */ (['APNS', 'APNS_SANDBOX', 'GCM'])) {
      for (const locale of [undefined, 'fi', 'fi-FI', 'en']) {
        const result = render(platform, locale);
        assert.equal(result.message, renderForPlatform(message, platform, locale));
        assert.deepEqual(result.attributes, messageAttributes(message));
      }
    }
  });

  it('returns the cached, frozen result on later calls', () => {
    const render = createRenderer(message);
    const first = render('GCM', 'fi');
    assert.equal(render('GCM', 'fi'), first);
    assert.notEqual(render('APNS', 'fi'), first);
    assert.ok(Object.isFrozen(first));
    assert.ok(first.attributes && Object.isFrozen(first.attributes['AWS.SNS.MOBILE.FCM.TTL']));
  });

  it('does not let a later change to the message object alter cached output', () => {
    /** @type {Message} */
    const mutable = { title: 'A', body: 'B' };
    const render = createRenderer(mutable);
    const before = render('GCM').message;
    mutable.body = 'changed';
    assert.equal(render('GCM').message, before);
  });
});

describe('readMessageFile (pushctl send and schedule add)', () => {
  it('reads and validates a file, naming it in every problem', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pushpace-message-'));
    try {
      const good = join(dir, 'sale.json');
      await writeFile(good, JSON.stringify({ title: 'Sale', body: 'Today only' }));
      assert.deepEqual(await readMessageFile(good), { title: 'Sale', body: 'Today only' });
      const bad = join(dir, 'bad.json');
      await writeFile(bad, JSON.stringify({ title: 'Sale' }));
      await assert.rejects(readMessageFile(bad), /^InputError: bad\.json: /);
      await assert.rejects(readMessageFile(join(dir, 'missing.json')), (error) => {
        assert.ok(error instanceof InputError);
        assert.equal(error.message, `--message ${join(dir, 'missing.json')}: cannot read the file (no such file)`);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
