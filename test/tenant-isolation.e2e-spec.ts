import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Session } from '../src/auth/session.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createToken, uniqueEmail } from './factories/index.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import type { WebClient } from './support/web-client.js';

/**
 * Every route that takes an id, given another person's or another team's id: 404 where the
 * object is not the asker's to see, 403 where it is visible but not theirs to change, and
 * nothing in the database changes.
 */
describe('tenant isolation', () => {
  let t: TestApp;
  const people: Record<string, { client: WebClient; user: User; token: string }> = {};
  let aliceTeam: number;
  let alicePersonal: number;
  let aliceTokenId: number;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    for (const name of ['alice', 'bob', 'mallory']) {
      const { client, user } = await signedInPerson(t, {
        name,
        email: uniqueEmail(name),
        register: true,
      });
      people[name] = { client, user, token: (await createToken(t.app, user)).plaintext };
    }
    const alice = people.alice;
    alicePersonal = alice.user.currentTeamId!;
    await alice.client.submit('/teams', '/teams', { name: 'Alice and Bob' });
    aliceTeam = (await t.dataSource.getRepository(User).findOneByOrFail({ id: alice.user.id }))
      .currentTeamId!;
    await addMember(t.app, aliceTeam, people.bob.user);
    aliceTokenId = (
      await t.dataSource
        .getRepository(PersonalAccessToken)
        .findOneByOrFail({ userId: alice.user.id })
    ).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const snapshot = async () =>
    JSON.stringify(
      await Promise.all(
        [User, Team, TeamMember, PersonalAccessToken].map((entity) =>
          t.dataSource.getRepository(entity).find({ order: { createdAt: 'ASC' } }),
        ),
      ),
    );

  it("should refuse every id that is not the asker's, and change nothing", async () => {
    const { mallory, bob } = people;
    const cases: [string, () => Promise<request.Response>, number][] = [
      [
        "Mallory revokes Alice's token",
        () => mallory.client.submit('/dashboard', `/settings/api-tokens/${aliceTokenId}/revoke`),
        404,
      ],
      [
        "Bob revokes Alice's token (same team)",
        () => bob.client.submit('/dashboard', `/settings/api-tokens/${aliceTokenId}/revoke`),
        404,
      ],
      ["Mallory views Alice's team", () => mallory.client.get(`/teams/${aliceTeam}`), 404],
      [
        "Mallory views Alice's personal team",
        () => mallory.client.get(`/teams/${alicePersonal}`),
        404,
      ],
      ["Bob views Alice's personal team", () => bob.client.get(`/teams/${alicePersonal}`), 404],
      [
        "Mallory switches to Alice's team",
        () => mallory.client.submit('/dashboard', '/teams/switch', { team_id: String(aliceTeam) }),
        404,
      ],
      [
        "Bob switches to Alice's personal team",
        () => bob.client.submit('/dashboard', '/teams/switch', { team_id: String(alicePersonal) }),
        404,
      ],
      [
        "Mallory adds herself to Alice's team",
        () =>
          mallory.client.submit('/dashboard', `/teams/${aliceTeam}/invitations`, {
            email: mallory.user.email,
            role: 'admin',
          }),
        404,
      ],
      [
        'Bob (a member) adds Mallory',
        () =>
          bob.client.submit('/dashboard', `/teams/${aliceTeam}/invitations`, {
            email: mallory.user.email,
            role: 'member',
          }),
        403,
      ],
      [
        "Mallory removes Bob from Alice's team",
        () =>
          mallory.client.submit('/dashboard', `/teams/${aliceTeam}/members/${bob.user.id}/remove`),
        404,
      ],
      [
        'Bob (a member) removes Alice',
        () =>
          bob.client.submit(
            '/dashboard',
            `/teams/${aliceTeam}/members/${people.alice.user.id}/remove`,
          ),
        403,
      ],
      [
        'Alice removes Mallory, who is not in the team',
        () =>
          people.alice.client.submit(
            '/dashboard',
            `/teams/${aliceTeam}/members/${mallory.user.id}/remove`,
          ),
        404,
      ],
    ];
    const before = await snapshot();
    const sessionsBefore = await t.dataSource.getRepository(Session).count();
    const results: string[] = [];
    for (const [name, send, status] of cases) {
      const res = await send();
      if (res.status !== status) results.push(`${name}: ${res.status}, expected ${status}`);
    }
    expect(results).toEqual([]);
    expect(await snapshot()).toEqual(before);
    // Nobody was signed out or in by the attempts.
    expect(await t.dataSource.getRepository(Session).count()).toBe(sessionsBefore);
  });

  it("should drop a removed member's team from /api/v1/team at once", async () => {
    const { alice, bob } = people;
    await bob.client.submit('/teams', '/teams/switch', { team_id: String(aliceTeam) });
    const team = () =>
      request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${bob.token}`);
    expect((await team()).body.data.id).toBe(aliceTeam);

    await alice.client.submit(
      `/teams/${aliceTeam}`,
      `/teams/${aliceTeam}/members/${bob.user.id}/remove`,
    );

    const after = await team();
    expect(after.body.data.id).toBe(bob.user.currentTeamId);
    expect(after.body.data.id).not.toBe(aliceTeam);
  });
});
