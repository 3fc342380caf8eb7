// Applies shared/db/migrations/*.sql in name order, each at most once. Every process
// type may run this at start, so two can race: an advisory lock held for the
// transaction makes the second wait and then find nothing left to do. Everything runs
// in one transaction, so a migration cannot use CREATE INDEX CONCURRENTLY.
import { readdir, readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
// A fixed key for pg_advisory_xact_lock ("push" in ASCII); any process migrating this
// database takes the same lock.
const MIGRATION_LOCK = 0x70757368;
const MIGRATION_FILE = /^\d+-[a-z0-9-]+\.sql$/;

/**
 * Applies the migrations not yet recorded in `pushpace_migrations`, all in one
 * transaction: either all of them are applied or none. Tables land in the first schema
 * of the connection's search_path. Returns the names applied (empty when up to date).
 * @param {import('pg').Pool} pool
 * @param {{ directory?: URL | string }} [options] where the .sql files are (tests)
 * @returns {Promise<string[]>}
 */
export async function migrate(pool, { directory = MIGRATIONS_DIR } = {}) {
  if (typeof directory === 'string') directory = pathToFileURL(directory.endsWith('/') ? directory : `${directory}/`);
  const files = (await readdir(directory)).filter((name) => MIGRATION_FILE.test(name)).sort();
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS pushpace_migrations (
      name text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query('SELECT name FROM pushpace_migrations');
    const applied = new Set(rows.map((row) => row.name));
    /** @type {string[]} */
    const pending = files.filter((name) => !applied.has(name));
    for (const name of pending) {
      const sql = await readFile(new URL(name, directory), 'utf8');
      try {
        // No parameters: the simple query protocol runs every statement in the file.
        await client.query(sql);
      } catch (error) {
        throw new Error(`migration ${name} failed: ${error instanceof Error ? error.message : error}`, { cause: error });
      }
      await client.query('INSERT INTO pushpace_migrations (name) VALUES ($1)', [name]);
    }
    await client.query('COMMIT');
    return pending;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    // A client whose ROLLBACK failed is in an unknown state; destroy it rather than reuse it.
    client.release(broken);
  }
}
