import { createHash } from 'node:crypto';
import type { DataSource, EntityManager, Migration } from 'typeorm';
import { inImmediateTransaction } from './sqlite-immediate.js';

const LOCK_WAIT_SECONDS = 60;

/**
 * MySQL's named locks are the server's, not a database's: the lock is named after the database,
 * so deployments (or test runs) that share a server but not a database never wait for each
 * other. A name longer than the 64 characters MySQL allows ends in a digest of the database's.
 */
export function migrationLockName(database: string): string {
  const name = `tessera_migrations:${database}`;
  if (name.length <= 64) return name;
  return `tessera_migrations:${createHash('sha256').update(database).digest('hex').slice(0, 40)}`;
}

/**
 * Runs pending migrations once even when several processes start together on an empty
 * database: each waits for an exclusive lock, then finds what is still pending. Returns how
 * the names of the migrations this process applied.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  return dataSource.options.type === 'better-sqlite3'
    ? runOnSqlite(dataSource)
    : runOnMysql(dataSource);
}

/** A named lock held on its own connection while TypeORM migrates on others. */
async function runOnMysql(dataSource: DataSource): Promise<string[]> {
  // Waiting for the lock, or a migration itself, may rightly outlast a request's query timeout.
  const options = dataSource.driver.options as { enableQueryTimeout?: boolean };
  const timeouts = options.enableQueryTimeout;
  options.enableQueryTimeout = false;
  const runner = dataSource.createQueryRunner();
  const lock = migrationLockName(String(dataSource.driver.database));
  try {
    const [row] = await runner.query('SELECT GET_LOCK(?, ?) AS acquired', [
      lock,
      LOCK_WAIT_SECONDS,
    ]);
    if (Number(row?.acquired) !== 1) {
      throw new Error(`Timed out after ${LOCK_WAIT_SECONDS}s waiting for the migration lock`);
    }
    try {
      return names(await dataSource.runMigrations({ transaction: 'each' }));
    } finally {
      await runner.query('SELECT RELEASE_LOCK(?)', [lock]);
    }
  } finally {
    await runner.release();
    options.enableQueryTimeout = timeouts;
  }
}

/**
 * TypeORM reads the pending migrations before it opens its transaction, so two processes on a
 * fresh file would both find them pending: the write lock is taken before that read.
 */
function runOnSqlite(dataSource: DataSource): Promise<string[]> {
  return migratingSqlite(dataSource, async () =>
    names(await dataSource.runMigrations({ transaction: 'all' })),
  );
}

/**
 * Changes SQLite's schema as its manual asks: with foreign keys off while the transaction runs
 * (SQLite cannot switch them inside one), then checked before the commit. A migration that
 * rebuilds a table (copy, drop, rename: how SQLite changes a column) would otherwise delete, by
 * their `ON DELETE CASCADE`, the rows that refer to it when it drops the old table.
 */
async function migratingSqlite<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  await dataSource.query('PRAGMA foreign_keys = OFF');
  try {
    return await inImmediateTransaction(dataSource, async (manager) => {
      const result = await work();
      await assertForeignKeysHold(manager);
      return result;
    });
  } finally {
    await dataSource.query('PRAGMA foreign_keys = ON');
  }
}

async function assertForeignKeysHold(manager: EntityManager): Promise<void> {
  const broken: { table: string }[] = await manager.query('PRAGMA foreign_key_check');
  if (broken.length > 0) {
    const tables = [...new Set(broken.map((row) => row.table))].join(', ');
    throw new Error(`The migration left rows that refer to nothing (in ${tables}): undone`);
  }
}

const names = (migrations: Migration[]): string[] => migrations.map((m) => m.name);

/** Undoes the last applied migration and returns its name, or undefined when none was left. */
export async function revertLastMigration(dataSource: DataSource): Promise<string | undefined> {
  const runner = dataSource.createQueryRunner();
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  try {
    if (!(await runner.hasTable(table))) return undefined;
    const [last] = await runner.query(`SELECT name FROM ${table} ORDER BY id DESC LIMIT 1`);
    if (!last) return undefined;
    if (dataSource.options.type === 'better-sqlite3') {
      await migratingSqlite(dataSource, () => dataSource.undoLastMigration({ transaction: 'all' }));
    } else {
      await dataSource.undoLastMigration({ transaction: 'each' });
    }
    return last.name as string;
  } finally {
    await runner.release();
  }
}
