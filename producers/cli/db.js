// pushctl db migrate: creates or updates the devices table that --query audiences read.
import { createPool } from '../../shared/db/pool.js';
import { migrate } from '../../shared/db/migrate.js';
import { UnavailableError } from '../../shared/errors.js';
import { redactUrl } from '../../config/index.js';

/**
 * @param {import('../../config/index.js').Config} config
 * @param {{ stdout: NodeJS.WritableStream }} io
 */
export async function migrateDevices(config, io) {
  const pool = createPool(config.databaseUrl);
  try {
    const applied = await migrate(pool).catch((error) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND' || /timeout/i.test(error.message)) {
        throw new UnavailableError(`PostgreSQL is not reachable at ${redactUrl(config.databaseUrl)} (${error.code ?? error.message})`, { cause: error });
      }
      throw error;
    });
    io.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await pool.end();
  }
}
