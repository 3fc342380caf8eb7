// Against the real PostgreSQL at DATABASE_URL. Each run works in a schema of its own,
// created here and dropped in `after`, reached through the pool's search_path.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { readAudience, summarizeAudience } from '../../shared/audience/audience-reader.js';
import { checkSelectQuery, readAudienceQuery, withReadSnapshot } from '../../shared/audience/postgres-source.js';
import { migrate } from '../../shared/db/migrate.js';
import { createPool } from '../../shared/db/pool.js';
import { ConfigError, InputError, UnavailableError } from '../../shared/errors.js';

/** @typedef {import('../../shared/types.js').AudienceItem} AudienceItem */

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `pushpace_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const ALL = 'SELECT endpoint_arn, platform, user_id, locale, timezone FROM devices WHERE enabled ORDER BY id';

/** @param {number} n */
const arn = (n, platform = 'GCM') => `arn:aws:sns:us-east-1:123456789012:endpoint/${platform}/pushpace-test/0b1d2c3e-0000-4000-a000-${String(n).padStart(12, '0')}`;

/** @type {pg.Pool} */
let pool;
/** @type {pg.Pool} */
let admin;

/** @param {AsyncIterable<AudienceItem>} items */
async function collect(items) {
  /** @type {AudienceItem[]} */
  const out = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Every client is back in the pool: nothing leaked by a read, a failure or an early stop. */
function assertAllReleased() {
  assert.equal(pool.waitingCount, 0);
  assert.equal(pool.idleCount, pool.totalCount);
}

/**
 * Asserts that reading `sql` fails with an InputError of exactly `message`, or matching it.
 * @param {string} sql
 * @param {string | RegExp} message
 */
async function rejectsInput(sql, message) {
  await assert.rejects(collect(readAudienceQuery(pool, sql)), (error) => {
    assert.ok(error instanceof InputError, String(error));
    if (typeof message === 'string') assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
  assertAllReleased();
}

before(async () => {
  admin = createPool(DATABASE_URL);
  await admin.query(`CREATE SCHEMA ${schema}`);
  pool = createPool(DATABASE_URL, { options: `-c search_path=${schema}` });
});

after(async () => {
  await pool?.end();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

describe('migrate', () => {
  it('creates the devices table once, even when two processes migrate at the same time', async () => {
    const other = createPool(DATABASE_URL, { options: `-c search_path=${schema}` });
    try {
      const results = await Promise.all([migrate(pool), migrate(other)]);
      assert.deepEqual(results.map((applied) => applied.length).sort(), [0, 1]);
      assert.deepEqual(results.flat(), ['001-devices.sql']);
    } finally {
      await other.end();
    }
    assert.deepEqual(await migrate(pool), [], 'idempotent');
    const { rows } = await pool.query('SELECT name FROM pushpace_migrations');
    assert.deepEqual(rows, [{ name: '001-devices.sql' }]);
  });

  it('made a devices table with the constraints and indexes the audience reads rely on', async () => {
    await assert.rejects(pool.query(`INSERT INTO devices (endpoint_arn, platform) VALUES ('x', 'WNS')`), /devices_platform_check/);
    await pool.query(`INSERT INTO devices (endpoint_arn, platform) VALUES ('dup-check', 'GCM')`);
    await assert.rejects(pool.query(`INSERT INTO devices (endpoint_arn, platform) VALUES ('dup-check', 'GCM')`), /devices_endpoint_arn_key/);
    await pool.query(`DELETE FROM devices WHERE endpoint_arn = 'dup-check'`);
    const { rows } = await pool.query('SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [schema, 'devices']);
    const byName = new Map(rows.map((row) => [row.indexname, row.indexdef]));
    assert.match(byName.get('devices_user_id_idx') ?? '', /\(user_id\)/);
    assert.match(byName.get('devices_enabled_id_idx') ?? '', /WHERE enabled/);
  });
});

describe('readAudienceQuery', () => {
  before(async () => {
    await pool.query(`INSERT INTO devices (user_id, endpoint_arn, platform, locale, timezone, enabled) VALUES
      ('u1', $1, 'GCM', 'fi', 'Europe/Helsinki', true),
      ('u2', $2, 'APNS', 'pt_BR', NULL, true),
      (NULL, $3, 'APNS_SANDBOX', '', '', true),
      ('u4', 'not-an-arn', 'GCM', NULL, NULL, true),
      ('u5', $4, 'GCM', NULL, 'Mars/Olympus', true),
      ('u6', $5, 'GCM', NULL, NULL, false)`,
    [arn(1), arn(2, 'APNS'), arn(3, 'APNS_SANDBOX'), arn(5), arn(6)]);
  });

  it('reads rows through a cursor in small batches, numbering rows from 1', async () => {
    assert.deepEqual(await collect(readAudienceQuery(pool, ALL, { batchSize: 2 })), [
      { device: { endpointArn: arn(1), platform: 'GCM', userId: 'u1', locale: 'fi', timezone: 'Europe/Helsinki' }, line: 1 },
      { device: { endpointArn: arn(2, 'APNS'), platform: 'APNS', userId: 'u2', locale: 'pt-BR' }, line: 2 },
      { device: { endpointArn: arn(3, 'APNS_SANDBOX'), platform: 'APNS_SANDBOX' }, line: 3 },
      { skipped: { line: 4, reason: 'endpointArn is not an SNS platform endpoint ARN (arn:aws:sns:<region>:<account>:endpoint/<platform>/<app>/<id>)' } },
      { skipped: { line: 5, reason: 'timezone "Mars/Olympus" is not an IANA time zone like "Europe/Helsinki"' } }
    ]);
    assertAllReleased();
  });

  it('accepts camelCase column aliases, comments and a trailing semicolon', async () => {
    const items = await collect(readAudienceQuery(pool, `-- the Finnish users
      SELECT endpoint_arn AS "endpointArn", platform /* ; not a second statement */, 'a;b' AS note
      FROM devices WHERE locale = 'fi';  `));
    assert.deepEqual(items, [{ device: { endpointArn: arn(1), platform: 'GCM' }, line: 1 }]);
  });

  it('returns nothing for an empty result', async () => {
    assert.deepEqual(await collect(readAudienceQuery(pool, 'SELECT endpoint_arn, platform FROM devices WHERE false')), []);
    assertAllReleased();
  });

  it('turns SQL that PostgreSQL rejects into an InputError with its message', async () => {
    await rejectsInput('SELECT * FORM devices', '--query: syntax error at or near "FORM"');
    await rejectsInput('SELECT nope, platform FROM devices', '--query: column "nope" does not exist');
    await rejectsInput('SELECT endpoint_arn, platform FROM no_such_table', '--query: relation "no_such_table" does not exist');
    await rejectsInput('SELECT endpoint_arn, platform FROM no_such_schema.devices',
      '--query: relation "no_such_schema.devices" does not exist (create it with: pushctl db migrate)');
    // An error part-way through the rows is the query's fault too.
    await rejectsInput(`SELECT endpoint_arn, platform, 1 / (id - id) AS boom FROM devices`, '--query: division by zero');
    const items = await collect(readAudienceQuery(pool, 'SELECT endpoint_arn, platform FROM devices ORDER BY id LIMIT 1'));
    assert.equal(items.length, 1, 'the pool still works after the failures');
  });

  it('names the query source given in the options', async () => {
    await assert.rejects(collect(readAudienceQuery(pool, 'SELECT * FORM devices', { source: 'segment "vip"' })), /^InputError: segment "vip": syntax error/);
  });

  it('rejects anything but one SELECT before sending it, and leaves the data alone', async () => {
    await rejectsInput('DELETE FROM devices', '--query: only a SELECT query is allowed, not DELETE; it must return endpoint_arn and platform columns');
    await rejectsInput('  update devices set enabled = false', /only a SELECT query is allowed, not UPDATE/);
    await rejectsInput('DROP TABLE devices', /not DROP/);
    await rejectsInput('SELECT endpoint_arn, platform FROM devices; DELETE FROM devices', '--query: only one statement is allowed; remove what follows the ";"');
    await rejectsInput('   -- nothing\n', /the query is empty/);
    // A data-modifying WITH gets past the first word; the READ ONLY transaction stops it.
    await rejectsInput(`WITH gone AS (DELETE FROM devices RETURNING endpoint_arn, platform) SELECT * FROM gone`, /read-only transaction/);
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM devices');
    assert.equal(rows[0].n, 6);
  });

  it('requires endpoint_arn and platform columns, checked even when there are no rows', async () => {
    await rejectsInput('SELECT endpoint_arn FROM devices', /^--query: the result has no platform column \(columns: endpoint_arn\)/);
    await rejectsInput('SELECT platform, user_id FROM devices WHERE false', /^--query: the result has no endpoint_arn column \(columns: platform, user_id\)/);
    // More rows than one batch: the open cursor must be closed before the client goes back.
    await assert.rejects(collect(readAudienceQuery(pool, 'SELECT endpoint_arn FROM devices', { batchSize: 1 })), InputError);
    assertAllReleased();
  });

  it('gives the client back when the consumer stops early', async () => {
    let seen = 0;
    for await (const item of readAudienceQuery(pool, ALL, { batchSize: 1 })) {
      assert.ok('device' in item);
      if (++seen === 2) break;
    }
    assertAllReleased();
    const { rows } = await pool.query('SELECT 1 AS ok');
    assert.equal(rows[0].ok, 1);
  });

  it('joins the transaction of a client it is given, and neither begins nor ends one', async () => {
    const client = await pool.connect();
    try {
      await collect(readAudienceQuery(client, ALL));
      // Had it begun its REPEATABLE READ transaction and left it open, this would say so.
      const { rows } = await client.query('SHOW transaction_isolation');
      assert.equal(rows[0].transaction_isolation, 'read committed');
      const status = await client.query(`SELECT now() = statement_timestamp() AS outside`);
      assert.equal(status.rows[0].outside, true, 'no transaction left open');
    } finally {
      client.release();
    }
  });

  it('sees one snapshot in two reads on a withReadSnapshot client, while rows are added in between', async () => {
    const counts = await withReadSnapshot(pool, async (client) => {
      const first = await summarizeAudience(readAudienceQuery(client, ALL));
      await admin.query(`INSERT INTO ${schema}.devices (endpoint_arn, platform) VALUES ($1, 'GCM')`, [arn(7)]);
      const second = await summarizeAudience(readAudienceQuery(client, ALL));
      return [first.devices, second.devices];
    });
    assert.deepEqual(counts, [3, 3]);
    const after = await summarizeAudience(readAudienceQuery(pool, ALL));
    assert.equal(after.devices, 4, 'a new snapshot sees the new row');
    await pool.query('DELETE FROM devices WHERE endpoint_arn = $1', [arn(7)]);
    assertAllReleased();
  });

  it('feeds readAudience, which marks the duplicates a UNION ALL produces', async () => {
    // Five enabled rows twice: four valid endpoints (one disabled in Redis) and one bad ARN.
    const query = 'SELECT endpoint_arn, platform FROM devices WHERE enabled UNION ALL SELECT endpoint_arn, platform FROM devices WHERE enabled';
    const summary = await summarizeAudience(readAudience({ query, pool }, { isDisabled: async (arns) => arns.map((value) => value === arn(2, 'APNS')) }));
    assert.deepEqual({ devices: summary.devices, skipped: summary.skipped, duplicates: summary.duplicates, disabled: summary.disabled },
      { devices: 3, skipped: 2, duplicates: 4, disabled: 1 });
  });
});

describe('readAudienceQuery at scale', () => {
  before(async () => {
    await pool.query(`INSERT INTO devices (user_id, endpoint_arn, platform, locale)
      SELECT 'bulk-' || g, 'arn:aws:sns:us-east-1:123456789012:endpoint/GCM/pushpace-bulk/' || lpad(g::text, 12, '0'), 'GCM', 'de'
      FROM generate_series(1, 50000) AS g`);
  });

  it('reads 50,000 rows in batches of batchSize, never asking for more', async () => {
    const client = await pool.connect();
    /** @type {number[]} */
    const fetches = [];
    // pg-cursor asks for each batch with an Execute message carrying a row limit.
    const connection = /** @type {any} */ (client).connection;
    const execute = connection.execute;
    connection.execute = (/** @type {{ rows?: number }} */ message, /** @type {unknown[]} */ ...rest) => {
      fetches.push(message.rows ?? 0);
      return execute.call(connection, message, ...rest);
    };
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      let line = 0;
      for await (const item of readAudienceQuery(client, `SELECT endpoint_arn, platform, user_id FROM devices WHERE user_id LIKE 'bulk-%' ORDER BY id`, { batchSize: 1000 })) {
        line += 1;
        assert.ok('device' in item);
        assert.equal(item.line, line);
        if (line === 1 || line === 50_000) assert.equal(item.device.userId, `bulk-${line}`);
      }
      assert.equal(line, 50_000);
      await client.query('COMMIT');
    } finally {
      connection.execute = execute;
      client.release();
    }
    assert.ok(fetches.length >= 50, `${fetches.length} fetches`);
    assert.ok(fetches.every((rows) => rows === 1000), 'every fetch is limited to batchSize rows');
  });

  it('reads the same 50,000 rows from a pool with the default batch size', async () => {
    const summary = await summarizeAudience(readAudienceQuery(pool, `SELECT endpoint_arn, platform, locale FROM devices WHERE user_id LIKE 'bulk-%'`));
    assert.equal(summary.devices, 50_000);
    assert.deepEqual(summary.byPlatform, { APNS: 0, APNS_SANDBOX: 0, GCM: 50_000 });
    assertAllReleased();
  });
});

describe('connection problems', () => {
  it('reports a refused connection as UnavailableError naming the host, never the password', async () => {
    const down = createPool('postgres://pushpace:s3cret-password@127.0.0.1:1/test');
    try {
      await assert.rejects(collect(readAudienceQuery(down, 'SELECT endpoint_arn, platform FROM devices')), (error) => {
        assert.ok(error instanceof UnavailableError, String(error));
        assert.match(error.message, /PostgreSQL at 127\.0\.0\.1:1 \(DATABASE_URL\)/);
        assert.ok(!error.message.includes('s3cret'));
        return true;
      });
    } finally {
      await down.end();
    }
  });

  it('reports a database that does not exist as a DATABASE_URL to fix', async () => {
    const url = new URL(DATABASE_URL);
    url.pathname = `/no_such_db_${randomUUID().slice(0, 8)}`;
    const wrong = createPool(url.href);
    try {
      await assert.rejects(collect(readAudienceQuery(wrong, 'SELECT endpoint_arn, platform FROM devices')),
        (error) => error instanceof ConfigError && /^DATABASE_URL: database "no_such_db_/.test(error.message));
    } finally {
      await wrong.end();
    }
  });
});

describe('checkSelectQuery', () => {
  it('ignores semicolons and keywords inside literals, identifiers, dollar quotes and comments', () => {
    assert.equal(checkSelectQuery(`SELECT 'x;y', "a;b", $$;$$, $tag$ ; DROP $tag$, E'it\\'s;' FROM t;`), `SELECT 'x;y', "a;b", $$;$$, $tag$ ; DROP $tag$, E'it\\'s;' FROM t`);
    assert.equal(checkSelectQuery('/* a /* nested */ comment; */ (SELECT 1)'), '/* a /* nested */ comment; */ (SELECT 1)');
    assert.equal(checkSelectQuery('with x as (select 1) select * from x'), 'with x as (select 1) select * from x');
    assert.throws(() => checkSelectQuery(`SELECT 'x'; SELECT 'y'`), /only one statement/);
    assert.throws(() => checkSelectQuery('INSERT INTO t SELECT 1'), /not INSERT/);
    assert.throws(() => checkSelectQuery('"select" FROM t'), InputError);
  });
});
