import type { INestApplication, Type } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory.js';
import type { Clock } from '../../src/clock/clock.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { track } from './leftovers.js';
import { QueryLog } from './query-log.js';
import { TestSmtpServer } from './smtp-server.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface TestApp {
  app: INestApplication;
  server: Server;
  dataSource: DataSource;
  database: TestDatabase;
  config: Config;
  queries: QueryLog;
  /** The SMTP server the app sends its mail to. */
  mail: TestSmtpServer;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** A database to share with other apps (kept when this app closes); a fresh one otherwise. */
  database?: TestDatabase;
  /** Where the app's log lines go (a LogCapture, say). */
  logs?: DestinationStream;
  /** An SMTP server to share with other apps (kept when this app closes); its own otherwise. */
  mail?: TestSmtpServer;
  /** A clock the spec moves (ManualClock) instead of the machine's. */
  clock?: Clock;
  /** Feature modules to add to the app, as a deployment adds its own (docs/extending.md). */
  modules?: Type[];
}

/**
 * Builds the app with the factory main.ts uses, on a fresh database, listening on 127.0.0.1 (on
 * `PORT` when the environment names one, else on an ephemeral port) and sending its mail to a
 * real SMTP server.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  { database, logs, mail, clock, modules }: TestAppOptions = {},
): Promise<TestApp> {
  const db = database ?? (await createTestDatabase());
  const smtp = mail ?? (await TestSmtpServer.start());
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'fatal',
    DATABASE_URL: db.url,
    // Specs register many people from 127.0.0.1; the registration limit has specs of its own.
    RATE_LIMIT_REGISTER_PER_HOUR: '100000',
    MAIL_URL: smtp.url,
    // A failed try is retried within a second. The sender is woken by each commit; its timer
    // looks again only hourly, so no spec counting queries sees a poll among them.
    MAIL_RETRY_SECONDS: '1',
    MAIL_POLL_SECONDS: '3600',
    // A query waits as long as the database takes on a busy machine (a commit's flush to disk
    // can take seconds while browsers and other workers run), not the deployment's 1.5 s.
    DB_QUERY_TIMEOUT_MS: '60000',
    // Likewise Redis, for specs that share limits through it (a fault spec sets its own).
    REDIS_COMMAND_TIMEOUT_MS: '10000',
    ...env,
  });
  let app: Awaited<ReturnType<typeof createApp>> | undefined;
  try {
    app = await createApp(config, { logDestination: logs, clock, modules });
    await app.listen(env.PORT ? config.app.port : 0, '127.0.0.1');
  } catch (error) {
    // An app that could not start leaves nothing open behind it to keep Jest from exiting:
    // one that failed while starting (a check at bootstrap) has its database open already.
    await app?.close().catch(() => undefined);
    if (!mail) await smtp.stop();
    if (!database) await db.drop();
    throw error;
  }
  const dataSource = app.get<DataSource>(getDataSourceToken());
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      forget();
      await app.close();
      if (!mail) await smtp.stop();
      if (!database) await db.drop();
    })());
  const forget = track(close);
  return {
    app,
    server: app.getHttpServer() as Server,
    dataSource,
    database: db,
    config,
    queries: QueryLog.attach(dataSource),
    mail: smtp,
    close,
  };
}

/** A port nothing listens on now, for an app that must know its own address (APP_URL). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
