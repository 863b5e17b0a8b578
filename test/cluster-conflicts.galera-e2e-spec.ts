import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { burst, tally } from './support/burst.js';
import { createClusterDatabase, type ClusterDatabase } from './support/galera.js';
import { SHARED_SECRET } from './support/instances.js';
import { LogCapture } from './support/log-capture.js';
import { signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { rolesIn, teamOf } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const METRICS_SECRET = 'metrics-scraper-secret-0123456789abcdef';
/** Bursts sent until the cluster has refused some transaction at commit (a guard, not a goal). */
const MAX_BURSTS = 30;
const BURST = 10;

/**
 * Two nodes writing the same row at the same moment: the one certified second is refused at
 * commit and run again by the app, which counts it in its metrics and logs it at debug. Runs
 * only with TEST_GALERA_URLS (see jest.config.js).
 */
describe('write conflicts between cluster nodes', () => {
  let db: ClusterDatabase;
  let smtp: TestSmtpServer;
  const logs = [new LogCapture(), new LogCapture()];
  let apps: TestApp[];

  beforeAll(async () => {
    db = await createClusterDatabase();
    smtp = await TestSmtpServer.start();
    const env = {
      SESSION_SECRET: SHARED_SECRET,
      RATE_LIMIT_ENABLED: 'false',
      METRICS_ENABLED: 'true',
      METRICS_TOKEN: METRICS_SECRET,
      LOG_LEVEL: 'debug',
    };
    apps = [
      await createTestApp(env, { database: db.onNode[0], mail: smtp, logs: logs[0] }),
      await createTestApp(env, { database: db.onNode[1], mail: smtp, logs: logs[1] }),
    ];
  });
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await smtp?.stop();
    await db?.drop();
  });

  /** Conflicts run again so far, by both instances, as their metrics say. */
  async function retried(): Promise<number> {
    let total = 0;
    for (const app of apps) {
      const res = await request(app.server)
        .get('/metrics')
        .set('Authorization', `Bearer ${METRICS_SECRET}`);
      for (const line of res.text.split('\n')) {
        if (line.startsWith('tessera_db_conflict_retries_total{')) {
          total += Number(line.slice(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return total;
  }

  it("should run again, count and log at debug the role changes another node's change of the same member refused at commit, answering each", async () => {
    const [a, b] = apps;
    const owner = await signedInPerson(a, { name: 'Busy Owner' });
    const member = await signedInPerson(a, { name: 'Changing Member' });
    const team = await teamOf(a, owner, [[member, 'member']]);
    const csrf = await owner.client.csrfFrom(`/teams/${team.id}`);
    const clients = [owner.client, owner.client.on(b.server)];
    expect(await retried()).toBe(0);

    const answers: Record<string, number>[] = [];
    let bursts = 0;
    while (bursts < MAX_BURSTS && (await retried()) === 0) {
      bursts++;
      const statuses = await burst(BURST, [a.server, b.server], (i) =>
        clients[i % 2].post(`/teams/${team.id}/members/${member.user.id}/role`, csrf, {
          role: i % 4 < 2 ? 'admin' : 'member',
        }),
      );
      answers.push(tally(statuses, (res) => String(res.status)));
    }

    // Every change was answered as made: none was lost to a conflict, none failed.
    expect(answers.every((counts) => counts['303'] === BURST)).toBe(true);
    expect(await retried()).toBeGreaterThan(0);
    const lines = [...logs[0].lines, ...logs[1].lines].filter((l) =>
      l.includes('rolled back by a conflict'),
    );
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'debug', context: 'Database' });
    expect(['admin', 'member']).toContain((await rolesIn(b, team.id))[member.user.id]);
  });
});
