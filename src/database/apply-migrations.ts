import { Logger } from '@nestjs/common';
import pg from 'pg';
import type { DataSource, Migration } from 'typeorm';

/**
 * Key of the PostgreSQL advisory lock held while migrations are applied: the ASCII bytes of
 * "patchbay" read as a 64-bit integer (0x7061746368626179). Advisory locks are per database, so
 * the key only has to differ from other applications' keys in the same database. Changing it lets
 * an old and a new release migrate the same database at once: keep it.
 */
export const MIGRATIONS_LOCK_KEY = '8097881575290724729';

/**
 * Applies pending migrations (each in its own transaction), at start and by `patchbay migrate`.
 *
 * On a PostgreSQL server (`serverUrl`) several instances may start at once on the same database:
 * each holds a session-level advisory lock while it applies, so they take turns and the later ones
 * find nothing pending (without it all but one failed on tables another was creating). The lock is
 * held by a connection of its own, outside the pool: the pool bounds every query to 30 s on the
 * client (QUERY_TIMEOUT_MS), and a wait for the lock lasts as long as another instance's
 * migrations do. Closing that connection releases the lock, also when this process dies
 * half-way (its migration's transaction is then rolled back by the server).
 *
 * The embedded database (no `serverUrl`) belongs to one process, which holds DATA_DIR: no lock.
 */
export async function applyMigrations(dataSource: DataSource, serverUrl: string | undefined): Promise<Migration[]> {
  if (!serverUrl) {
    return dataSource.runMigrations();
  }
  const logger = new Logger('Database');
  const lock = new pg.Client({ connectionString: serverUrl });
  // Without a listener a dropped connection would end the process; the migrations' own connection
  // reports a server that went away.
  lock.on('error', (error) => logger.warn(`Migrations lock connection failed: ${error.message}`));
  await lock.connect();
  try {
    const { rows } = await lock.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      MIGRATIONS_LOCK_KEY,
    ]);
    if (!rows[0].locked) {
      logger.log('Waiting for another instance to finish applying migrations');
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATIONS_LOCK_KEY]);
    }
    return await dataSource.runMigrations();
  } finally {
    // Ends the session, which releases the lock.
    await lock.end();
  }
}
