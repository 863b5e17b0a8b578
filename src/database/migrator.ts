import type { DataSource } from 'typeorm';

const LOCK_NAME = 'tessera_migrations';
const LOCK_WAIT_SECONDS = 60;

/**
 * Runs pending migrations once even when several instances start together: on MySQL/MariaDB
 * the instances queue on a named lock, and each one that gets it finds what is still pending.
 * SQLite serialises writers on the file itself.
 */
export async function runMigrations(dataSource: DataSource): Promise<number> {
  if (dataSource.options.type === 'better-sqlite3') {
    return (await dataSource.runMigrations({ transaction: 'each' })).length;
  }
  const runner = dataSource.createQueryRunner();
  try {
    const [row] = await runner.query('SELECT GET_LOCK(?, ?) AS acquired', [
      LOCK_NAME,
      LOCK_WAIT_SECONDS,
    ]);
    if (Number(row?.acquired) !== 1) {
      throw new Error(`Timed out after ${LOCK_WAIT_SECONDS}s waiting for the migration lock`);
    }
    try {
      return (await dataSource.runMigrations({ transaction: 'each' })).length;
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
    }
  } finally {
    await runner.release();
  }
}
