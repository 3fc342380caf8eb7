// The PostgreSQL connection pool. Audience reads hold one connection for the length of
// a scan, so a handful is enough; each process has its own pool.
import pg from 'pg';
import { UnavailableError } from '../errors.js';
import { redactUrl } from '../redact-url.js';

/**
 * Creates a pg.Pool for DATABASE_URL. `overrides` reach pg.Pool unchanged (tests set
 * `options: '-c search_path=...'` to work in their own schema).
 * @param {string} databaseUrl
 * @param {import('pg').PoolConfig} [overrides]
 * @returns {import('pg').Pool}
 */
export function createPool(databaseUrl, overrides = {}) {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 4,
    // Fail within seconds when the database is down instead of hanging a CLI command.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Keep-alive lets a long cursor scan notice a dead server, and stops NAT and load
    // balancers from dropping an idle connection.
    keepAlive: true,
    application_name: 'pushpace',
    ...overrides
  });
  // An idle client that errors (a server restart) is emitted here; without a listener
  // that would crash the process. The pool has already discarded the client, and the
  // next query connects afresh and reports any lasting problem.
  pool.on('error', () => {});
  return pool;
}

/**
 * A client from the pool. Failing to get one (refused, unknown host, the connection
 * timeout, authentication) means PostgreSQL is not reachable as configured: that is
 * UnavailableError (exit 1), told apart by where it happened, not by its message.
 * @param {import('pg').Pool} pool
 * @param {string} databaseUrl  for the message, password redacted
 * @returns {Promise<import('pg').PoolClient>}
 */
export async function connectClient(pool, databaseUrl) {
  try {
    return await pool.connect();
  } catch (error) {
    const reason = /** @type {{ code?: string }} */ (error).code ?? /** @type {Error} */ (error).message;
    throw new UnavailableError(`PostgreSQL is not reachable at ${redactUrl(databaseUrl)} (${reason})`, { cause: error });
  }
}
