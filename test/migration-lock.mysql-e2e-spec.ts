import { afterEach, describe, expect, it } from '@jest/globals';
import { createConnection, type Connection } from 'mysql2/promise';
import type { DataSource, MigrationInterface } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { migrationLockName, runMigrations } from '../src/database/migrator.js';
import { dataSourceFor } from '../src/entities.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { waitFor } from './support/wait-for.js';

/**
 * MySQL's named locks belong to the server, not to a database. Runs only with
 * TEST_DATABASE_URL (see jest.config.js): SQLite migrates under the file's own write lock.
 */
describe('migration lock', () => {
  const opened: { db: TestDatabase; ds: DataSource }[] = [];
  let holder: Connection | undefined;

  afterEach(async () => {
    await holder?.end();
    holder = undefined;
    for (const { db, ds } of opened.splice(0)) {
      if (ds.isInitialized) await ds.destroy();
      await db.drop();
    }
  });

  /** A connection of its own to the server, as another process would have. */
  async function connect(db: { url: string }): Promise<Connection> {
    const url = new URL(db.url);
    return createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    });
  }

  async function fresh(
    migrations?: (new () => MigrationInterface)[],
  ): Promise<{ name: string; url: string; ds: DataSource }> {
    const db = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: db.url }).database;
    const ds = dataSourceFor(config, migrations ? { migrations } : {});
    opened.push({ db, ds });
    await ds.initialize();
    return { name: new URL(db.url).pathname.slice(1), url: db.url, ds };
  }

  /** Another process's migration in progress: it holds the lock `runMigrations` takes. */
  async function holdLockOf(db: { name: string; url: string }): Promise<void> {
    holder = await connect(db);
    const [rows] = await holder.query('SELECT GET_LOCK(?, 0) AS acquired', [
      migrationLockName(db.name),
    ]);
    expect((rows as { acquired: number }[])[0].acquired).toBe(1);
  }

  /** Migrators waiting for a named lock, on the whole server. */
  async function waitingForLock(): Promise<number> {
    const [rows] = await holder!.query(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT GET_LOCK(%'",
    );
    return Number((rows as { n: number }[])[0].n);
  }

  it("should migrate a database while another database's migration is under way on the same server", async () => {
    let entered = false;
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    class Pause1700000000000 implements MigrationInterface {
      async up(): Promise<void> {
        entered = true;
        await gate;
      }
      async down(): Promise<void> {}
    }
    const busy = await fresh([Pause1700000000000]);
    const target = await fresh();
    holder = await connect(target);
    const pausing = runMigrations(busy.ds);
    try {
      await waitFor(async () => entered);

      let done = false;
      const migrating = runMigrations(target.ds).finally(() => (done = true));
      // Either it finishes, or it is seen queued behind the other database's lock.
      await waitFor(async () => done || (await waitingForLock()) > 0);
      finish();
      expect(done).toBe(true);
      expect(await migrating).toEqual(MIGRATIONS.map((m) => m.name));
    } finally {
      finish();
      await pausing;
    }
  });

  it("should wait while another process holds the same database's migration lock, and migrate once it is released", async () => {
    const target = await fresh();
    await holdLockOf(target);

    const migrating = runMigrations(target.ds);
    // The migrator is queued behind the lock, not yet migrating.
    await waitFor(async () => (await waitingForLock()) > 0);
    const [tables] = await holder!.query(
      'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
      [target.name],
    );
    expect(Number((tables as { n: number }[])[0].n)).toBe(0);

    await holder!.query('SELECT RELEASE_LOCK(?)', [migrationLockName(target.name)]);
    expect(await migrating).toEqual(MIGRATIONS.map((m) => m.name));
  });

  it('should name the lock after the database, within the 64 characters MySQL allows', () => {
    expect(migrationLockName('tessera')).toBe('tessera_migrations:tessera');
    expect(migrationLockName('tessera_a')).not.toBe(migrationLockName('tessera_b'));
    const long = 'x'.repeat(64);
    expect(migrationLockName(long)).toHaveLength(59);
    expect(migrationLockName(long)).not.toBe(migrationLockName(`${'x'.repeat(63)}y`));
  });
});
