import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import request from 'supertest';
import { In } from 'typeorm';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createToken, createUser, uniqueEmail } from './factories/index.js';
import { NEW_TOKEN_VALUE } from './support/html.js';
import { startInstances, type Instances } from './support/instances.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

describe('concurrent changes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A person signed up through the pages, with a CSRF token of the tokens page's forms. */
  async function racer() {
    const person = await signedInPerson(t, {
      name: 'Racer',
      email: uniqueEmail('race'),
      register: true,
    });
    return { ...person, csrf: await person.client.csrfFrom('/settings/api-tokens') };
  }

  it('should leave the user in one of their own teams after 20 parallel switches and a removal', async () => {
    const owner = await createUser(t.app, { name: 'Owner' });
    const { client, user, csrf } = await racer();
    const teamIds: number[] = [user.currentTeamId!];
    const { client: ownerClient, email: ownerEmail } = await signedInPerson(t, {
      name: 'Team Owner',
      email: uniqueEmail('owner'),
      register: true,
    });
    for (let i = 0; i < 4; i++) {
      await ownerClient.submit('/teams', '/teams', { name: `Race ${i}` });
      const teamId = (await t.dataSource.getRepository(User).findOneByOrFail({ email: ownerEmail }))
        .currentTeamId!;
      await addMember(t.app, teamId, user);
      teamIds.push(teamId);
    }
    const leaving = teamIds[1];
    const ownerCsrf = await ownerClient.csrfFrom('/teams');

    const switches = Array.from({ length: 20 }, (_, i) =>
      client.agent
        .post('/teams/switch')
        .type('form')
        .send({ _csrf: csrf, team_id: String(teamIds[i % teamIds.length]) }),
    );
    const removal = ownerClient.agent
      .post(`/teams/${leaving}/members/${user.id}/remove`)
      .type('form')
      .send({ _csrf: ownerCsrf });
    const answers = await Promise.all([...switches, removal]);
    expect(answers.every((a) => a.status === 303 || a.status === 404)).toBe(true);

    const current = (await t.dataSource.getRepository(User).findOneByOrFail({ id: user.id }))
      .currentTeamId!;
    const memberships = await t.dataSource.getRepository(TeamMember).findBy({ userId: user.id });
    expect(memberships.map((m) => m.teamId)).toContain(current);
    expect(memberships.map((m) => m.teamId)).not.toContain(leaving);
    expect(owner.id).toBeGreaterThan(0);
  });

  it('should leave exactly the expected rows after 200 parallel creations and revocations', async () => {
    const { client, user, email, csrf } = await racer();
    const existing = await Promise.all(
      Array.from({ length: 100 }, (_, i) => createToken(t.app, user, { name: `old ${i}` })),
    );

    const creations = Array.from({ length: 100 }, (_, i) =>
      client.agent
        .post('/settings/api-tokens')
        .type('form')
        .send({ _csrf: csrf, name: `new ${i}`, abilities: 'user:read' }),
    );
    const revocations = existing.map(({ token }) =>
      client.agent
        .post(`/settings/api-tokens/${token.id}/revoke`)
        .type('form')
        .send({ _csrf: csrf }),
    );
    const answers = await Promise.all([...creations, ...revocations]);
    expect(answers.map((a) => a.status)).toEqual([
      ...Array(100).fill(200),
      ...Array(100).fill(303),
    ]);

    const rows = await t.dataSource.getRepository(PersonalAccessToken).findBy({ userId: user.id });
    expect(rows).toHaveLength(200);
    expect(new Set(rows.map((r) => r.tokenHash)).size).toBe(200);
    expect(rows.filter((r) => r.name.startsWith('old ')).every((r) => r.revokedAt !== null)).toBe(
      true,
    );
    const created = rows.filter((r) => r.name.startsWith('new '));
    expect(created.map((r) => r.name).sort()).toEqual(
      Array.from({ length: 100 }, (_, i) => `new ${i}`).sort(),
    );
    expect(created.every((r) => r.revokedAt === null)).toBe(true);
    // Each creation's own answer shows its own token, however many ran at once in one session.
    const shown = answers.slice(0, 100).map((a) => NEW_TOKEN_VALUE.exec(a.text)?.[1] ?? '');
    const hashes = shown.map((p) => createHash('sha256').update(p).digest('hex'));
    expect(new Set(hashes)).toEqual(new Set(created.map((r) => r.tokenHash)));
    for (const { plaintext } of existing.slice(0, 5)) {
      const res = await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${plaintext}`);
      expect(res.body.error.code).toBe('token_revoked');
    }
    // Each of the 200 new tokens has a notice in the owner's outbox. This test runs last: the
    // notices need not go out (a tenth of a second each to the test's mail server) before
    // another test's mail, and closing the app hands back those not sent yet.
    expect(
      await t.dataSource.getRepository(OutboxMessage).countBy({ recipient: email }),
    ).toBeGreaterThanOrEqual(200);
  });
});

describe('concurrent changes on two instances', () => {
  let instances: Instances;
  let t: TestApp;
  let servers: Server[];

  beforeAll(async () => {
    instances = await startInstances(2, { RATE_LIMIT_ENABLED: 'false' });
    ({ first: t, servers } = instances);
  });
  afterAll(async () => {
    await instances?.close();
  });

  it('should give every one of 30 teams a slug, with no error, when they are created at once with one name', async () => {
    const owner = await createUser(t.app, { password: PASSWORD });
    const clients = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const client = new WebClient(servers[i % 2]);
        await client.login(owner.email, PASSWORD);
        return { client, _csrf: await client.csrfFrom('/teams') };
      }),
    );
    const answers = await Promise.all(
      clients.map(({ client, _csrf }) =>
        client.agent.post('/teams').type('form').send({ _csrf, name: 'Rush Hour' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(303));
    const teams = await t.dataSource.getRepository(Team).findBy({ name: 'Rush Hour' });
    expect(teams).toHaveLength(30);
    expect(new Set(teams.map((team) => team.slug)).size).toBe(30);
    expect(teams.map((team) => team.slug)).toContain('rush-hour');
    const owners = await t.dataSource
      .getRepository(TeamMember)
      .findBy({ teamId: In(teams.map((team) => team.id)), role: 'owner' });
    expect(owners).toHaveLength(30);
  });
  it('should make one account of 12 sign-ups at once for one mailbox written four ways, on both instances', async () => {
    const local = uniqueEmail('rush').split('@')[0];
    const spellings = [
      `${local}@bücher.example`,
      `${local}@xn--bcher-kva.example`,
      `${local}@bu\u0308cher.example`,
      `${local.toUpperCase()}@BÜCHER.EXAMPLE`,
    ];
    const visitors = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const client = new WebClient(servers[i % 2]);
        return { client, email: spellings[i % 4], _csrf: await client.csrfFrom('/register') };
      }),
    );
    const answers = await Promise.all(
      visitors.map(({ client, email, _csrf }) =>
        client.agent.post('/register').type('form').send({
          _csrf,
          name: 'Rushed Sign-up',
          email,
          password: PASSWORD,
          password_confirmation: PASSWORD,
        }),
      ),
    );
    expect(answers.map((a) => `${a.status} ${a.headers.location}`)).toEqual(
      Array(12).fill('303 /register/check-email'),
    );
    const accounts = await t.dataSource.getRepository(User).findBy({ name: 'Rushed Sign-up' });
    expect(accounts.map((a) => a.email)).toEqual([`${local}@xn--bcher-kva.example`]);
    const teams = await t.dataSource.getRepository(Team).findBy({ ownerId: accounts[0].id });
    expect(teams).toHaveLength(1);
  });
});
