import { createHash } from 'node:crypto';
import type { DataSource, Migration } from 'typeorm';
import { withoutQueryLimits } from './pool-guard.js';
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

function runOnMysql(dataSource: DataSource): Promise<string[]> {
  // Waiting for the lock, or a migration itself, may rightly outlast a request's query timeout.
  return withoutQueryLimits(dataSource, () => lockAndMigrate(dataSource));
}

/** A named lock held on its own connection while TypeORM migrates on others. */
async function lockAndMigrate(dataSource: DataSource): Promise<string[]> {
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
  }
}

/**
 * TypeORM reads the pending migrations before it opens its transaction, so two processes on a
 * fresh file would both find them pending: the write lock is taken before that read.
 */
function runOnSqlite(dataSource: DataSource): Promise<string[]> {
  return inImmediateTransaction(dataSource, async () => {
    return names(await dataSource.runMigrations({ transaction: 'all' }));
  });
}

const names = (migrations: Migration[]): string[] => migrations.map((m) => m.name);

/** Undoes the last applied migration and returns its name, or undefined when none was left. */
export function revertLastMigration(dataSource: DataSource): Promise<string | undefined> {
  return withoutQueryLimits(dataSource, () => revert(dataSource));
}

async function revert(dataSource: DataSource): Promise<string | undefined> {
  const runner = dataSource.createQueryRunner();
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  try {
    if (!(await runner.hasTable(table))) return undefined;
    const [last] = await runner.query(`SELECT name FROM ${table} ORDER BY id DESC LIMIT 1`);
    if (!last) return undefined;
    await dataSource.undoLastMigration({ transaction: 'each' });
    return last.name as string;
  } finally {
    await runner.release();
  }
}
