// app.json (Heroku's one-step app creation) stays in step with the Procfile and the config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULTS, OPTIONAL_VARIABLES, AWS_CREDENTIAL_VARS, loadConfig } from '../../config/index.js';

const root = new URL('../../', import.meta.url);
const app = JSON.parse(readFileSync(new URL('app.json', root), 'utf8'));
const procfileTypes = readFileSync(new URL('Procfile', root), 'utf8').trim().split('\n').map((line) => line.split(':')[0]);
// Read by the AWS SDK itself (config/index.js only looks at whether they are there).
const SDK_VARIABLES = [...AWS_CREDENTIAL_VARS, 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];
// What the add-ons set: Heroku Key-Value Store's TLS URL, Heroku Postgres's URL without sslmode.
const ADDON_ENV = {
  REDIS_URL: 'rediss://:p4ssw0rd@ec2-3-4-5-6.compute-1.amazonaws.com:12345',
  DATABASE_URL: 'postgres://u:p@ec2-1-2-3-4.compute-1.amazonaws.com:5432/d8f'
};

test('the formation has every Procfile process type but release, and nothing else', () => {
  assert.deepEqual(Object.keys(app.formation).sort(), procfileTypes.filter((type) => type !== 'release').sort());
  for (const [type, { quantity, size }] of Object.entries(app.formation)) {
    assert.ok(Number.isInteger(quantity) && quantity >= 0, `${type}: quantity`);
    assert.match(size, /^(eco|basic|standard-[12]x|performance-(m|l|l-ram|xl|2xl))$/, `${type}: a Heroku dyno size`);
  }
  // The governor needs a gateway to read (GATEWAY_METRICS) and ingest a RabbitMQ with events: off until configured.
  assert.equal(app.formation.governor.quantity, 0);
  assert.equal(app.formation.ingest.quantity, 0);
  assert.ok(app.formation.worker.quantity >= 1 && app.formation.web.quantity >= 1);
});

test('the add-ons give the app its REDIS_URL and DATABASE_URL', () => {
  const plans = app.addons.map((/** @type {{ plan: string, as?: string }} */ addon) => `${addon.plan.split(':')[0]} as ${addon.as}`);
  assert.deepEqual(plans.sort(), ['heroku-postgresql as DATABASE', 'heroku-redis as REDIS']);
  // A RabbitMQ add-on is needed only for QUEUE_BACKEND=rabbitmq (or ingest), which app.json does not choose.
  assert.equal(app.env.QUEUE_BACKEND.value, 'bullmq');
});

test('every config var is one the app reads, described, and required only when the config has no default', () => {
  const known = new Set([...Object.keys(DEFAULTS), ...OPTIONAL_VARIABLES, ...SDK_VARIABLES]);
  for (const [name, spec] of Object.entries(app.env)) {
    assert.ok(known.has(name), `${name} is not read by config/index.js or the AWS SDK`);
    assert.ok(typeof spec.description === 'string' && spec.description.length > 20, `${name}: a description`);
    if (spec.required !== false) assert.ok(!(name in DEFAULTS), `${name} is required in app.json but has a default in config/index.js`);
  }
  for (const name of ['REDIS_URL', 'DATABASE_URL']) assert.ok(!(name in app.env), `${name} comes from its add-on`);
});

test('the app as Heroku would create it passes loadConfig: TLS to Redis and PostgreSQL, real SNS', () => {
  /** @type {Record<string, string>} */
  const env = { ...ADDON_ENV };
  for (const [name, spec] of Object.entries(app.env)) {
    if (spec.value !== undefined) env[name] = spec.value;
    else if (spec.generator === 'secret') env[name] = 'a'.repeat(64); // Heroku's generator: 64 hex characters
    else if (spec.required) env[name] = `placeholder-${name.toLowerCase()}`;
  }
  const config = loadConfig(env);
  assert.equal(config.redis.url, ADDON_ENV.REDIS_URL);
  assert.equal(config.redis.tlsRejectUnauthorized, false);
  assert.equal(config.databaseUrl, `${ADDON_ENV.DATABASE_URL}?sslmode=no-verify`);
  assert.equal(config.sns.endpoint, undefined, 'AWS, not the emulator');
  assert.equal(config.sns.emulator, false);
  assert.equal(config.dashboard.publicReads, false);
  assert.ok(config.dashboard.token);
});
