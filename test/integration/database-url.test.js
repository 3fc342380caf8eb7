// Heroku: the release phase runs `pushctl db migrate`, which must not fail an app without
// PostgreSQL, and Heroku Postgres needs TLS (DATABASE_SSL or the URL's sslmode). The local
// server has no TLS, so what is checked here is that the mode reaches pg: disable connects,
// verify-full is refused by this server, and a bad mode stops at config.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DATABASE_URL, uniquePrefix, testEnv, pushctl } from '../support/harness.js';

const schema = `t_${uniquePrefix().slice(2).replace(/-/g, '_')}`;
/** DATABASE_URL working in this file's own schema (pg reads `options` from the URL). */
const inSchema = (/** @type {Record<string, string>} */ params = {}) => {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
};
const admin = new pg.Client({ connectionString: DATABASE_URL });

before(async () => {
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
});

after(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

/** The environment without DATABASE_URL, as on an app with no PostgreSQL add-on. */
function envWithout(/** @type {Record<string, string>} */ more = {}) {
  const env = testEnv({ prefix: uniquePrefix(), snsUrl: 'http://127.0.0.1:9', ...more });
  if (!('DATABASE_URL' in more)) delete env.DATABASE_URL;
  return env;
}

const tables = async () => (await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema])).rows
  .map((row) => row.table_name);

test('db migrate without DATABASE_URL exits 0 and says there is nothing to run (the release phase of a files-only app)', async () => {
  const run = await pushctl(['db', 'migrate'], envWithout());
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'DATABASE_URL is unset: no migrations to run\n');
  assert.equal(run.stderr, '');
});

test('sslmode=disable in DATABASE_URL, or DATABASE_SSL=disable, migrates', async () => {
  const first = await pushctl(['db', 'migrate'], envWithout({ DATABASE_URL: inSchema({ sslmode: 'disable' }) }));
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^applied 001-devices\.sql/);
  assert.ok((await tables()).includes('devices'));
  const second = await pushctl(['db', 'migrate'], envWithout({ DATABASE_URL: inSchema(), DATABASE_SSL: 'disable' }));
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout, 'database is up to date\n');
});

test('DATABASE_SSL=verify-full reaches pg: this TLS-less server is refused, exit 1 naming PostgreSQL', async () => {
  const run = await pushctl(['db', 'migrate'], envWithout({ DATABASE_URL: inSchema(), DATABASE_SSL: 'verify-full' }));
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /PostgreSQL is not reachable at .*sslmode=verify-full.* \(The server does not support SSL connections\)/);
});

test('a bad TLS mode, or two that disagree, is a config error naming the variable (exit 2)', async () => {
  /** @type {[Record<string, string>, RegExp][]} */
  const cases = [
    [{ DATABASE_URL: inSchema({ sslmode: 'bogus' }) }, /^pushctl: DATABASE_URL has sslmode=bogus; use one of disable, no-verify, verify-full/],
    [{ DATABASE_URL: inSchema(), DATABASE_SSL: 'yes' }, /^pushctl: DATABASE_SSL must be one of disable, no-verify, verify-full, got "yes"/],
    [{ DATABASE_URL: inSchema({ sslmode: 'disable' }), DATABASE_SSL: 'no-verify' }, /^pushctl: DATABASE_SSL=no-verify and DATABASE_URL's sslmode=disable disagree/]
  ];
  for (const [more, message] of cases) {
    const run = await pushctl(['db', 'migrate'], envWithout(more));
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
  }
});
