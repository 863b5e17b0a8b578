import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { QueryRunner } from 'typeorm';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { teamOf } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';

/**
 * A team deleted while another change to it is on its way: the change's own check has passed,
 * then its locking read finds the team gone. The test holds the deletion's row locks open, so
 * the change is seen waiting on them before the deletion commits: the order is certain, not
 * left to timing. Runs only with TEST_DATABASE_URL (see jest.config.js): SQLite runs one write
 * transaction at a time, so a change's check and its write cannot be split there.
 */
describe('team changes overtaken by the team’s deletion', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  /** Locking reads of this database under way: a request queued behind the deletion's locks. */
  async function waitingOnLocks(): Promise<number> {
    const [row] = await t.dataSource.query(
      `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
        WHERE DB = DATABASE() AND COMMAND = 'Query' AND INFO LIKE '%FOR UPDATE%'`,
    );
    return Number(row.n);
  }

  /** Deletes the team in a transaction of the test's, left open until `commit`. */
  async function deletingTeam(teamId: number): Promise<{ commit: () => Promise<void> }> {
    const runner: QueryRunner = t.dataSource.createQueryRunner();
    await runner.startTransaction();
    await runner.query('SELECT id FROM teams WHERE id = ? FOR UPDATE', [teamId]);
    await runner.query('DELETE FROM team_members WHERE team_id = ?', [teamId]);
    return {
      commit: async () => {
        await runner.query('UPDATE users SET current_team_id = NULL WHERE current_team_id = ?', [
          teamId,
        ]);
        await runner.query('DELETE FROM teams WHERE id = ?', [teamId]);
        await runner.commitTransaction();
        await runner.release();
      },
    };
  }

  type Change = [
    what: string,
    action: (team: number, other: SignedInPerson) => string,
    fields: (other: SignedInPerson) => Record<string, string>,
  ];
  const overtaken: Change[] = [
    ['removing a member', (team, o) => `/teams/${team}/members/${o.user.id}/remove`, () => ({})],
    [
      'changing a role',
      (team, o) => `/teams/${team}/members/${o.user.id}/role`,
      () => ({ role: 'admin' }),
    ],
    [
      'transferring the team',
      (team) => `/teams/${team}/transfer`,
      (o) => ({ user_id: String(o.user.id) }),
    ],
    [
      'setting the policy',
      (team) => `/teams/${team}/policy`,
      () => ({ token_max_lifetime_days: '30' }),
    ],
    ['deleting the team', (team) => `/teams/${team}/delete`, () => ({})],
  ];

  it.each(overtaken)(
    'should answer %s that a deletion overtook as a team that is gone (404), never as forbidden',
    async (_what, action, fields) => {
      const owner = await signedInPerson(t, { name: 'Racing Owner' });
      const other = await signedInPerson(t, { name: 'Racing Member' });
      const team = await teamOf(t, owner, [[other, 'member']], 'Doomed');
      const csrf = await owner.client.csrfFrom(`/teams/${team.id}`);
      const deletion = await deletingTeam(team.id);

      let answered: number | undefined;
      const answer = owner.client
        .post(action(team.id, other), csrf, fields(other))
        .then((res) => (answered = res.status));
      try {
        // Queued behind the deletion's locks, its own check passed: or answered without them.
        await waitFor(async () => answered !== undefined || (await waitingOnLocks()) > 0);
      } finally {
        await deletion.commit();
      }

      expect(await answer).toBe(404);
    },
  );
});
