import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { TeamMember } from '../../src/teams/team-member.entity.js';
import { addMember, createTeam } from '../factories/index.js';
import { signedInPerson, type SignedInPerson } from './people.js';
import type { TestApp } from './test-app.js';

/** A team owned by `owner` with the others in it under the given roles. */
export async function teamOf(
  t: Pick<TestApp, 'app' | 'dataSource'>,
  owner: Pick<SignedInPerson, 'user'>,
  others: [Pick<SignedInPerson, 'user'>, 'admin' | 'member'][],
  name = 'Acme',
) {
  const team = await createTeam(t.app, owner.user, name);
  for (const [person, role] of others) {
    await t.dataSource.getRepository(TeamMember).insert({
      teamId: team.id,
      userId: person.user.id,
      role,
    });
  }
  return team;
}

/** An owner, two admins and a member of a new team, each signed in. */
export async function staffedTeam(t: Pick<TestApp, 'app' | 'server' | 'mail' | 'dataSource'>) {
  const [owner, adminA, adminB, member] = await Promise.all(
    ['Owner', 'Admin A', 'Admin B', 'Member'].map((name) => signedInPerson(t, { name })),
  );
  const team = await createTeam(t.app, owner.user, `Staffed ${randomBytes(3).toString('hex')}`);
  await addMember(t.app, team.id, adminA.user, 'admin');
  await addMember(t.app, team.id, adminB.user, 'admin');
  await addMember(t.app, team.id, member.user, 'member');
  return { team, owner, adminA, adminB, member };
}

/** Each member's role in the team, by user id, as the database has it. */
export async function rolesIn(t: Pick<TestApp, 'dataSource'>, teamId: number) {
  return Object.fromEntries(
    (await t.dataSource.getRepository(TeamMember).findBy({ teamId })).map((m) => [
      m.userId,
      m.role,
    ]),
  );
}

/** Invites `email` into the team from the team's page, as `by` would. */
export function invite(by: SignedInPerson, teamId: number, email: string, role = 'member') {
  return by.client.submit(`/teams/${teamId}`, `/teams/${teamId}/invitations`, { email, role });
}

/** The current team of a token's owner, as the API shows it to the token. */
export async function apiTeam(t: Pick<TestApp, 'server'>, token: string) {
  const res = await request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${token}`);
  return res.body.data;
}
