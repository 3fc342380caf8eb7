// pushctl db migrate: creates or updates the devices table that --query audiences read.
import { createPool, connectClient } from '../../shared/db/pool.js';
import { migrate } from '../../shared/db/migrate.js';

/**
 * @param {import('../../config/index.js').Config} config
 * @param {{ stdout: NodeJS.WritableStream }} io
 */
export async function migrateDevices(config, io) {
  // The Procfile's release phase runs this on every deploy. An app whose audiences are all
  // files has no PostgreSQL, and a failed release would stop every deploy: no URL, nothing to do.
  if (!config.databaseUrlSet) {
    io.stdout.write('DATABASE_URL is unset: no migrations to run\n');
    return 0;
  }
  const pool = createPool(config.databaseUrl);
  try {
    // Connected first, so that an unreachable database is UnavailableError (exit 1)
    // whatever pg's message says; the client goes back to the pool for migrate.
    (await connectClient(pool, config.databaseUrl)).release();
    const applied = await migrate(pool);
    io.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await pool.end();
  }
}
