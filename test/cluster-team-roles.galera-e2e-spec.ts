import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Connection } from 'mysql2/promise';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { uniqueEmail } from './factories/index.js';
import { createClusterDatabase, galeraNodes, type ClusterDatabase } from './support/galera.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { SHARED_SECRET } from './support/instances.js';
import { invite, rolesIn, teamOf } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * An admin acts on node B while the owner's demotion of that admin is under way on node A. On a
 * single server the admin's request waits for the demotion's row lock and is then refused; a
 * cluster's nodes do not share row locks, so the admin's request also writes the admin's own
 * row, and the two conflict at commit: exactly one of them takes effect, never both. The
 * demotion is a transaction of the test's, held open on node A until the admin's request has
 * been answered, so the order is certain. Runs only with TEST_GALERA_URLS (see jest.config.js).
 */
describe('team roles decided across cluster nodes', () => {
  let db: ClusterDatabase;
  let smtp: TestSmtpServer;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createClusterDatabase();
    smtp = await TestSmtpServer.start();
    const env = { SESSION_SECRET: SHARED_SECRET, RATE_LIMIT_ENABLED: 'false' };
    a = await createTestApp(env, { database: db.onNode[0], mail: smtp });
    b = await createTestApp(env, { database: db.onNode[1], mail: smtp });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await smtp?.stop();
    await db?.drop();
  });

  /**
   * The owner demoting the admin on node A, not yet committed: the owner's and the admin's rows
   * locked (each by its key, which on a single server is all it takes to make the admin's
   * request wait), the owner's row certified, the admin's role set.
   */
  async function demotingOnNodeA(teamId: number, ownerId: number, adminId: number) {
    const c: Connection = await galeraNodes()[0].connect(db.name);
    await c.query('BEGIN');
    for (const userId of [ownerId, adminId].sort((x, y) => x - y)) {
      await c.query('SELECT role FROM team_members WHERE team_id = ? AND user_id = ? FOR UPDATE', [
        teamId,
        userId,
      ]);
    }
    await c.query(
      'UPDATE team_members SET version = version + 1 WHERE team_id = ? AND user_id = ?',
      [teamId, ownerId],
    );
    await c.query("UPDATE team_members SET role = 'member' WHERE team_id = ? AND user_id = ?", [
      teamId,
      adminId,
    ]);
    return {
      /** Whether the demotion committed (false: refused as conflicting with the admin's act). */
      commit: async (): Promise<boolean> => {
        try {
          await c.query('COMMIT');
          return true;
        } catch (error) {
          if ((error as { errno?: number }).errno !== 1213) throw error;
          return false;
        } finally {
          await c.end();
        }
      },
    };
  }

  interface AdminAct {
    /** What the admin does on node B, answered by the page. */
    act: () => Promise<{ status: number }>;
    /** Whether it took effect, from the database. */
    tookEffect: () => Promise<boolean>;
  }

  type Case = [
    what: string,
    setup: (team: number, admin: SignedInPerson, member: SignedInPerson) => Promise<AdminAct>,
  ];
  const cases: Case[] = [
    [
      'makes a member an admin',
      async (team, admin, member) => {
        const csrf = await admin.client.csrfFrom(`/teams/${team}`);
        return {
          act: () =>
            admin.client.post(`/teams/${team}/members/${member.user.id}/role`, csrf, {
              role: 'admin',
            }),
          tookEffect: async () => (await rolesIn(b, team))[member.user.id] === 'admin',
        };
      },
    ],
    [
      'removes a member',
      async (team, admin, member) => {
        const csrf = await admin.client.csrfFrom(`/teams/${team}`);
        return {
          act: () => admin.client.post(`/teams/${team}/members/${member.user.id}/remove`, csrf),
          tookEffect: async () => (await rolesIn(b, team))[member.user.id] === undefined,
        };
      },
    ],
    [
      "has their invitation accepted (it rests on the admin's right to invite)",
      async (team, admin) => {
        const email = uniqueEmail('invitee');
        expect((await invite(admin, team, email)).status).toBe(303);
        const invitee = await signedInPerson(b, { name: 'Invitee', email });
        const { id } = await b.dataSource.getRepository(TeamInvitation).findOneByOrFail({ email });
        const csrf = await invitee.client.csrfFrom('/dashboard');
        return {
          act: () => invitee.client.post(`/invitations/pending/${id}/accept`, csrf),
          tookEffect: async () => (await rolesIn(b, team))[invitee.user.id] === 'member',
        };
      },
    ],
  ];

  it.each(cases)(
    'should let either the demotion on node A or the admin on node B take effect, never both, when the admin %s',
    async (_what, setup) => {
      const owner = await signedInPerson(a, { name: 'Owner' });
      const admin = await signedInPerson(b, { name: 'Admin' });
      const member = await signedInPerson(b, { name: 'Member' });
      const team = await teamOf(a, owner, [
        [admin, 'admin'],
        [member, 'member'],
      ]);
      const { act, tookEffect } = await setup(team.id, admin, member);

      const demotion = await demotingOnNodeA(team.id, owner.user.id, admin.user.id);
      let answered: number;
      let demoted: boolean;
      try {
        answered = (await act()).status;
      } finally {
        demoted = await demotion.commit();
      }

      const adminRole = (await rolesIn(a, team.id))[admin.user.id];
      const outcome = { demoted, adminRole, adminActTookEffect: await tookEffect(), answered };
      expect([
        // The demotion first: the admin, a member by then, is refused.
        { demoted: true, adminRole: 'member', adminActTookEffect: false, answered: 403 },
        // The admin first: the demotion conflicted with it (and the app would run it again).
        { demoted: false, adminRole: 'admin', adminActTookEffect: true, answered: 303 },
      ]).toContainEqual(outcome);
    },
  );
});
