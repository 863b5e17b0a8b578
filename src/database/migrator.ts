import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, EntityManager, Migration, QueryRunner } from 'typeorm';
import { isDatabaseUnavailable, isDeadlock } from '../common/errors/database-errors.js';
import { withoutQueryLimits } from './pool-guard.js';
import { inImmediateTransaction } from './sqlite-immediate.js';
import { makeMigrationsResumable } from './resumable-migrations.js';

/** The table of the one row whose holder migrates (MySQL/MariaDB), beside TypeORM's `migrations`. */
export const MIGRATION_LOCK_TABLE = 'migrations_lock';

/**
 * The lock's timings. A holder renews its lease while it migrates; a holder that crashed stops
 * renewing, and its lease runs out. Waiting ends with an error after `waitMs`.
 */
export interface MigrationLockTimings {
  leaseSeconds: number;
  renewEveryMs: number;
  pollMs: number;
  waitMs: number;
}

export const MIGRATION_LOCK_TIMINGS: MigrationLockTimings = {
  leaseSeconds: 60,
  renewEveryMs: 10_000,
  pollMs: 250,
  waitMs: 10 * 60_000,
};

export interface MigrationOptions {
  timings?: Partial<MigrationLockTimings>;
  /** Told when the lock is found held by another process (and by whom), each time it looks. */
  onWait?: (holder: string) => void;
  /** Told when a holder's lease had run out and the lock was taken from it. */
  onTakeover?: (holder: string) => void;
}

/** A migration itself failed (not the connection): the error says which and why. */
export class MigrationFailedError extends Error {
  constructor(cause: unknown) {
    super(
      `a database migration failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'MigrationFailedError';
  }
}

/**
 * Runs pending migrations once even when several processes start together on an empty
 * database, on one server or on the nodes of a cluster: each waits for the lock, then finds
 * what is still pending. Returns the names of the migrations this process applied.
 */
export async function runMigrations(
  dataSource: DataSource,
  options: MigrationOptions = {},
): Promise<string[]> {
  const migrate = async (): Promise<string[]> => {
    try {
      return names(
        await dataSource.runMigrations({ transaction: sqlite(dataSource) ? 'all' : 'each' }),
      );
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      throw new MigrationFailedError(error);
    }
  };
  if (sqlite(dataSource)) return migratingSqlite(dataSource, migrate);
  // One cut off half-way (its process killed) is finished by whoever migrates next.
  makeMigrationsResumable(dataSource);
  return withMigrationLock(dataSource, options, migrate);
}

/**
 * Changes SQLite's schema as its manual asks: with foreign keys off while the transaction runs
 * (SQLite cannot switch them inside one), then checked before the commit. A migration that
 * rebuilds a table (copy, drop, rename: how SQLite changes a column) would otherwise delete, by
 * their `ON DELETE CASCADE`, the rows that refer to it when it drops the old table. TypeORM reads
 * the pending migrations before it opens its transaction, so two processes on a fresh file would
 * both find them pending: the file's write lock is taken before that read (BEGIN IMMEDIATE).
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

const sqlite = (dataSource: DataSource): boolean => dataSource.options.type === 'better-sqlite3';

/**
 * Holds the migration lock of the database while `work` runs (MySQL/MariaDB). The lock is a row,
 * claimed by a conditional update whose affected-row count decides, because a row is what every
 * node of a Galera cluster or a group agrees on: a named lock (`GET_LOCK`) is one server's, and
 * two nodes grant the same name at once.
 */
async function withMigrationLock<T>(
  dataSource: DataSource,
  options: MigrationOptions,
  work: () => Promise<T>,
): Promise<T> {
  const timings = { ...MIGRATION_LOCK_TIMINGS, ...options.timings };
  // Waiting for the lock, or a migration itself, may rightly outlast a request's query timeout.
  return withoutQueryLimits(dataSource, async () => {
    const runner = dataSource.createQueryRunner();
    const lock = new LockRow(runner, holderName(), timings.leaseSeconds);
    try {
      await lock.create();
      await acquire(lock, timings, options);
      const renewal = lock.renewEvery(timings.renewEveryMs);
      try {
        return await work();
      } finally {
        await renewal.stop();
        await lock.release();
      }
    } finally {
      await runner.release();
    }
  });
}

async function acquire(
  lock: LockRow,
  timings: MigrationLockTimings,
  options: MigrationOptions,
): Promise<void> {
  const deadline = performance.now() + timings.waitMs;
  for (;;) {
    const expired = await lock.expiredHolder();
    if (await lock.claim()) {
      if (expired) options.onTakeover?.(expired);
      return;
    }
    const holder = await lock.holder();
    if (performance.now() > deadline) {
      throw new Error(
        `Timed out after ${Math.round(timings.waitMs / 1000)}s waiting for the migration lock (held by ${holder ?? 'nobody'})`,
      );
    }
    if (holder) options.onWait?.(holder);
    await sleep(timings.pollMs);
  }
}

/** Who holds the lock, for the log: this host and process, and a random part. */
function holderName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`.slice(-100);
}

/** The lock's one row, through one connection of its own. */
class LockRow {
  constructor(
    private readonly runner: QueryRunner,
    private readonly name: string,
    private readonly leaseSeconds: number,
  ) {}

  /**
   * Creates the table and its row unless they are there: both statements are safe when another
   * process runs them at the same moment (a cluster certifies one row's insert and refuses the
   * other's, which is retried and then ignores the row that is there).
   */
  async create(): Promise<void> {
    await this.runner.query(
      `CREATE TABLE IF NOT EXISTS ${MIGRATION_LOCK_TABLE} (
         id INT NOT NULL PRIMARY KEY,
         holder VARCHAR(100) NULL,
         expires_at DATETIME(3) NULL
       ) ENGINE=InnoDB`,
    );
    await this.retried(() =>
      this.runner.query(`INSERT IGNORE INTO ${MIGRATION_LOCK_TABLE} (id) VALUES (1)`),
    );
  }

  /** Takes the lock if nobody holds it or its holder's lease has run out. */
  async claim(): Promise<boolean> {
    try {
      return await this.update(
        `holder = ?, expires_at = NOW(3) + INTERVAL ? SECOND
         WHERE id = 1 AND (holder IS NULL OR expires_at < NOW(3))`,
        [this.name, this.leaseSeconds],
      );
    } catch (error) {
      // Another node's claim was certified first: this one is refused, the lock is theirs.
      if (isDeadlock(error)) return false;
      throw error;
    }
  }

  /** Pushes the lease on; false when the lock is no longer this process's. */
  renew(): Promise<boolean> {
    return this.update(`expires_at = NOW(3) + INTERVAL ? SECOND WHERE id = 1 AND holder = ?`, [
      this.leaseSeconds,
      this.name,
    ]);
  }

  async release(): Promise<void> {
    await this.retried(() =>
      this.update(`holder = NULL, expires_at = NULL WHERE id = 1 AND holder = ?`, [this.name]),
    );
  }

  async holder(): Promise<string | null> {
    const [row] = await this.runner.query(
      `SELECT holder FROM ${MIGRATION_LOCK_TABLE} WHERE id = 1`,
    );
    return (row?.holder as string | null) ?? null;
  }

  /** The holder whose lease has run out, if any: the lock is theirs no more. */
  async expiredHolder(): Promise<string | null> {
    const [row] = await this.runner.query(
      `SELECT holder FROM ${MIGRATION_LOCK_TABLE} WHERE id = 1 AND expires_at < NOW(3)`,
    );
    return (row?.holder as string | null) ?? null;
  }

  /**
   * Renews the lease every `ms` until stopped. A renewal that finds the lock taken (the lease ran
   * out before it was renewed) makes `stop` throw: another process may have migrated alongside.
   */
  renewEvery(ms: number): { stop(): Promise<void> } {
    let stopped = false;
    let lost = false;
    let wake = () => {};
    const loop = (async () => {
      while (!stopped && !lost) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        // A renewal the database failed is tried again at the next turn.
        if (!stopped) lost = !(await this.renew().catch(() => true));
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        wake();
        await loop;
        if (lost) {
          throw new Error(
            'The migration lock was taken by another process while this one migrated: its lease ran out before it was renewed',
          );
        }
      },
    };
  }

  private async update(set: string, parameters: unknown[]): Promise<boolean> {
    const result = await this.runner.query(
      `UPDATE ${MIGRATION_LOCK_TABLE} SET ${set}`,
      parameters,
      true,
    );
    return (result.affected ?? 0) > 0;
  }

  /** A statement a cluster may refuse as conflicting with another node's, run again until not. */
  private async retried<T>(statement: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await statement();
      } catch (error) {
        if (!isDeadlock(error) || attempt >= 10) throw error;
        await sleep(10 * attempt);
      }
    }
  }
}

const names = (migrations: Migration[]): string[] => migrations.map((m) => m.name);

/** Undoes the last applied migration and returns its name, or undefined when none was left. */
export async function revertLastMigration(dataSource: DataSource): Promise<string | undefined> {
  const undo = async () => {
    const runner = dataSource.createQueryRunner();
    const table = dataSource.options.migrationsTableName ?? 'migrations';
    try {
      if (!(await runner.hasTable(table))) return undefined;
      const [last] = await runner.query(`SELECT name FROM ${table} ORDER BY id DESC LIMIT 1`);
      if (!last) return undefined;
      if (sqlite(dataSource)) {
        await migratingSqlite(dataSource, () =>
          dataSource.undoLastMigration({ transaction: 'all' }),
        );
      } else {
        await dataSource.undoLastMigration({ transaction: 'each' });
      }
      return last.name as string;
    } finally {
      await runner.release();
    }
  };
  if (sqlite(dataSource)) return undo();
  makeMigrationsResumable(dataSource);
  return withMigrationLock(dataSource, {}, undo);
}
