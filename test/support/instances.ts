import type { Server } from 'node:http';
import { Clock, ManualClock, SystemClock, type Timer } from '../../src/clock/clock.js';
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
 * The time of a spec's ManualClock, with the machine's timers: the clock of every instance but
 * the first. Moving the spec's clock runs the work that comes due on the first instance only.
 * Every instance running its periodic work at the same moment on one SQLite file in one process
 * would wait on each other's write locks with the event loop blocked (SQLite's busy wait is
 * synchronous), which separate processes never do.
 */
class FollowingClock extends Clock {
  private readonly timers = new SystemClock();

  constructor(private readonly leader: ManualClock) {
    super();
  }

  nowMs(): number {
    return this.leader.nowMs();
  }

  isoMicros(): string {
    return this.leader.isoMicros();
  }

  startTimer(delayMs: number, fire: () => void): Timer {
    return this.timers.startTimer(delayMs, fire);
  }
}

/**
 * `count` instances of the app on one fresh database (a file, for SQLite, so that each instance
 * has its own connection), with `env` on each, and one clock when the spec moves it (the others
 * follow its time), or one clock each (`clocks`, see ClusterClock). Requests that take turns
 * among their servers are what a load balancer would send.
 */
export async function startInstances(
  count: number,
  env: Record<string, string> = {},
  { clock, clocks }: { clock?: ManualClock; clocks?: Clock[] } = {},
): Promise<Instances> {
  const database: TestDatabase = await createTestDatabase({ file: true });
  const mail = await TestSmtpServer.start();
  const apps: TestApp[] = [];
  for (let i = 0; i < count; i++) {
    apps.push(
      await createTestApp(
        { SESSION_SECRET: SHARED_SECRET, ...env },
        {
          database,
          mail,
          clock: clocks?.[i] ?? (clock && i > 0 ? new FollowingClock(clock) : clock),
        },
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
