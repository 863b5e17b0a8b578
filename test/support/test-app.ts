import type { INestApplication } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { Server } from 'node:http';
import type { DestinationStream } from 'pino';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { QueryLog } from './query-log.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface TestApp {
  app: INestApplication;
  server: Server;
  dataSource: DataSource;
  database: TestDatabase;
  config: Config;
  queries: QueryLog;
  close(): Promise<void>;
}

/**
 * Builds the app with the factory main.ts uses, on a fresh database,
 * listening on an ephemeral port of 127.0.0.1.
 */
export interface TestAppOptions {
  /** A database to share with other apps (kept when this app closes); a fresh one otherwise. */
  database?: TestDatabase;
  /** Where the app's log lines go (a LogCapture, say). */
  logs?: DestinationStream;
}

export async function createTestApp(
  env: Record<string, string> = {},
  { database, logs }: TestAppOptions = {},
): Promise<TestApp> {
  const db = database ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'fatal',
    DATABASE_URL: db.url,
    // Specs register many people from 127.0.0.1; the registration limit has specs of its own.
    RATE_LIMIT_REGISTER_PER_HOUR: '100000',
    ...env,
  });
  const app = await createApp(config, { logDestination: logs });
  await app.listen(0, '127.0.0.1');
  const dataSource = app.get<DataSource>(getDataSourceToken());
  return {
    app,
    server: app.getHttpServer() as Server,
    dataSource,
    database: db,
    config,
    queries: QueryLog.attach(dataSource),
    close: async () => {
      await app.close();
      if (!database) await db.drop();
    },
  };
}
