// Streams an audience from a PostgreSQL query through a cursor, a batch of rows at a
// time, so an audience of every user never sits in memory at once.
//
// The read runs in a REPEATABLE READ READ ONLY transaction. Whoever needs two passes
// over the same audience (count first, enqueue after the operator confirms) opens that
// transaction once with withReadSnapshot and passes its client to both reads: both see
// the same snapshot, even while devices are registered in between.
import pg from 'pg';
import Cursor from 'pg-cursor';
import { ConfigError, InputError, UnavailableError } from '../errors.js';
import { canonicalField, parseDeviceFields } from './device.js';

/** @typedef {import('../types.js').AudienceItem} AudienceItem */
/** @typedef {import('pg').Pool} Pool */
/** @typedef {import('pg').PoolClient | import('pg').Client} Client */

const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/**
 * Reads an audience query. Given a Pool, it checks out one client and runs the scan in
 * its own REPEATABLE READ READ ONLY transaction. Given a client, it runs inside the
 * transaction the caller already opened and neither begins nor ends it; if the read
 * fails there, the caller's transaction is aborted and the caller must roll it back.
 * Rows are numbered from 1 as `line`. Throws InputError for anything but a single
 * SELECT, for SQL PostgreSQL rejects (with its message), and for a result without
 * endpoint_arn and platform columns; UnavailableError when the database cannot be reached.
 * @param {Pool | Client} db
 * @param {string} sql
 * @param {{ batchSize?: number, source?: string }} [options] source names the query in
 *   error messages ("--query" by default, the pushctl flag it came from)
 * @returns {AsyncGenerator<AudienceItem>}
 */
export async function* readAudienceQuery(db, sql, { batchSize = 2000, source = '--query' } = {}) {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, not ${batchSize}`);
  const text = checkSelectQuery(sql, source);
  const host = describeHost(db);
  const ownTransaction = isPool(db);
  const client = ownTransaction ? await connect(/** @type {Pool} */ (db)) : /** @type {Client} */ (db);

  let failed = false;
  // Set when the server failed the cursor; it must not be closed then (see finish).
  let cursorFailed = false;
  /** @type {Cursor<unknown[]> | undefined} */
  let cursor;
  try {
    if (ownTransaction) await client.query(BEGIN_SNAPSHOT).catch((error) => { throw databaseError(error, source, host); });
    cursor = client.query(new Cursor(text, null, { rowMode: 'array' }));
    /** @type {Array<[number, string]> | undefined} */
    let columns;
    let line = 0;
    for (;;) {
      const { rows, fields } = await readBatch(cursor, batchSize).catch((error) => {
        cursorFailed = true;
        throw databaseError(error, source, host);
      });
      // Checked on the first batch, which carries the columns even when it has no rows.
      columns ??= audienceColumns(fields, source);
      for (const row of rows) {
        line += 1;
        /** @type {Record<string, unknown>} */
        const record = {};
        for (const [index, field] of columns) record[field] = row[index];
        yield parseDeviceFields(record, line);
      }
      if (rows.length < batchSize) break;
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await finish(client, cursorFailed ? undefined : cursor, { ownTransaction, failed });
  }
}

/**
 * Runs `work` with a client inside a REPEATABLE READ READ ONLY transaction, then ends
 * the transaction and returns the client to the pool. Pass the client to
 * readAudienceQuery to read several times from one snapshot.
 * @template T
 * @param {Pool} pool
 * @param {(client: import('pg').PoolClient) => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function withReadSnapshot(pool, work) {
  const host = describeHost(pool);
  const client = await connect(pool);
  let broken = false;
  try {
    await client.query(BEGIN_SNAPSHOT).catch((error) => { throw databaseError(error, 'the snapshot', host); });
    const result = await work(client);
    // Nothing was written: COMMIT only ends the snapshot.
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => { broken = true; });
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Checks that `sql` is one SELECT (or WITH ... SELECT) statement before it is sent,
 * and returns it without a trailing ";". String literals, quoted identifiers,
 * dollar quotes and comments are skipped, so a ";" inside them is not a second statement.
 * Write access is still stopped by the READ ONLY transaction; this check gives a clear
 * message and keeps DDL out of a client that is not read-only.
 * @param {string} sql
 * @param {string} [source]
 * @returns {string}
 */
export function checkSelectQuery(sql, source = '--query') {
  const length = sql.length;
  /** @type {string | undefined} */
  let firstWord;
  let end = -1;
  let i = 0;
  while (i < length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? length : newline + 1;
      continue;
    }
    if (c === '/' && next === '*') {
      i = skipBlockComment(sql, i);
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') {
      i += 1;
      continue;
    }
    if (end !== -1) {
      throw new InputError(`${source}: only one statement is allowed; remove what follows the ";"`);
    }
    if (c === ';') {
      end = i;
      i += 1;
      continue;
    }
    if (firstWord === undefined && c !== '(') {
      const word = /^[A-Za-z_]+/.exec(sql.slice(i, i + 32));
      firstWord = word ? word[0].toUpperCase() : '';
    }
    if (c === "'") i = skipQuoted(sql, i, "'", isEscapeString(sql, i));
    else if (c === '"') i = skipQuoted(sql, i, '"', false);
    else if (c === '$') i = skipDollarQuoted(sql, i);
    else i += 1;
    // An unterminated literal or comment runs to the end; PostgreSQL reports it precisely.
  }
  if (firstWord === undefined) {
    throw new InputError(`${source}: the query is empty; give a SELECT that returns endpoint_arn and platform columns`);
  }
  if (firstWord !== 'SELECT' && firstWord !== 'WITH') {
    throw new InputError(`${source}: only a SELECT query is allowed${firstWord ? `, not ${firstWord}` : ''}; it must return endpoint_arn and platform columns`);
  }
  return (end === -1 ? sql : sql.slice(0, end)).trim();
}

/**
 * @param {string} sql
 * @param {number} start index of "/*"
 */
function skipBlockComment(sql, start) {
  // PostgreSQL block comments nest.
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth += 1;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else {
      i += 1;
    }
  }
  return sql.length;
}

/**
 * E'...' strings take backslash escapes; standard strings do not.
 * @param {string} sql
 * @param {number} quote index of the opening quote
 */
function isEscapeString(sql, quote) {
  return quote > 0 && (sql[quote - 1] === 'E' || sql[quote - 1] === 'e') && !/[\w$]/.test(sql[quote - 2] ?? '');
}

/**
 * @param {string} sql
 * @param {number} start index of the opening quote
 * @param {string} quote
 * @param {boolean} backslashEscapes
 * @returns {number} the index after the closing quote
 */
function skipQuoted(sql, start, quote, backslashEscapes) {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i += 2; // a doubled quote stands for one
    } else {
      i += 1;
    }
  }
  return sql.length;
}

const DOLLAR_TAG = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y;

/**
 * $$...$$ or $tag$...$tag$; a "$" that starts no tag ($1, or inside a name) is one character.
 * @param {string} sql
 * @param {number} start index of "$"
 */
function skipDollarQuoted(sql, start) {
  DOLLAR_TAG.lastIndex = start;
  const tag = DOLLAR_TAG.exec(sql);
  if (tag === null || /[\w$]/.test(sql[start - 1] ?? '')) return start + 1;
  const close = sql.indexOf(tag[0], start + tag[0].length);
  return close === -1 ? sql.length : close + tag[0].length;
}

/**
 * Maps result columns to Device fields, requiring endpoint_arn and platform.
 * @param {import('pg').FieldDef[]} fields
 * @param {string} source
 * @returns {Array<[number, string]>}
 */
function audienceColumns(fields, source) {
  /** @type {Array<[number, string]>} */
  const columns = [];
  const found = new Set();
  fields.forEach((field, index) => {
    const name = canonicalField(field.name);
    if (name === undefined || found.has(name)) return;
    found.add(name);
    columns.push([index, name]);
  });
  for (const [required, column] of [['endpointArn', 'endpoint_arn'], ['platform', 'platform']]) {
    if (!found.has(required)) {
      const names = fields.map((field) => field.name).join(', ') || 'none';
      throw new InputError(`${source}: the result has no ${column} column (columns: ${names}); select it, e.g. SELECT endpoint_arn, platform FROM devices`);
    }
  }
  return columns;
}

/**
 * @param {Cursor<unknown[]>} cursor
 * @param {number} count
 * @returns {Promise<{ rows: unknown[][], fields: import('pg').FieldDef[] }>}
 */
function readBatch(cursor, count) {
  return new Promise((resolve, reject) => {
    cursor.read(count, (error, rows, result) => {
      if (error) reject(error);
      else resolve({ rows, fields: result?.fields ?? [] });
    });
  });
}

/**
 * Closes the cursor and, when the transaction is ours, ends it and releases the client.
 * An open cursor must be closed even after an error of ours (a missing column): pg
 * queues every later query, the ROLLBACK too, behind it. A cursor the server failed is
 * passed as undefined: pg-cursor has synced already, and closing it would wait for a
 * ReadyForQuery that has come and gone.
 * @param {Client} client
 * @param {Cursor<unknown[]> | undefined} cursor
 * @param {{ ownTransaction: boolean, failed: boolean }} state
 */
async function finish(client, cursor, { ownTransaction, failed }) {
  let broken = false;
  if (cursor) await cursor.close().catch(() => { broken = true; });
  if (!ownTransaction) return;
  await client.query(failed ? 'ROLLBACK' : 'COMMIT').catch(() => { broken = true; });
  /** @type {import('pg').PoolClient} */ (client).release(broken);
}

/**
 * @param {Pool} pool
 * @returns {Promise<import('pg').PoolClient>}
 */
async function connect(pool) {
  try {
    return await pool.connect();
  } catch (error) {
    throw databaseError(error, 'the connection', describeHost(pool));
  }
}

/**
 * @param {Pool | Client} db
 * @returns {db is Pool}
 */
function isPool(db) {
  return db instanceof pg.Pool || (typeof (/** @type {any} */ (db)).totalCount === 'number' && !('release' in db));
}

/**
 * host:port of the database, for messages; never the user or password.
 * @param {Pool | Client} db
 */
function describeHost(db) {
  const options = isPool(db) ? db.options : { host: db.host, port: db.port, connectionString: undefined };
  if (options.connectionString) {
    try {
      const url = new URL(options.connectionString);
      return `${url.hostname || url.searchParams.get('host') || 'localhost'}:${url.port || 5432}`;
    } catch {
      return 'the DATABASE_URL host';
    }
  }
  return `${options.host ?? 'localhost'}:${options.port ?? 5432}`;
}

// SQLSTATE classes that say the server or the connection failed, not the query.
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58', 'XX']);

/**
 * Turns a pg or socket error into one of ours: PostgreSQL's complaint about the query
 * is the user's to fix (InputError with PostgreSQL's own message); a refused or broken
 * connection is UnavailableError; rejected credentials are a DATABASE_URL to fix.
 * @param {unknown} error
 * @param {string} source
 * @param {string} host
 */
function databaseError(error, source, host) {
  const message = error instanceof Error ? error.message || /** @type {any} */ (error).code || error.name : String(error);
  if (error instanceof pg.DatabaseError && typeof error.code === 'string') {
    const sqlClass = error.code.slice(0, 2);
    if (sqlClass === '28' || error.code === '3D000') {
      return new ConfigError(`DATABASE_URL: ${message} (PostgreSQL at ${host})`, { cause: error });
    }
    // 42P01 undefined_table: most often the devices table was never created here.
    const hint = error.code === '42P01' && /relation "(\w+\.)?devices"/.test(message) ? ' (create it with: pushctl db migrate)' : '';
    if (!UNAVAILABLE_CLASSES.has(sqlClass)) return new InputError(`${source}: ${message}${hint}`, { cause: error });
  }
  return new UnavailableError(`PostgreSQL at ${host} (DATABASE_URL) is unavailable: ${message}`, { cause: error });
}
