import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { toEventView } from '../src/security-log/audit.view.js';
import { Team } from '../src/teams/team.entity.js';
import type { User } from '../src/users/user.entity.js';
import { callEveryEndpoint } from './client/every-endpoint.js';
import { tesseraClient } from './client/tessera-client.js';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { rolesIn } from './support/teams.js';
import { burst, tally } from './support/burst.js';
import { startInstances, type Instances } from './support/instances.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { Transactions } from '../src/database/transactions.js';
import { TeamsRepository } from '../src/teams/teams.repository.js';
import { QueryFailedError } from 'typeorm';

const EVERY_ABILITY = [
  'user:read',
  'team:read',
  'members:read',
  'members:write',
  'tokens:read',
  'audit:read',
  'tokens:introspect',
];

describe('the team API', () => {
  let t: TestApp;
  let contract: OpenApiContract;
  let baseUrl: string;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_API_PER_TOKEN: '100000' });
    contract = await OpenApiContract.fetch(t.server);
    baseUrl = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
  });

  /** A team with its owner, an admin and a member, each with a token of every ability. */
  async function team(name = 'Acme') {
    const owner = await createUser(t.app, { name: 'Olive Owner' });
    const acme = await createTeam(t.app, owner, name);
    const admin = await createUser(t.app, { name: 'Adam Admin' });
    const member = await createUser(t.app, { name: 'Mia Member' });
    await addMember(t.app, acme.id, admin, 'admin');
    await addMember(t.app, acme.id, member, 'member');
    const tokenOf = async (user: User, abilities = EVERY_ABILITY) =>
      (await createToken(t.app, user, { name: 'ci', abilities, teamId: acme.id })).plaintext;
    return {
      acme,
      owner,
      admin,
      member,
      tokenOf,
      client: async (user: User, abilities?: string[]) =>
        tesseraClient(baseUrl, await tokenOf(user, abilities)),
    };
  }

  /** Fails unless the client's answer is what the OpenAPI document says for it. */
  function described(
    method: string,
    path: string,
    answer: { response: Response; data?: unknown; error?: unknown },
  ): void {
    const res = {
      status: answer.response.status,
      headers: Object.fromEntries(answer.response.headers),
      body: answer.data ?? answer.error,
    };
    contract.expectMatches(method, path, res as unknown as request.Response);
  }

  it('should let an automation list members, invite, change a role, read the inventory and the audit log, withdraw and remove through the generated client, as the pages would', async () => {
    const { acme, owner, member, tokenOf } = await team();
    const plaintext = await tokenOf(owner);
    const memberToken = await tokenOf(member, ['team:read']);
    const invitee = uniqueEmail('invitee');
    const seen = await callEveryEndpoint(tesseraClient(baseUrl, plaintext), member.id, invitee);

    expect(seen.profileEmail).toBe(owner.email);
    expect(seen.teams).toContainEqual({ id: acme.id, role: 'owner' });
    expect(seen.team.id).toBe(acme.id);
    expect(seen.token.abilities).toEqual(EVERY_ABILITY);
    expect(seen.token.catalog).toEqual(EVERY_ABILITY);
    expect(seen.members.map((m) => m.role).sort()).toEqual(['admin', 'member', 'owner']);
    expect(seen.invitations).toEqual([invitee]);
    expect(seen.roleChanged).toBe('changed');
    expect(seen.tokens.map((x) => x.person).sort()).toEqual([owner.email, member.email].sort());
    expect(JSON.stringify(seen.tokens)).not.toContain(memberToken.slice(4));
    expect(seen.events).toEqual(
      expect.arrayContaining(['team.member_invited', 'team.role_changed']),
    );
    expect(seen.invitationWithdrawn).toBe(204);
    expect(seen.memberRemoved).toBe(204);
    expect(seen.introspected).toBe(false);

    // What the pages would have done: the invitation mailed then withdrawn, the member told of
    // the role and the removal, and gone from the team.
    await t.mail.waitFor({ to: invitee, subject: /invited to join Acme/ });
    await t.mail.waitForCount({ to: member.email }, 2);
    const invitation = await t.dataSource
      .getRepository(TeamInvitation)
      .findOneByOrFail({ teamId: acme.id, email: invitee });
    expect(invitation.status).toBe('revoked');
    expect(await rolesIn(t, acme.id)).not.toHaveProperty(String(member.id));

    // The audit log says who did it: the owner, with the token.
    await t.app.get(Scheduler).drain();
    const events = await t.dataSource
      .getRepository(AuditEvent)
      .find({ where: { teamId: acme.id, event: 'team.member_invited' } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorKind: 'token', actorUserId: owner.id });
    const names = {
      people: new Map([[owner.id, owner]]),
      tokens: new Map([[events[0].tokenId!, 'ci']]),
    };
    expect(toEventView(events[0], names, member.id).by).toBe(
      `${owner.name} (${owner.email}), with the token “ci”`,
    );
  });

  it('should answer every endpoint as the OpenAPI document describes, values and hashes never included', async () => {
    const { owner, admin, tokenOf } = await team();
    const plaintext = await tokenOf(owner);
    const client = tesseraClient(baseUrl, plaintext);
    described('GET', '/api/v1/user/teams', await client.GET('/api/v1/user/teams'));
    described('GET', '/api/v1/team/members', await client.GET('/api/v1/team/members'));
    described('GET', '/api/v1/team/invitations', await client.GET('/api/v1/team/invitations'));
    const tokens = await client.GET('/api/v1/team/tokens');
    described('GET', '/api/v1/team/tokens', tokens);
    expect(JSON.stringify(tokens.data)).not.toContain(plaintext.slice(4));
    expect(JSON.stringify(tokens.data)).not.toMatch(/[0-9a-f]{64}/);
    described('GET', '/api/v1/team/audit-log', await client.GET('/api/v1/team/audit-log'));
    const invited = await client.POST('/api/v1/team/invitations', {
      body: { email: uniqueEmail('doc') },
    });
    expect(invited.response.status).toBe(201);
    described('POST', '/api/v1/team/invitations', invited);
    const role = await client.PATCH('/api/v1/team/members/{id}', {
      params: { path: { id: admin.id } },
      body: { role: 'member' },
    });
    described('PATCH', '/api/v1/team/members/{id}', role);
    expect(role.data?.data).toEqual({ id: admin.id, name: admin.name, email: admin.email });
  });

  it('should refuse a token without the ability each endpoint names (403 insufficient_scope)', async () => {
    const { owner, admin, client } = await team();
    const narrow = await client(owner, ['team:read']);
    const email = uniqueEmail('never');
    const answers: [string, { response: Response; error?: { error: { code: string } } }][] = [
      ['user:read', await narrow.GET('/api/v1/user/teams')],
      ['members:read', await narrow.GET('/api/v1/team/members')],
      ['members:read', await narrow.GET('/api/v1/team/invitations')],
      ['members:write', await narrow.POST('/api/v1/team/invitations', { body: { email } })],
      [
        'members:write',
        await narrow.PATCH('/api/v1/team/members/{id}', {
          params: { path: { id: admin.id } },
          body: { role: 'member' },
        }),
      ],
      [
        'members:write',
        await narrow.DELETE('/api/v1/team/members/{id}', { params: { path: { id: admin.id } } }),
      ],
      [
        'members:write',
        await narrow.DELETE('/api/v1/team/invitations/{id}', { params: { path: { id: 1 } } }),
      ],
      ['tokens:read', await narrow.GET('/api/v1/team/tokens')],
      ['audit:read', await narrow.GET('/api/v1/team/audit-log')],
    ];
    for (const [ability, answer] of answers) {
      expect({ ability, status: answer.response.status, code: answer.error?.error.code }).toEqual({
        ability,
        status: 403,
        code: 'insufficient_scope',
      });
      expect(answer.response.headers.get('www-authenticate')).toContain(`scope="${ability}"`);
    }
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ email })).toBe(0);
  });

  it("should refuse a member the owner's and admins' endpoints (403 forbidden), and let them read the members", async () => {
    const { acme, member, admin, client } = await team();
    const api = await client(member);
    expect((await api.GET('/api/v1/team/members')).response.status).toBe(200);
    const refused = {
      listInvitations: await api.GET('/api/v1/team/invitations'),
      createInvitation: await api.POST('/api/v1/team/invitations', {
        body: { email: uniqueEmail() },
      }),
      updateMemberRole: await api.PATCH('/api/v1/team/members/{id}', {
        params: { path: { id: admin.id } },
        body: { role: 'member' },
      }),
      removeMember: await api.DELETE('/api/v1/team/members/{id}', {
        params: { path: { id: admin.id } },
      }),
      listTeamTokens: await api.GET('/api/v1/team/tokens'),
      listAuditEvents: await api.GET('/api/v1/team/audit-log'),
    };
    for (const [operation, answer] of Object.entries(refused)) {
      expect({ operation, status: answer.response.status, code: answer.error?.error.code }).toEqual(
        { operation, status: 403, code: 'forbidden' },
      );
    }
    described('GET', '/api/v1/team/tokens', refused.listTeamTokens);
    // Nothing changed.
    expect(await rolesIn(t, acme.id)).toMatchObject({ [admin.id]: 'admin' });
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: acme.id })).toBe(0);
  });

  it("should not find another team's members and invitations (404), and change nothing there", async () => {
    const ours = await team('Ours');
    const theirs = await team('Theirs');
    const api = await ours.client(ours.owner);
    const invited = await (
      await theirs.client(theirs.owner)
    ).POST('/api/v1/team/invitations', { body: { email: uniqueEmail() } });
    const theirInvitation = invited.data!.data.id;
    const answers = [
      await api.PATCH('/api/v1/team/members/{id}', {
        params: { path: { id: theirs.member.id } },
        body: { role: 'admin' },
      }),
      await api.DELETE('/api/v1/team/members/{id}', { params: { path: { id: theirs.member.id } } }),
      await api.DELETE('/api/v1/team/invitations/{id}', {
        params: { path: { id: theirInvitation } },
      }),
    ];
    for (const answer of answers) {
      expect({ status: answer.response.status, code: answer.error?.error.code }).toEqual({
        status: 404,
        code: 'not_found',
      });
    }
    described('DELETE', '/api/v1/team/invitations/{id}', answers[2]);
    expect(await rolesIn(t, theirs.acme.id)).toMatchObject({ [theirs.member.id]: 'member' });
    const still = await t.dataSource
      .getRepository(TeamInvitation)
      .findOneByOrFail({ id: theirInvitation });
    expect(still.status).toBe('pending');
  });

  it("should refuse what the team's policy refuses: an ability it does not allow (naming it), and a person without two-factor sign-in", async () => {
    const { acme, owner, client } = await team();
    const api = await client(owner);
    await t.dataSource
      .getRepository(Team)
      .update({ id: acme.id }, { allowedAbilities: ['team:read', 'members:write'] });
    const members = await api.GET('/api/v1/team/members');
    expect(members.response.status).toBe(403);
    expect(members.error?.error).toMatchObject({
      code: 'ability_not_allowed_by_team',
      message: expect.stringContaining('"members:read"'),
    });
    expect(members.response.headers.get('www-authenticate')).toContain('scope="members:read"');
    described('GET', '/api/v1/team/members', members);
    // What the policy allows still works; a token's other abilities are not refused for it.
    expect((await api.GET('/api/v1/team')).response.status).toBe(200);

    await t.dataSource
      .getRepository(Team)
      .update({ id: acme.id }, { allowedAbilities: null, requireTwoFactor: true });
    const refused = await api.GET('/api/v1/team/members');
    expect(refused.error?.error.code).toBe('two_factor_required');
  });

  it('should name each bad field (422), and refuse a body that is not JSON (415), too large (413) or malformed (400)', async () => {
    const { acme, owner, tokenOf } = await team();
    const auth = `Bearer ${await tokenOf(owner)}`;
    const post = (body: string, type = 'application/json') =>
      request(t.server)
        .post('/api/v1/team/invitations')
        .set('Authorization', auth)
        .set('Content-Type', type)
        .send(body);

    const bad = await post(JSON.stringify({ email: 'not an address', role: 'king', admin: true }));
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({
      code: 'validation_failed',
      fields: {
        email: 'Enter a valid email address.',
        role: expect.stringContaining('member, admin'),
        admin: 'admin is not a field of this request.',
      },
    });
    contract.expectMatches('POST', '/api/v1/team/invitations', bad);
    // A zero-width space, a Hangul filler, a figure space, the blank Braille pattern.
    for (const blank of ['\u200b', '\u3164', '\u2007', '\u2800']) {
      const invisible = await post(JSON.stringify({ email: `zo${blank}e@example.com` }));
      expect(invisible.body.error.fields).toEqual({
        email:
          'Enter the address without invisible or control characters: it would show as another one.',
      });
    }
    // A role given as null is a role given, and not one of them.
    const nullRole = await post(JSON.stringify({ email: uniqueEmail('null-role'), role: null }));
    expect(nullRole.status).toBe(422);
    expect(nullRole.body.error.fields).toEqual({ role: expect.stringContaining('member, admin') });
    contract.expectMatches('POST', '/api/v1/team/invitations', nullRole);
    // Names every object inherits are unknown fields like any other, not passed over.
    const inherited = await post(
      '{"email":"not an address","constructor":1,"__proto__":{"x":1},"toString":"x","foo":1}',
    );
    expect([inherited.status, inherited.body.error.fields]).toEqual([
      422,
      {
        email: 'Enter a valid email address.',
        foo: 'foo is not a field of this request.',
        constructor: 'constructor is not a field of this request.',
        // Computed, so that it is a field of this object, not its prototype.
        ['__proto__']: '__proto__ is not a field of this request.',
        toString: 'toString is not a field of this request.',
      },
    ]);
    const empty = await request(t.server)
      .post('/api/v1/team/invitations')
      .set('Authorization', auth);
    expect(empty.body.error.fields).toHaveProperty('email');

    const form = await post('email=a@example.com', 'application/x-www-form-urlencoded');
    expect([form.status, form.body.error.code]).toEqual([415, 'unsupported_media_type']);
    contract.expectMatches('POST', '/api/v1/team/invitations', form);
    const large = await post(JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(17_000) }));
    expect([large.status, large.body.error.code]).toEqual([413, 'payload_too_large']);
    contract.expectMatches('POST', '/api/v1/team/invitations', large);
    const broken = await post('{"email": ');
    expect([broken.status, broken.body.error.code]).toEqual([400, 'bad_request']);
    contract.expectMatches('POST', '/api/v1/team/invitations', broken);
    // Text that is not Unicode (a lone surrogate) in a value or a key: no field could hold it.
    for (const body of ['{"email":"\\ud800@x.test"}', '{"email":"a@x.test","\\udc00":1}']) {
      const surrogate = await post(body);
      expect([surrogate.status, surrogate.body.error]).toEqual([
        400,
        {
          code: 'bad_request',
          message: 'The body has text that is not Unicode (a lone surrogate, such as \\ud800).',
        },
      ]);
      contract.expectMatches('POST', '/api/v1/team/invitations', surrogate);
    }
    const list = await request(t.server)
      .post('/api/v1/team/invitations')
      .set('Authorization', auth)
      .send([1]);
    expect([list.status, list.body.error.fields]).toEqual([
      422,
      { body: 'The body must be a JSON object.' },
    ]);
    // JSON that is not an object is no object either, not malformed JSON.
    for (const scalar of ['null', '1', '"x"', 'true']) {
      const res = await post(scalar);
      expect([scalar, res.status, res.body.error.fields]).toEqual([
        scalar,
        422,
        { body: 'The body must be a JSON object.' },
      ]);
    }

    for (const query of [
      'limit=0',
      'limit=101',
      'limit=ten',
      'cursor=!!',
      'cursor=bWVtYmVyczox',
      // "invitations:0" and "invitations:02": no page gives either.
      `cursor=${Buffer.from('invitations:0').toString('base64url')}`,
      `cursor=${Buffer.from('invitations:02').toString('base64url')}`,
      // "invitations:1" spelt with other trailing bits than a page gives (…MQ is the page's).
      'cursor=aW52aXRhdGlvbnM6MR',
      'sort=name',
    ]) {
      const res = await request(t.server)
        .get(`/api/v1/team/invitations?${query}`)
        .set('Authorization', auth);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
        query,
        status: 422,
        code: 'validation_failed',
      });
    }
    // Nothing was invited by any of them.
    expect(await t.mail.find({ to: 'a@example.com' })).toHaveLength(0);
    // An endpoint that takes no parameters ignores its query string (docs/api.md).
    const current = await request(t.server)
      .get('/api/v1/team?sort=name')
      .set('Authorization', auth);
    expect([current.status, current.body.data?.slug]).toEqual([200, acme.slug]);
  });

  it('should invite a mailbox once however its address is written, in the form mail carries', async () => {
    const { owner, tokenOf } = await team();
    const auth = `Bearer ${await tokenOf(owner)}`;
    const local = uniqueEmail('idn').split('@')[0];
    const invite = (email: string) =>
      request(t.server)
        .post('/api/v1/team/invitations')
        .set('Authorization', auth)
        .send({ email, role: 'member' });

    const first = await invite(`${local.toUpperCase()}@BÜCHER.example`);
    expect([first.status, first.body.data?.email]).toEqual([201, `${local}@xn--bcher-kva.example`]);
    for (const email of [`${local}@xn--bcher-kva.example`, `${local}@bu\u0308cher.example`]) {
      const again = await invite(email);
      expect([email, again.status, again.body.error?.code]).toEqual([
        email,
        409,
        'already_invited',
      ]);
    }
    // 159 characters as typed, 289 as stored: refused by its stored length, not by the database.
    const long = await invite(`${'a'.repeat(64)}@${Array(13).fill('中文中文中文').join('.')}.com`);
    expect([long.status, long.body.error.fields]).toEqual([
      422,
      { email: 'email is at most 255 characters.' },
    ]);
  });

  it('should give the first answer again for the same Idempotency-Key and body, and refuse the key with another body', async () => {
    const { acme, owner, tokenOf } = await team();
    const auth = `Bearer ${await tokenOf(owner)}`;
    const email = uniqueEmail('once');
    const send = (body: object, key = 'invite-once-0001') =>
      request(t.server)
        .post('/api/v1/team/invitations')
        .set('Authorization', auth)
        .set('Idempotency-Key', key)
        .send(body);

    const first = await send({ email, role: 'member' });
    expect(first.status).toBe(201);
    // The same body written in another order is the same request.
    const again = await send({ role: 'member', email });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const other = await send({ email: uniqueEmail('other'), role: 'member' });
    expect([other.status, other.body.error.code]).toEqual([422, 'idempotency_key_reused']);
    contract.expectMatches('POST', '/api/v1/team/invitations', other);
    // A refusal is an answer too: given again, and acted on once.
    const dup = await send({ email, role: 'admin' }, 'invite-twice-0001');
    const dupAgain = await send({ email, role: 'admin' }, 'invite-twice-0001');
    expect([dup.status, dup.body.error.code]).toEqual([409, 'already_invited']);
    expect(dupAgain.body).toEqual(dup.body);
    // A key of another person is theirs alone.
    const admin = await createUser(t.app);
    await addMember(t.app, acme.id, admin, 'admin');
    const theirs = await request(t.server)
      .post('/api/v1/team/invitations')
      .set(
        'Authorization',
        `Bearer ${(await createToken(t.app, admin, { abilities: EVERY_ABILITY, teamId: acme.id })).plaintext}`,
      )
      .set('Idempotency-Key', 'invite-once-0001')
      .send({ email: uniqueEmail('theirs') });
    expect(theirs.status).toBe(201);
    // The same request from the owner's token in another team is another request: refused,
    // not answered with Acme's invitation, and nothing is invited there.
    const elsewhere = await createTeam(t.app, owner, 'Elsewhere');
    const fromElsewhere = await request(t.server)
      .post('/api/v1/team/invitations')
      .set(
        'Authorization',
        `Bearer ${(await createToken(t.app, owner, { abilities: EVERY_ABILITY, teamId: elsewhere.id })).plaintext}`,
      )
      .set('Idempotency-Key', 'invite-once-0001')
      .send({ email, role: 'member' });
    expect([fromElsewhere.status, fromElsewhere.body.error?.code]).toEqual([
      422,
      'idempotency_key_reused',
    ]);
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: elsewhere.id })).toBe(
      0,
    );

    const bad = await request(t.server)
      .post('/api/v1/team/invitations')
      .set('Authorization', auth)
      .set('Idempotency-Key', 'k'.repeat(256))
      .send({ email: uniqueEmail() });
    expect(bad.status).toBe(422);
    expect(bad.body.error.fields).toHaveProperty('Idempotency-Key');
    // Any printable ASCII is a key, spaces included; a control character is not.
    const spaced = await request(t.server)
      .post('/api/v1/team/invitations')
      .set('Authorization', auth)
      .set('Idempotency-Key', 'order 42 / attempt 1')
      .send({ email: uniqueEmail('spaced') });
    expect(spaced.status).toBe(201);
    const tab = await request(t.server)
      .post('/api/v1/team/invitations')
      .set('Authorization', auth)
      .set('Idempotency-Key', 'order\t42')
      .send({ email: uniqueEmail() });
    expect([tab.status, Object.keys(tab.body.error.fields)]).toEqual([422, ['Idempotency-Key']]);

    expect(
      await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: acme.id, email }),
    ).toBe(1);
    await waitFor(() => t.mail.find({ to: email }).length === 1);
  });

  it('should read every member once, in a stable order, while members join between the pages (next and Link agree)', async () => {
    const { acme, owner, client } = await team();
    for (let i = 0; i < 4; i++) await addMember(t.app, acme.id, await createUser(t.app));
    const before = Object.keys(await rolesIn(t, acme.id)).map(Number);
    expect(before).toHaveLength(7);
    const api = await client(owner);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.GET('/api/v1/team/members', {
        params: { query: { limit: 3, cursor } },
      });
      expect(res.response.status).toBe(200);
      seen.push(...res.data!.data.map((m) => m.id));
      const next = res.data!.next;
      const link = res.response.headers.get('link');
      if (next) {
        expect(link).toBe(
          `<http://localhost:3000/api/v1/team/members?limit=3&cursor=${next}>; rel="next"`,
        );
      } else expect(link).toBeNull();
      cursor = next ?? undefined;
      // Someone joins after each page.
      if (pages++ < 2) await addMember(t.app, acme.id, await createUser(t.app));
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    for (const id of before) expect(seen).toContain(id);

    // The audit log, newest first, neither repeats nor skips while events are recorded.
    const log: number[] = [];
    const auditPage = (from?: string) =>
      api.GET('/api/v1/team/audit-log', { params: { query: { limit: 2, cursor: from } } });
    cursor = undefined;
    let first = true;
    do {
      const res = await auditPage(cursor);
      log.push(...res.data!.data.map((e) => e.id));
      cursor = res.data!.next ?? undefined;
      if (first) await addMember(t.app, acme.id, await createUser(t.app));
      first = false;
    } while (cursor);
    expect(new Set(log).size).toBe(log.length);
    expect(log).toEqual([...log].sort((a, b) => b - a));
    const all = await t.dataSource.getRepository(AuditEvent).countBy({ teamId: acme.id });
    expect(log.length).toBe(all - 1);
    // A person's own kinds are in no team's log: refused, as the description says.
    for (const kind of ['sign-in', 'account']) {
      const refused = await api.GET('/api/v1/team/audit-log', {
        params: { query: { kind: kind as never } },
      });
      expect([refused.response.status, refused.error?.error.fields]).toEqual([
        422,
        { kind: 'kind must be one of: token, team, service_account, webhook.' },
      ]);
    }
  });

  it('should answer a GET with an ETag, 304 without a body while it holds, and a new one once the list changed', async () => {
    const { acme, owner, tokenOf } = await team();
    const auth = `Bearer ${await tokenOf(owner)}`;
    const get = (path: string, tag?: string) => {
      const req = request(t.server).get(path).set('Authorization', auth);
      return tag ? req.set('If-None-Match', tag) : req;
    };
    for (const path of ['/api/v1/team/members', '/api/v1/team', '/api/v1/user/profile']) {
      const first = await get(path);
      const tag = first.headers.etag as string;
      expect(tag).toMatch(/^W\/".+"$/);
      const same = await get(path, tag);
      expect({ path, status: same.status, text: same.text, etag: same.headers.etag }).toEqual({
        path,
        status: 304,
        text: '',
        etag: tag,
      });
      expect((await get(path, '"something else"')).status).toBe(200);
    }
    const tag = (await get('/api/v1/team/members')).headers.etag as string;
    await addMember(t.app, acme.id, await createUser(t.app));
    const changed = await get('/api/v1/team/members', tag);
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
  });

  it('should answer 503 with Retry-After, and change nothing, when the same change keeps losing to others', async () => {
    const { acme, owner, member, tokenOf } = await team();
    // Each try is rolled back by a conflict (another node's write certified first, a deadlock).
    const conflict = new QueryFailedError(
      'UPDATE team_members SET role = ?',
      [],
      Object.assign(
        new Error('Deadlock found when trying to get lock; try restarting transaction'),
        {
          code: 'ER_LOCK_DEADLOCK',
          errno: 1213,
        },
      ),
    );
    const teams = t.app.get(TeamsRepository);
    jest.spyOn(teams, 'setRole').mockRejectedValue(conflict);
    let res: request.Response;
    try {
      res = await request(t.server)
        .patch(`/api/v1/team/members/${member.id}`)
        .set('Authorization', `Bearer ${await tokenOf(owner)}`)
        .send({ role: 'admin' });
    } finally {
      jest.restoreAllMocks();
    }
    contract.expectMatches('PATCH', '/api/v1/team/members/{id}', res);
    expect([res.status, res.headers['retry-after'], res.body.error.code]).toEqual([
      503,
      '1',
      'service_unavailable',
    ]);
    expect(res.body.error.message).toContain('Try again in a moment.');
    expect((await rolesIn(t, acme.id))[member.id]).toBe('member');
  });
});

describe('the team API on two instances', () => {
  let deployment: Instances;
  /** Writes rolled back by a conflict (a deadlock) and run again, on either instance. */
  let retried = 0;

  beforeAll(async () => {
    deployment = await startInstances(2, {
      RATE_LIMIT_API_PER_TOKEN: '100000',
      RATE_LIMIT_TEAM_INVITES_PER_HOUR: '1000',
    });
    for (const instance of deployment.apps) {
      instance.app.get(Transactions).onRetry(() => retried++);
    }
  });
  afterAll(async () => {
    await deployment?.close();
  });

  /** A new team's owner's token, with every ability, made on the first instance. */
  async function ownerToken(): Promise<{ teamId: number; plaintext: string }> {
    const { app } = deployment.first;
    const owner = await createUser(app);
    const team = await createTeam(app, owner);
    const { plaintext } = await createToken(app, owner, {
      abilities: EVERY_ABILITY,
      teamId: team.id,
    });
    return { teamId: team.id, plaintext };
  }

  it('should invite once, and say the rest are invited already, of the same invitation sent to both instances at once', async () => {
    const { first } = deployment;
    const { plaintext } = await ownerToken();
    const email = uniqueEmail('same');
    const answers = await burst(30, deployment.servers, (_i, server) =>
      request(server)
        .post('/api/v1/team/invitations')
        .set('Authorization', `Bearer ${plaintext}`)
        .send({ email }),
    );
    expect(tally(answers, (res) => `${res.status} ${res.body.error?.code ?? 'created'}`)).toEqual({
      '201 created': 1,
      '409 already_invited': 29,
    });
    expect(await first.dataSource.getRepository(TeamInvitation).countBy({ email })).toBe(1);
  });

  it("should invite each of many addresses sent to both instances at once, with no invitation's write rolled back by another's", async () => {
    const { first } = deployment;
    const { teamId, plaintext } = await ownerToken();
    const emails = Array.from({ length: 40 }, (_, i) => uniqueEmail(`many-${i}`));
    const before = retried;
    const answers = await burst(emails.length, deployment.servers, (i, server) =>
      request(server)
        .post('/api/v1/team/invitations')
        .set('Authorization', `Bearer ${plaintext}`)
        .send({ email: emails[i] }),
    );
    expect(tally(answers, (res) => String(res.status))).toEqual({ '201': emails.length });
    // No invitation waited on another's lock of an empty range of the index, nor deadlocked.
    expect(retried - before).toBe(0);
    expect(await first.dataSource.getRepository(TeamInvitation).countBy({ teamId })).toBe(
      emails.length,
    );
  });

  it('should renew once, of the same invitation sent to both instances at once, one whose sender can no longer invite', async () => {
    const { first } = deployment;
    const { app } = first;
    const owner = await createUser(app);
    const team = await createTeam(app, owner);
    const admin = await createUser(app);
    await addMember(app, team.id, admin, 'admin');
    const tokenOf = async (user: User) =>
      `Bearer ${(await createToken(app, user, { abilities: EVERY_ABILITY, teamId: team.id })).plaintext}`;
    const [ownerAuth, adminAuth] = [await tokenOf(owner), await tokenOf(admin)];
    const email = uniqueEmail('renewed');
    const invite = (server: (typeof deployment.servers)[number], auth: string) =>
      request(server).post('/api/v1/team/invitations').set('Authorization', auth).send({ email });
    expect((await invite(deployment.servers[0], adminAuth)).status).toBe(201);
    // The admin becomes a member: their invitation stands no more, and a new one replaces it.
    const demoted = await request(deployment.servers[1])
      .patch(`/api/v1/team/members/${admin.id}`)
      .set('Authorization', ownerAuth)
      .send({ role: 'member' });
    expect(demoted.status).toBe(200);
    const answers = await burst(20, deployment.servers, (_i, server) => invite(server, ownerAuth));
    expect(tally(answers, (res) => `${res.status} ${res.body.error?.code ?? 'renewed'}`)).toEqual({
      '201 renewed': 1,
      '409 already_invited': 19,
    });
    const [invitation] = await first.dataSource
      .getRepository(TeamInvitation)
      .findBy({ teamId: team.id, email });
    expect(invitation.invitedById).toBe(owner.id);
    // The first link and the one renewal's: no more.
    await deployment.mail.waitFor({ to: email });
    await waitFor(() => deployment.mail.find({ to: email }).length >= 2);
    for (const instance of deployment.apps) await instance.app.get(Scheduler).drain();
    expect(deployment.mail.find({ to: email })).toHaveLength(2);
  });

  it('should act once for a burst of the same Idempotency-Key sent to both instances at once', async () => {
    const { first } = deployment;
    const { teamId, plaintext } = await ownerToken();
    const email = uniqueEmail('burst');
    const answers = await burst(12, deployment.servers, (_i, server) =>
      request(server)
        .post('/api/v1/team/invitations')
        .set('Authorization', `Bearer ${plaintext}`)
        .set('Idempotency-Key', 'burst-key-0001')
        .send({ email }),
    );
    const counts = tally(answers, (res) => `${res.status} ${res.body.error?.code ?? 'created'}`);
    // Each either got the one answer, or was told the first was still under way.
    expect(
      Object.keys(counts).every((k) => ['201 created', '409 idempotency_key_in_use'].includes(k)),
    ).toBe(true);
    const created = answers.filter((res) => res.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((res) => res.body.data.id)).size).toBe(1);
    // Asked again once the first has answered, every instance gives its answer.
    for (const server of deployment.servers) {
      const again = await request(server)
        .post('/api/v1/team/invitations')
        .set('Authorization', `Bearer ${plaintext}`)
        .set('Idempotency-Key', 'burst-key-0001')
        .send({ email });
      expect(again.status).toBe(201);
      expect(again.body.data.id).toBe(created[0].body.data.id);
    }
    expect(await first.dataSource.getRepository(TeamInvitation).countBy({ email })).toBe(1);
    // Whichever instance made the invitation writes its security log entry.
    for (const app of deployment.apps) await app.app.get(Scheduler).drain();
    expect(
      await first.dataSource
        .getRepository(AuditEvent)
        .countBy({ teamId, event: 'team.member_invited' }),
    ).toBe(1);
    await deployment.mail.waitFor({ to: email });
    expect(deployment.mail.find({ to: email })).toHaveLength(1);
  });
});
