import type { Server } from 'node:http';
import type { Clock } from '../../src/clock/clock.js';
import { TestSmtpServer } from './smtp-server.js';
import { createTestApp, type TestApp } from './test-app.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/** One deployment of several instances: one database, one mail server, one session secret. */
export interface Instances {
  apps: TestApp[];
  servers: Server[];
  /** The first instance, for what needs only one (making people, reading rows). */
  first: TestApp;
  mail: TestSmtpServer;
  close(): Promise<void>;
}

export const SHARED_SECRET = 'one secret shared by every instance of this deployment';

/**
 * `count` instances of the app on one fresh database (a file, for SQLite, so that each instance
 * has its own connection), with `env` on each, and one clock when the spec moves it (or one
 * clock each, `clocks`, see ClusterClock). Requests
 * that take turns among their servers are what a load balancer would send.
 */
export async function startInstances(
  count: number,
  env: Record<string, string> = {},
  { clock, clocks }: { clock?: Clock; clocks?: Clock[] } = {},
): Promise<Instances> {
  const database: TestDatabase = await createTestDatabase({ file: true });
  const mail = await TestSmtpServer.start();
  const apps: TestApp[] = [];
  for (let i = 0; i < count; i++) {
    apps.push(
      await createTestApp(
        { SESSION_SECRET: SHARED_SECRET, ...env },
        { database, mail, clock: clocks?.[i] ?? clock },
      ),
    );
  }
  return {
    apps,
    servers: apps.map((app) => app.server),
    first: apps[0],
    mail,
    close: async () => {
      for (const app of apps) await app.close();
      await database.drop();
      await mail.stop();
    },
  };
}
