import { afterEach, describe, expect, it } from '@jest/globals';
import { createConnection, type Connection } from 'mysql2/promise';
import type { DataSource, MigrationInterface } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import {
  MIGRATION_LOCK_TABLE,
  revertLastMigration,
  runMigrations,
} from '../src/database/migrator.js';
import { dataSourceFor } from '../src/entities.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { waitFor } from './support/wait-for.js';

const ALL = MIGRATIONS.map((m) => m.name);

/**
 * The migration lock on MySQL/MariaDB: one row of the database, claimed by a conditional update,
 * with a lease its holder renews. Runs only with TEST_DATABASE_URL (see jest.config.js): SQLite
 * migrates under the file's own write lock. On a cluster: test/cluster-migrations.galera-e2e-spec.ts.
 */
describe('migration lock', () => {
  const opened: { db: TestDatabase; ds: DataSource[] }[] = [];
  let other: Connection | undefined;

  afterEach(async () => {
    await other?.end();
    other = undefined;
    for (const { db, ds } of opened.splice(0)) {
      for (const d of ds) if (d.isInitialized) await d.destroy();
      await db.drop();
    }
  });

  /** A fresh database and `count` data sources on it, as that many processes would have. */
  async function fresh(
    count = 1,
    migrations?: (new () => MigrationInterface)[],
  ): Promise<{ url: string; ds: DataSource[] }> {
    const db = await createTestDatabase();
    const config = loadConfig({ DATABASE_URL: db.url }).database;
    const ds = Array.from({ length: count }, () =>
      dataSourceFor(config, migrations ? { migrations } : {}),
    );
    opened.push({ db, ds });
    for (const d of ds) await d.initialize();
    return { url: db.url, ds };
  }

  /** A connection of another process to the database. */
  async function connect(url: string): Promise<Connection> {
    const u = new URL(url);
    other = await createConnection({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: u.pathname.slice(1),
    });
    return other;
  }

  /** Another process holds the lock, its lease ending `seconds` from now (in the past if < 0). */
  async function heldBy(url: string, holder: string, seconds: number): Promise<Connection> {
    const c = await connect(url);
    await c.query(`CREATE TABLE IF NOT EXISTS ${MIGRATION_LOCK_TABLE} (
      id INT NOT NULL PRIMARY KEY, holder VARCHAR(100) NULL, expires_at DATETIME(3) NULL)`);
    await c.query(
      `INSERT INTO ${MIGRATION_LOCK_TABLE} (id, holder, expires_at)
       VALUES (1, ?, NOW(3) + INTERVAL ? SECOND)`,
      [holder, seconds],
    );
    return c;
  }

  async function lockRow(c: Connection): Promise<{ holder: string | null; expires_at: Date }> {
    const [rows] = await c.query(`SELECT holder, expires_at FROM ${MIGRATION_LOCK_TABLE}`);
    return (rows as { holder: string | null; expires_at: Date }[])[0];
  }

  async function tables(c: Connection): Promise<string[]> {
    const [rows] = await c.query(
      'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1',
    );
    return (rows as { name: string }[]).map((r) => r.name);
  }

  /** A migration that waits, once entered, until the test lets it finish. */
  function pausing() {
    const state = { entered: false, finish: () => {} };
    const gate = new Promise<void>((resolve) => (state.finish = resolve));
    class Pause1700000000000 implements MigrationInterface {
      async up(): Promise<void> {
        state.entered = true;
        await gate;
      }
      async down(): Promise<void> {}
    }
    return { state, migration: Pause1700000000000 };
  }

  it('should migrate a database while another database of the same server is being migrated', async () => {
    const { state, migration } = pausing();
    const busy = await fresh(1, [migration]);
    const target = await fresh();
    const paused = runMigrations(busy.ds[0]);
    try {
      await waitFor(() => state.entered);
      expect(await runMigrations(target.ds[0])).toEqual(ALL);
    } finally {
      state.finish();
      await paused;
    }
  });

  it("should wait while another process holds the database's migration lock, and migrate once it is released", async () => {
    const target = await fresh();
    const c = await heldBy(target.url, 'another process', 3600);
    const waits: string[] = [];

    const migrating = runMigrations(target.ds[0], { onWait: (holder) => waits.push(holder) });
    await waitFor(() => waits.length >= 3);
    expect(await tables(c)).toEqual([MIGRATION_LOCK_TABLE]);
    expect(new Set(waits)).toEqual(new Set(['another process']));

    await c.query(`UPDATE ${MIGRATION_LOCK_TABLE} SET holder = NULL, expires_at = NULL`);
    expect(await migrating).toEqual(ALL);
    expect((await lockRow(c)).holder).toBeNull();
  });

  it('should take the lock over from a holder whose lease ran out, as a crashed process leaves it', async () => {
    const target = await fresh();
    const c = await heldBy(target.url, 'crashed process', -1);
    const takenFrom: string[] = [];

    expect(await runMigrations(target.ds[0], { onTakeover: (h) => takenFrom.push(h) })).toEqual(
      ALL,
    );
    expect(takenFrom).toEqual(['crashed process']);
    expect((await lockRow(c)).holder).toBeNull();
  });

  it('should renew its lease while it migrates, so that others wait past the first lease', async () => {
    const { state, migration } = pausing();
    const target = await fresh(2, [migration]);
    const c = await connect(target.url);
    const timings = { leaseSeconds: 2, renewEveryMs: 200, pollMs: 100 };
    const first = runMigrations(target.ds[0], { timings });
    try {
      await waitFor(() => state.entered);
      const { holder, expires_at: firstLease } = await lockRow(c);
      const waits: string[] = [];
      const second = runMigrations(target.ds[1], { timings, onWait: (h) => waits.push(h) });

      // The lease now ends after the first one would have: it was renewed, and the second
      // process is still waiting for the same holder.
      await waitFor(
        async () => (await lockRow(c)).expires_at.getTime() > firstLease.getTime() + 2000,
      );
      expect(state.entered).toBe(true);
      expect(waits.length).toBeGreaterThan(0);
      expect(new Set(waits)).toEqual(new Set([holder]));

      state.finish();
      expect(await first).toEqual(['Pause1700000000000']);
      expect(await second).toEqual([]);
    } finally {
      state.finish();
      await first.catch(() => undefined);
    }
  });

  it('should apply each migration once when four processes migrate an empty database at the same moment', async () => {
    const target = await fresh(4);
    const applied = await Promise.all(target.ds.map((ds) => runMigrations(ds)));

    expect(applied.flat().sort()).toEqual([...ALL].sort());
    const c = await connect(target.url);
    const [rows] = await c.query('SELECT name FROM migrations ORDER BY id');
    expect((rows as { name: string }[]).map((r) => r.name)).toEqual(ALL);
  });

  /** The database's schema as information_schema has it: columns, indexes, foreign keys. */
  async function schemaOf(c: Connection): Promise<string> {
    const mine = `TABLE_SCHEMA = DATABASE() AND TABLE_NAME NOT IN ('migrations', '${MIGRATION_LOCK_TABLE}')`;
    const [columns] = await c.query(
      `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLLATION_NAME
         FROM information_schema.COLUMNS WHERE ${mine} ORDER BY 1, 2`,
    );
    const [indexes] = await c.query(
      `SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE
         FROM information_schema.STATISTICS WHERE ${mine} ORDER BY 1, 2, 3`,
    );
    const [keys] = await c.query(
      `SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
         FROM information_schema.KEY_COLUMN_USAGE
        WHERE ${mine} AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY 1, 2, 3`,
    );
    return JSON.stringify({ columns, indexes, keys });
  }

  const CUT = 'the process was killed here';
  const SCHEMA_CHANGES = new Set([
    'addColumn',
    'addColumns',
    'createTable',
    'createIndex',
    'createForeignKey',
    'changeColumn',
    'dropColumn',
    'dropColumns',
    'dropIndex',
    'dropForeignKey',
    'dropTable',
  ]);

  /**
   * Runs a migration's `up` or `down` as a process killed right after its `after`-th schema
   * change would have: those changes are made (MySQL commits each at once), nothing after them,
   * and no row in `migrations` says so. Whether it was cut before its end.
   */
  async function cutOff(
    ds: DataSource,
    migration: MigrationInterface,
    step: 'up' | 'down',
    after: number,
  ): Promise<boolean> {
    const runner = ds.createQueryRunner();
    let changes = 0;
    const cutting = new Proxy(runner, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        const bound = (value as (...a: unknown[]) => Promise<unknown>).bind(target);
        if (!SCHEMA_CHANGES.has(String(property))) return bound;
        return async (...args: unknown[]) => {
          if (changes === after) throw new Error(CUT);
          const result = await bound(...args);
          changes++;
          return result;
        };
      },
    });
    try {
      await migration[step](cutting);
      return false;
    } catch (error) {
      if ((error as Error).message !== CUT) throw error;
      return true;
    } finally {
      await runner.release();
    }
  }

  it('should finish a migration, or its undoing, that a killed process left half-way, wherever it stopped', async () => {
    const target = await fresh();
    await runMigrations(target.ds[0]);
    const c = await connect(target.url);
    const config = loadConfig({ DATABASE_URL: target.url }).database;
    for (let i = MIGRATIONS.length - 1; i >= 0; i--) {
      // A process that knows the migrations up to this one: it is the last one to run.
      const ds = await dataSourceFor(config, {
        migrations: MIGRATIONS.slice(0, i + 1),
      }).initialize();
      try {
        const migration = ds.migrations.at(-1)!;
        const { name } = migration;
        const applied = await schemaOf(c);
        expect(await revertLastMigration(ds)).toBe(name);
        const before = await schemaOf(c);

        // Killed after each of the migration's changes in turn, and after its last one: the
        // next process to migrate finishes it.
        for (let after = 1; ; after++) {
          const cut = await cutOff(ds, migration, 'up', after);
          expect(await runMigrations(ds)).toEqual([name]);
          expect([name, after, await schemaOf(c)]).toEqual([name, after, applied]);
          if (!cut) break;
          await revertLastMigration(ds);
        }

        // Killed after the first change of its undoing, undoing it again finishes it.
        await cutOff(ds, migration, 'down', 1);
        expect(await revertLastMigration(ds)).toBe(name);
        expect([name, await schemaOf(c)]).toEqual([name, before]);
      } finally {
        await ds.destroy();
      }
    }
    expect(await tables(c)).toEqual(['migrations', MIGRATION_LOCK_TABLE]);
  });

  it('should stop, saying what, where a migration finds something of its name made otherwise', async () => {
    const target = await fresh();
    const [ds] = target.ds;
    await runMigrations(ds);
    const c = await connect(target.url);
    // Undone down to the migration that adds webhook_endpoints.backoff_until, and it.
    const undone: string[] = [];
    while (undone.at(-1) !== 'WebhookEndpointBackoff1765623600000') {
      const name = await revertLastMigration(ds);
      if (!name) throw new Error('No migration adds webhook_endpoints.backoff_until');
      undone.push(name);
    }
    // Made by hand, or by another version of the migration: not what the migration makes.
    await c.query('ALTER TABLE webhook_endpoints ADD COLUMN backoff_until INT NULL');
    await expect(runMigrations(ds)).rejects.toThrow(
      /webhook_endpoints has a column backoff_until already, unlike the one this migration makes/,
    );
    await c.query('ALTER TABLE webhook_endpoints DROP COLUMN backoff_until');
    expect(await runMigrations(ds)).toEqual(undone.toReversed());
  });
});
