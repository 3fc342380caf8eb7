// The TLS settings of managed Redis and PostgreSQL (Heroku): off only where asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/index.js';

test('REDIS_TLS_REJECT_UNAUTHORIZED: true unless set to false; anything else names the variable', () => {
  assert.equal(loadConfig({ REDIS_URL: 'rediss://:secret@example.com:6380' }).redis.tlsRejectUnauthorized, true);
  assert.equal(loadConfig({ REDIS_URL: 'rediss://:secret@example.com:6380', REDIS_TLS_REJECT_UNAUTHORIZED: 'false' }).redis.tlsRejectUnauthorized, false);
  assert.equal(loadConfig({ REDIS_TLS_REJECT_UNAUTHORIZED: 'true' }).redis.tlsRejectUnauthorized, true);
  assert.throws(() => loadConfig({ REDIS_TLS_REJECT_UNAUTHORIZED: '0' }), /^ConfigError: REDIS_TLS_REJECT_UNAUTHORIZED must be one of true, false, got "0"/);
});

test('DATABASE_SSL is written into DATABASE_URL as pg\'s sslmode; the URL\'s own sslmode is kept', () => {
  const heroku = 'postgres://u:p@ec2-1-2-3-4.compute-1.amazonaws.com:5432/d8f';
  assert.equal(loadConfig({ DATABASE_URL: heroku, DATABASE_SSL: 'no-verify' }).databaseUrl, `${heroku}?sslmode=no-verify`);
  assert.equal(loadConfig({ DATABASE_URL: heroku }).databaseUrl, heroku);
  assert.equal(loadConfig({ DATABASE_URL: `${heroku}?sslmode=require` }).databaseUrl, `${heroku}?sslmode=require`);
  assert.equal(loadConfig({ DATABASE_URL: `${heroku}?sslmode=no-verify`, DATABASE_SSL: 'no-verify' }).databaseUrl, `${heroku}?sslmode=no-verify`);
  assert.throws(() => loadConfig({ DATABASE_URL: `${heroku}?sslmode=required` }), /DATABASE_URL has sslmode=required/);
  assert.throws(() => loadConfig({ DATABASE_SSL: 'require' }), /DATABASE_SSL must be one of disable, no-verify, verify-full/);
});

test('databaseUrlSet says whether DATABASE_URL was given (the default is for local runs only)', () => {
  assert.equal(loadConfig({}).databaseUrlSet, false);
  assert.equal(loadConfig({ DATABASE_URL: ' ' }).databaseUrlSet, false);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://localhost/x' }).databaseUrlSet, true);
});
