import { afterAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../src/config/config.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { runMigrations } from '../src/database/migrator.js';
import { dataSourceFor } from '../src/entities.js';
import { createClusterDatabase, galeraNodes, type ClusterDatabase } from './support/galera.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Instances that start together on several nodes of a cluster, on an empty database: the
 * migration lock must hold across the nodes (a named lock is one node's). Runs only with
 * TEST_GALERA_URLS (see jest.config.js).
 */
describe('migrations on a cluster', () => {
  const databases: ClusterDatabase[] = [];
  const apps: TestApp[] = [];
  let smtp: TestSmtpServer | undefined;

  afterAll(async () => {
    for (const app of apps) await app.close();
    await smtp?.stop();
    for (const db of databases) await db.drop();
  });

  /** Each table's definition, as the server shows it (without the next auto-increment value). */
  async function schemaOf(db: ClusterDatabase, node = 0): Promise<Record<string, string>> {
    const n = galeraNodes()[node];
    const tables = await n.run<{ name: string }[]>(
      `SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1`,
      [db.name],
    );
    const schema: Record<string, string> = {};
    for (const { name } of tables) {
      const [row] = await n.run<Record<string, string>[]>(
        `SHOW CREATE TABLE \`${name}\``,
        [],
        db.name,
      );
      schema[name] = row['Create Table'].replace(/ AUTO_INCREMENT=\d+/, '');
    }
    return schema;
  }

  it('should start four instances at the same moment on three nodes of an empty database, each migration applied once', async () => {
    const db = await createClusterDatabase();
    databases.push(db);
    smtp = await TestSmtpServer.start();
    const mail = smtp;
    const onNodes = [0, 1, 2, 0];

    const started = await Promise.allSettled(
      onNodes.map((n) =>
        createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { database: db.onNode[n], mail }),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') apps.push(s.value);
    expect(started.map((s) => (s.status === 'fulfilled' ? 'started' : String(s.reason)))).toEqual(
      onNodes.map(() => 'started'),
    );

    for (const app of apps) {
      expect((await request(app.server).get('/health/ready')).status).toBe(200);
    }
    const recorded = await galeraNodes()[1].run<{ name: string }[]>(
      'SELECT name FROM migrations ORDER BY id',
      [],
      db.name,
    );
    expect(recorded.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));

    // The same schema as one process migrating on one node makes.
    const alone = await createClusterDatabase();
    databases.push(alone);
    const ds = dataSourceFor(loadConfig({ DATABASE_URL: alone.onNode[2].url }).database);
    await ds.initialize();
    const entityTables = ds.entityMetadatas.map((m) => m.tableName);
    try {
      await runMigrations(ds);
    } finally {
      await ds.destroy();
    }
    const expected = await schemaOf(alone);
    // A whole schema: every table the entities describe, and the migrations' record.
    expect(Object.keys(expected)).toEqual(
      expect.arrayContaining([...entityTables, 'migrations', 'migrations_lock']),
    );
    expect(await schemaOf(db)).toEqual(expected);
    // Every node holds that schema.
    expect(await schemaOf(db, 2)).toEqual(expected);
  });
});
