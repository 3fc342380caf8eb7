// The PostgreSQL connection pool. Audience reads hold one connection for the length of
// a scan, so a handful is enough; each process has its own pool.
import pg from 'pg';

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
