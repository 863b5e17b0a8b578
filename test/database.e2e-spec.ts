import { afterEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { buildDataSourceOptions } from '../src/database/database-options.js';
import { runMigrations } from '../src/database/migrator.js';
import { runBuilt, startBuiltServer } from './support/run-built.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const TABLES = ['personal_access_tokens', 'team_members', 'teams', 'users'];

describe('database schema', () => {
  let db: TestDatabase | undefined;
  let dataSource: DataSource | undefined;

  afterEach(async () => {
    await dataSource?.destroy();
    await db?.drop();
    dataSource = db = undefined;
  });

  async function open(): Promise<DataSource> {
    db = await createTestDatabase({ file: true });
    dataSource = new DataSource(
      buildDataSourceOptions(loadConfig({ DATABASE_URL: db.url }).database),
    );
    return dataSource.initialize();
  }

  async function tableNames(ds: DataSource): Promise<string[]> {
    const runner = ds.createQueryRunner();
    try {
      const tables = await runner.getTables(TABLES);
      return tables.map((t) => t.name.split('.').at(-1)!).sort();
    } finally {
      await runner.release();
    }
  }

  it('should build exactly the schema the entities describe', async () => {
    const ds = await open();
    expect(await runMigrations(ds)).toBe(1);

    const pending = await ds.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('should be reversible: down removes every table, up restores them', async () => {
    const ds = await open();
    await runMigrations(ds);
    expect(await tableNames(ds)).toEqual(TABLES);

    await ds.undoLastMigration({ transaction: 'each' });
    expect(await tableNames(ds)).toEqual([]);

    expect(await runMigrations(ds)).toBe(1);
    expect(await tableNames(ds)).toEqual(TABLES);
    expect(await runMigrations(ds)).toBe(0);
  });

  it('should migrate once when two servers and a CLI start together on an empty database', async () => {
    db = await createTestDatabase({ file: true });
    const env = { DATABASE_URL: db.url };
    const [a, b, cli] = await Promise.all([
      startBuiltServer(env),
      startBuiltServer(env),
      runBuilt(
        'cli.js',
        ['user:create', '--name', 'Early Bird', '--email', 'early@example.com'],
        env,
      ),
    ]);
    try {
      expect(cli).toMatchObject({ code: 0, stderr: '' });
      for (const server of [a, b]) {
        const res = await fetch(`${server.url}/api/v1/user/profile`);
        expect(res.status).toBe(401);
      }
      dataSource = await new DataSource(
        buildDataSourceOptions(loadConfig(env).database),
      ).initialize();
      expect(await dataSource.query('SELECT name FROM migrations')).toEqual([
        { name: 'InitialSchema1763798400000' },
      ]);
      const applied = [a, b].filter((s) => s.output().includes('Applied 1 migration')).length;
      expect(applied + (cli.stdout.includes('Applied') ? 1 : 0)).toBeLessThanOrEqual(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 90_000);
});
