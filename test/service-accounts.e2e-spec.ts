import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, sign } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { PasswordHasher } from '../src/auth/password-hasher.js';
import { runCli } from '../src/cli/run-cli.js';
import { ManualClock } from '../src/clock/clock.js';
import { keyIdentifierOf } from '../src/config/token-report-keys.js';
import { Transactions } from '../src/database/transactions.js';
import { OneTimeLinks } from '../src/one-time-links/one-time-links.service.js';
import { Passkey } from '../src/passkeys/passkey.entity.js';
import { PasskeyUserHandle } from '../src/passkeys/passkey-user-handle.entity.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { Team } from '../src/teams/team.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenExpiryReminders } from '../src/tokens/token-expiry-reminders.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createTeam, uniqueEmail } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { newTokenValueIn, visibleText } from './support/html.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { startInstances, type Instances } from './support/instances.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { turnOnTwoFactor } from './support/two-factor.js';
import { SoftAuthenticator } from './support/webauthn.js';
import { WebClient } from './support/web-client.js';

const api = (server: Server, path: string, token: string) =>
  request(server).get(path).set('Authorization', `Bearer ${token}`);

const LIMIT = 3;

const list = (teamId: number) => `/teams/${teamId}/service-accounts`;

/** Making service accounts and their tokens on the team's pages, as its owners and admins do. */
const pages = {
  list,
  /** Creates one from the list page; its id, from where the answer leads. */
  async create(by: SignedInPerson, teamId: number, name: string, description = '') {
    const res = await by.client.submit(list(teamId), list(teamId), { name, description });
    const id = /\/service-accounts\/(\d+)$/.exec(res.headers.location ?? '')?.[1];
    if (res.status !== 303 || !id) {
      throw new Error(`no service account made: ${res.status} ${res.headers.location}`);
    }
    return Number(id);
  },
  /** Gives it a token on its page; the answer and the value it shows once. */
  async token(
    by: SignedInPerson,
    teamId: number,
    accountId: number,
    fields: Record<string, string | string[]> = {},
  ) {
    const page = `${list(teamId)}/${accountId}`;
    const res = await by.client.submit(page, `${page}/tokens`, {
      name: 'ci',
      abilities: ['user:read', 'team:read'],
      expires_in_days: '30',
      ...fields,
    });
    return { res, value: res.status === 200 ? newTokenValueIn(res.text) : undefined };
  },
};

describe('service accounts', () => {
  const clock = new ManualClock();
  let d: Instances;
  let t: TestApp;
  let a: Server;
  let b: Server;

  beforeAll(async () => {
    d = await startInstances(
      2,
      { RATE_LIMIT_ENABLED: 'false', SERVICE_ACCOUNTS_PER_TEAM: String(LIMIT) },
      { clock },
    );
    t = d.first;
    [a, b] = d.servers;
  });
  afterAll(async () => {
    await d.close();
  });

  const drain = () => Promise.all(d.apps.map((app) => app.app.get(Scheduler).drain()));

  /** Acme, owned by Olive, with Adam as admin and Mia as member. */
  async function acme(name = 'Acme') {
    const owner = await signedInPerson(t, { name: 'Olive Owner' });
    const admin = await signedInPerson(t, { name: 'Adam Admin' });
    const member = await signedInPerson(t, { name: 'Mia Member' });
    const team = await createTeam(t.app, owner.user, name);
    await addMember(t.app, team.id, admin.user, 'admin');
    await addMember(t.app, team.id, member.user, 'member');
    return { owner, admin, member, team };
  }

  it("should be made on the team's page, given a token shown once, and answer the API as itself: a service account of its team, with an address under .invalid", async () => {
    const { admin, team } = await acme();
    const accountId = await pages.create(admin, team.id, 'deploy-bot', 'Deploys from CI');
    const page = await admin.client.textOf(`/teams/${team.id}/service-accounts/${accountId}`);
    expect(page).toContain('deploy-bot service account');
    expect(page).toContain('Deploys from CI');
    expect(page).toContain('has no active token');
    // Its name is the team's alone whatever its case; a description shows as it reads.
    for (const [fields, said] of [
      [{ name: 'Deploy-Bot' }, 'The team has a service account of that name.'],
      [{ name: 'ｄｅｐｌｏｙ-ｂｏｔ' }, 'The team has a service account of that name.'],
      [
        { name: 'other', description: 'Deploys \u202egnp.exe' },
        'The description must be printable text, without control or invisible characters.',
      ],
    ] as const) {
      const refused = await admin.client.submit(list(team.id), list(team.id), fields);
      expect(refused.headers.location).toBe(list(team.id));
      expect(await admin.client.textOf(list(team.id))).toContain(said);
    }
    expect(await t.dataSource.getRepository(User).countBy({ serviceAccountTeamId: team.id })).toBe(
      1,
    );

    const { res, value } = await pages.token(admin, team.id, accountId);
    expect(res.status).toBe(200);
    expect(visibleText(res.text)).toContain('Copy it now.');
    // Shown once: the page read again has its name, not its value.
    const again = await admin.client.get(`/teams/${team.id}/service-accounts/${accountId}`);
    expect(again.text).not.toContain(value!);
    expect(visibleText(again.text)).toContain('ci');

    const profile = await api(b, '/api/v1/user/profile', value!);
    expect(profile.status).toBe(200);
    expect(profile.body.data).toEqual({
      id: accountId,
      name: 'deploy-bot',
      email: `deploy-bot-${accountId}@team-${team.id}.service-accounts.invalid`,
      type: 'service_account',
    });
    const own = await api(b, '/api/v1/team', value!);
    expect(own.body.data).toEqual({ id: team.id, name: 'Acme', slug: team.slug });
    const token = await api(b, '/api/v1/token', value!);
    expect(token.body.data).toMatchObject({ binding: 'pinned', team_refusal: null });

    // A row of users that no one signs in to, pinned tokens made by Adam.
    const row = await t.dataSource.getRepository(User).findOneByOrFail({ id: accountId });
    expect(row).toMatchObject({ passwordHash: null, serviceAccountTeamId: team.id });
    const [stored] = await t.dataSource.getRepository(PersonalAccessToken).findBy({
      userId: accountId,
    });
    expect(stored.createdById).toBe(admin.user.id);
    // A person's profile says so too.
    const person = await signedInPerson(t);
    const personal = await person.client.submit('/settings/api-tokens', '/settings/api-tokens', {
      name: 'mine',
      abilities: 'user:read',
      expires_in_days: '30',
    });
    const mine = newTokenValueIn(personal.text);
    expect((await api(a, '/api/v1/user/profile', mine)).body.data.type).toBe('person');
  });

  it('should keep its token working on the other instance after its maker is demoted, removed and deleted, and the team transferred', async () => {
    const { owner, admin, member, team } = await acme();
    const accountId = await pages.create(admin, team.id, 'deploy-bot');
    const { value } = await pages.token(admin, team.id, accountId);
    const works = async () => (await api(b, '/api/v1/team', value!)).status;
    expect(await works()).toBe(200);

    const demoted = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${admin.user.id}/role`,
      { role: 'member' },
    );
    expect(demoted.status).toBe(303);
    expect(await works()).toBe(200);

    const removed = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/members/${admin.user.id}/remove`,
    );
    expect(removed.status).toBe(303);
    expect(await works()).toBe(200);

    const deleted = await admin.client.submit('/settings/profile', '/settings/account/delete', {
      password: admin.password,
    });
    expect(deleted.status).toBe(303);
    expect(await t.dataSource.getRepository(User).findOneBy({ id: admin.user.id })).toBeNull();
    expect(await works()).toBe(200);
    // Its maker is gone; the token stays, said to be made by no one now.
    const [token] = await t.dataSource.getRepository(PersonalAccessToken).findBy({
      userId: accountId,
    });
    expect(token.createdById).toBeNull();

    const transferred = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/transfer`,
      { user_id: String(member.user.id) },
    );
    expect(transferred.status).toBe(303);
    expect((await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).ownerId).toBe(
      member.user.id,
    );
    expect(await works()).toBe(200);
    expect((await api(a, '/api/v1/user/profile', value!)).body.data.type).toBe('service_account');
  });

  it('should refuse its tokens on the other instance from the next request once the account, or its team, is deleted', async () => {
    const { owner, team } = await acme();
    const accountId = await pages.create(owner, team.id, 'deploy-bot');
    const { value } = await pages.token(owner, team.id, accountId);
    expect((await api(b, '/api/v1/team', value!)).status).toBe(200);

    const deleted = await owner.client.submit(
      `/teams/${team.id}/service-accounts/${accountId}`,
      `/teams/${team.id}/service-accounts/${accountId}/delete`,
    );
    expect([deleted.status, deleted.headers.location]).toEqual([
      303,
      `/teams/${team.id}/service-accounts`,
    ]);
    const refused = await api(b, '/api/v1/team', value!);
    expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_token']);
    expect(
      await t.dataSource.getRepository(PersonalAccessToken).countBy({ userId: accountId }),
    ).toBe(0);
    expect(
      (await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).serviceAccountCount,
    ).toBe(0);

    // Deleting the team takes its service accounts and their tokens.
    const other = await createTeam(t.app, owner.user, 'Short-lived');
    const botId = await pages.create(owner, other.id, 'cron');
    const { value: cron } = await pages.token(owner, other.id, botId);
    expect((await api(b, '/api/v1/team', cron!)).status).toBe(200);
    const gone = await owner.client.submit(`/teams/${other.id}`, `/teams/${other.id}/delete`);
    expect(gone.status).toBe(303);
    const after = await api(b, '/api/v1/team', cron!);
    expect([after.status, after.body.error.code]).toEqual([401, 'invalid_token']);
    expect(await t.dataSource.getRepository(User).findOneBy({ id: botId })).toBeNull();
  });

  it("should hold its tokens to the team's policy and the deployment's: lifetime and abilities when made and on the API; two-factor sign-in, which it cannot have, is asked of its makers", async () => {
    const { owner, admin, team } = await acme();
    await turnOnTwoFactor(t, owner);
    const accountId = await pages.create(owner, team.id, 'deploy-bot');
    const { value } = await pages.token(owner, team.id, accountId, {
      abilities: ['user:read', 'team:read'],
    });
    const saved = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/policy`, {
      require_two_factor: 'on',
      token_max_lifetime_days: '30',
      abilities_listed: 'on',
      allowed_abilities: 'team:read',
    });
    expect(saved.status).toBe(303);

    // Two-factor sign-in is a person's; the team's other rules apply to the service account.
    expect((await api(b, '/api/v1/team', value!)).status).toBe(200);
    const profile = await api(b, '/api/v1/user/profile', value!);
    expect([profile.status, profile.body.error.code]).toEqual([403, 'ability_not_allowed_by_team']);

    const page = `/teams/${team.id}/service-accounts/${accountId}`;
    const form = await owner.client.get(page);
    expect(form.text).toContain('value="team:read"');
    expect(form.text).not.toContain('value="user:read"');
    expect(form.text).not.toContain('value="90"');
    const before = await t.dataSource.getRepository(PersonalAccessToken).countBy({
      userId: accountId,
    });
    const tooLong = await pages.token(owner, team.id, accountId, {
      abilities: 'team:read',
      expires_in_days: '90',
    });
    expect([tooLong.res.status, tooLong.res.headers.location]).toEqual([303, page]);
    const refusedPage = (await owner.client.get(page)).text;
    expect(visibleText(refusedPage)).toContain('Acme allows tokens of at most 30 days.');
    // The expiry's select is marked and read with the message.
    expect(/<select id="expires"[^>]*>/.exec(refusedPage)![0]).toMatch(
      /aria-describedby="expires-hint expires_in_days-error" aria-invalid="true"/,
    );
    const notAllowed = await pages.token(owner, team.id, accountId, { abilities: 'user:read' });
    expect(notAllowed.res.status).toBe(303);
    expect(await owner.client.textOf(page)).toContain('Acme does not allow tokens "user:read".');
    expect(
      await t.dataSource.getRepository(PersonalAccessToken).countBy({ userId: accountId }),
    ).toBe(before);

    // Adam has no second factor: in a team that requires it, he makes no token that outlives him.
    const refused = await pages.token(admin, team.id, accountId, { abilities: 'team:read' });
    expect(refused.res.status).toBe(303);
    expect(await admin.client.textOf(page)).toContain('Acme requires two-factor sign-in');
    const ok = await pages.token(owner, team.id, accountId, { abilities: 'team:read' });
    expect(ok.res.status).toBe(200);
    expect((await api(a, '/api/v1/team', ok.value!)).status).toBe(200);
  });

  it('should give its tokens none of the abilities only a member can use, and tell a token holding one that a service account is not a member, not that its team does not exist', async () => {
    const { owner, team } = await acme();
    const accountId = await pages.create(owner, team.id, 'roster-bot');
    const page = `/teams/${team.id}/service-accounts/${accountId}`;
    const form = await owner.client.get(page);
    for (const offered of ['user:read', 'team:read', 'tokens:introspect']) {
      expect([offered, form.text.includes(`value="${offered}"`)]).toEqual([offered, true]);
    }
    const membersOnly = ['members:read', 'members:write', 'tokens:read', 'audit:read'];
    for (const withheld of membersOnly) {
      expect([withheld, form.text.includes(`value="${withheld}"`)]).toEqual([withheld, false]);
    }
    const asked = await pages.token(owner, team.id, accountId, {
      abilities: ['team:read', 'members:write'],
    });
    expect([asked.res.status, asked.res.headers.location]).toEqual([303, page]);
    expect(await owner.client.textOf(page)).toContain(
      'A service account is not a member of its team: its tokens cannot have "members:write".',
    );
    expect(
      await t.dataSource.getRepository(PersonalAccessToken).countBy({ userId: accountId }),
    ).toBe(0);

    // A token given them before they were withheld: refused, saying why, on every such route.
    const { value } = await pages.token(owner, team.id, accountId, { abilities: 'team:read' });
    await t.dataSource
      .getRepository(PersonalAccessToken)
      .update({ userId: accountId }, { abilities: ['team:read', ...membersOnly] });
    const contract = await OpenApiContract.fetch(b);
    const sends: [string, string, () => request.Test][] = [
      ['GET', '/api/v1/team/members', () => api(b, '/api/v1/team/members', value!)],
      ['GET', '/api/v1/team/invitations', () => api(b, '/api/v1/team/invitations', value!)],
      ['GET', '/api/v1/team/tokens', () => api(b, '/api/v1/team/tokens', value!)],
      ['GET', '/api/v1/team/audit-log', () => api(b, '/api/v1/team/audit-log', value!)],
      [
        'POST',
        '/api/v1/team/invitations',
        () =>
          request(b)
            .post('/api/v1/team/invitations')
            .set('Authorization', `Bearer ${value}`)
            .send({ email: uniqueEmail('roster') }),
      ],
      [
        'DELETE',
        '/api/v1/team/members/{id}',
        () =>
          request(b)
            .delete(`/api/v1/team/members/${accountId}`)
            .set('Authorization', `Bearer ${value}`),
      ],
    ];
    for (const [method, path, send] of sends) {
      const res = await send();
      expect([path, res.status, res.body.error?.code, res.body.error?.message]).toEqual([
        path,
        403,
        'forbidden',
        expect.stringContaining('A service account is not a member of its team'),
      ]);
      contract.expectMatches(method, path, res);
    }
    expect((await api(b, '/api/v1/team', value!)).body.data.id).toBe(team.id);

    // A team that allows only what a service account cannot use: the page says so.
    const saved = await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/policy`, {
      abilities_listed: 'on',
      allowed_abilities: 'members:read',
    });
    expect(saved.status).toBe(303);
    expect(await owner.client.textOf(page)).toContain(
      'Acme allows tokens none of the abilities a service account can use',
    );
  });

  it("should be the business of the team's owners and admins only: a member is refused, anyone else finds nothing, and making one asks for the password", async () => {
    const { owner, member, team } = await acme();
    const accountId = await pages.create(owner, team.id, 'deploy-bot');
    const stranger = await signedInPerson(t);
    for (const path of [
      `/teams/${team.id}/service-accounts`,
      `/teams/${team.id}/service-accounts/${accountId}`,
    ]) {
      expect((await member.client.get(path)).status).toBe(403);
      expect((await stranger.client.get(path)).status).toBe(404);
    }
    const csrf = await member.client.csrfFrom(`/teams/${team.id}`);
    const made = await member.client.post(`/teams/${team.id}/service-accounts`, csrf, {
      name: 'sneaky',
    });
    expect(made.status).toBe(403);
    const deleted = await member.client.post(
      `/teams/${team.id}/service-accounts/${accountId}/delete`,
      csrf,
    );
    expect(deleted.status).toBe(403);
    // Another team's id for this account finds nothing.
    const elsewhere = await createTeam(t.app, stranger.user, 'Elsewhere');
    expect(
      (await stranger.client.get(`/teams/${elsewhere.id}/service-accounts/${accountId}`)).status,
    ).toBe(404);
    expect(await t.dataSource.getRepository(User).countBy({ serviceAccountTeamId: team.id })).toBe(
      1,
    );

    // The password typed more than 15 minutes ago: it is asked first, then the form goes on.
    forgetPasswordConfirmation(clock);
    const asked = await owner.client.submit(
      `/teams/${team.id}/service-accounts`,
      `/teams/${team.id}/service-accounts`,
      { name: 'release-bot' },
    );
    expect(asked.status).toBe(303);
    expect(asked.headers.location).toMatch(/^\/confirm-password\?return_to=/);
    const confirmed = await owner.client.submit(asked.headers.location, '/confirm-password', {
      password: owner.password,
      return_to: `/teams/${team.id}/service-accounts`,
    });
    expect(confirmed.status).toBe(303);
    const resumed = await owner.client.resume();
    expect(resumed.status).toBe(303);
    expect(
      await t.dataSource.getRepository(User).findOneBy({
        serviceAccountTeamId: team.id,
        name: 'release-bot',
      }),
    ).not.toBeNull();
  });

  it('should let nothing sign in as a service account: not a password, a reset link, a passkey, an invitation, nor its address registered or taken', async () => {
    const { owner, team } = await acme();
    const accountId = await pages.create(owner, team.id, 'deploy-bot');
    const account = await t.dataSource.getRepository(User).findOneByOrFail({ id: accountId });
    const signedIn = async (client: WebClient) => (await client.get('/dashboard')).status === 200;

    // A password planted on its row signs nothing in.
    const hash = await t.app.get(PasswordHasher).hash('planted password');
    await t.dataSource.getRepository(User).update({ id: accountId }, { passwordHash: hash });
    const visitor = new WebClient(a, t.mail);
    const login = await visitor.login(account.email, 'planted password');
    expect(login.headers.location).not.toBe('/dashboard');
    expect(await signedIn(visitor)).toBe(false);

    // A reset asked for its address mails nothing; a link planted for it sets nothing.
    const asked = await visitor.submit('/forgot-password', '/forgot-password', {
      email: account.email,
    });
    expect(asked.status).toBe(303);
    await drain();
    expect(t.mail.find({ to: account.email })).toEqual([]);
    const link = await t.app
      .get(Transactions)
      .run((m) => t.app.get(OneTimeLinks).issue(m, accountId, 'reset_password', 3_600_000));
    const reset = await visitor.submit(`/reset-password/${link}`, `/reset-password/${link}`, {
      password: 'a new password here',
      password_confirmation: 'a new password here',
    });
    expect([404, 410]).toContain(reset.status);
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: accountId })).passwordHash,
    ).toBe(hash);

    // A passkey planted on it (one of a person's, moved to its account) signs nothing in.
    const person = await signedInPerson(t);
    const authenticator = SoftAuthenticator.create();
    const csrf = await person.client.csrfFrom('/settings/security');
    const options = await person.client.post('/settings/passkeys/options', csrf);
    const origin = new URL(t.config.app.publicUrl).origin;
    const credential = JSON.stringify(authenticator.register(options.body, origin));
    expect((await person.client.post('/settings/passkeys', csrf, { credential })).status).toBe(303);
    await t.dataSource
      .getRepository(Passkey)
      .update({ userId: person.user.id }, { userId: accountId });
    await t.dataSource
      .getRepository(PasskeyUserHandle)
      .update({ userId: person.user.id }, { userId: accountId });
    const passkeyVisitor = new WebClient(a, t.mail);
    const loginCsrf = await passkeyVisitor.csrfFrom('/login');
    const challenge = await passkeyVisitor.post('/login/passkey/options', loginCsrf);
    const answer = JSON.stringify(authenticator.authenticate(challenge.body, origin));
    const byPasskey = await passkeyVisitor.post('/login/passkey', loginCsrf, {
      credential: answer,
    });
    expect(byPasskey.headers.location).not.toBe('/dashboard');
    expect(await signedIn(passkeyVisitor)).toBe(false);

    // Its address (anything under .invalid) cannot be invited, registered, or moved to.
    const invited = await owner.client.submit(
      `/teams/${team.id}`,
      `/teams/${team.id}/invitations`,
      {
        email: account.email,
        role: 'member',
      },
    );
    expect(invited.status).toBe(303);
    expect(await owner.client.textOf(`/teams/${team.id}`)).toContain(
      'Addresses under .invalid receive no mail',
    );
    const registering = new WebClient(a, t.mail);
    const registered = await registering.submit('/register', '/register', {
      name: 'Impostor',
      email: account.email,
      password: 'correct horse battery',
      password_confirmation: 'correct horse battery',
    });
    expect(registered.headers.location).toBe('/register');
    expect(await registering.textOf('/register')).toContain(
      'Addresses under .invalid receive no mail',
    );
    await owner.client.submit('/settings/profile', '/settings/profile', {
      name: owner.user.name,
      email: account.email,
    });
    expect(await owner.client.textOf('/settings/profile')).toContain(
      'Addresses under .invalid receive no mail',
    );
    expect(await t.dataSource.getRepository(User).countBy({ email: account.email })).toBe(1);
    const invitationsFor = await t.dataSource.query(
      'SELECT COUNT(*) AS n FROM team_invitations WHERE email = ?',
      [account.email],
    );
    expect(Number(invitationsFor[0].n)).toBe(0);
  });

  it("should name it in the members list, the token inventory and the team's audit log", async () => {
    const { owner, admin, member, team } = await acme();
    const accountId = await pages.create(admin, team.id, 'deploy-bot');
    await pages.token(admin, team.id, accountId, { name: 'ci' });
    await drain();

    const members = await member.client.textOf(`/teams/${team.id}`);
    expect(members).toContain('deploy-bot');
    expect(members).toContain('service account');
    const inventory = await owner.client.textOf(`/teams/${team.id}/tokens`);
    expect(inventory).toContain('deploy-bot service account made by Adam Admin');
    const log = await owner.client.textOf(`/teams/${team.id}/audit-log`);
    expect(log).toContain('Service account created');
    expect(log).toMatch(/Token created .*service account deploy-bot/);
    expect(log).toContain('Adam Admin');
    const events = await t.dataSource.getRepository(AuditEvent).findBy({ teamId: team.id });
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['service_account.created', 'token.created']),
    );

    // The inventory's owner and admins revoke its tokens there, as they do on its page.
    const [token] = await t.dataSource.getRepository(PersonalAccessToken).findBy({
      userId: accountId,
    });
    const revoked = await admin.client.submit(
      `/teams/${team.id}/tokens`,
      `/teams/${team.id}/tokens/${token.id}/revoke`,
    );
    expect(revoked.status).toBe(303);
    expect(
      (await t.dataSource.getRepository(PersonalAccessToken).findOneByOrFail({ id: token.id }))
        .revokedAt,
    ).not.toBeNull();
  });

  it("should not go in silence with its team when the team's only member deletes their account", async () => {
    const owner = await signedInPerson(t, { name: 'Solo Owner' });
    const team = await createTeam(t.app, owner.user, 'Solo');
    const accountId = await pages.create(owner, team.id, 'nightly');
    const { value } = await pages.token(owner, team.id, accountId);
    const refused = await owner.client.submit('/settings/profile', '/settings/account/delete', {
      password: owner.password,
    });
    expect(refused.status).toBe(303);
    expect(await owner.client.textOf('/settings/profile')).toContain(
      'You own the team Solo, which has other members or service accounts.',
    );
    expect((await api(b, '/api/v1/team', value!)).status).toBe(200);
    // The team deleted on purpose first, the account goes.
    await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/delete`);
    const deleted = await owner.client.submit('/settings/profile', '/settings/account/delete', {
      password: owner.password,
    });
    expect(deleted.headers.location).toBe('/login');
    expect(await t.dataSource.getRepository(User).findOneBy({ id: owner.user.id })).toBeNull();
  });

  it('should make no more than the limit of a team, of creations sent at once to two instances', async () => {
    const { owner, team } = await acme();
    const [onA, onB] = owner.client.onEach(d.servers);
    const csrf = await owner.client.csrfFrom(`/teams/${team.id}/service-accounts`);
    const answers = await burst(20, d.servers, (i, server) =>
      (server === a ? onA : onB).post(`/teams/${team.id}/service-accounts`, csrf, {
        name: `bot-${i}`,
      }),
    );
    expect(tally(answers, (r) => String(r.status))).toEqual({ '303': 20 });
    const made = await t.dataSource.getRepository(User).countBy({ serviceAccountTeamId: team.id });
    expect(made).toBe(LIMIT);
    expect(
      (await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).serviceAccountCount,
    ).toBe(LIMIT);
    const created = answers.filter((r) => /\/service-accounts\/\d+$/.test(r.headers.location));
    expect(created).toHaveLength(LIMIT);
    expect(await owner.client.textOf(`/teams/${team.id}/service-accounts`)).toContain(
      `A team may have at most ${LIMIT} service accounts`,
    );
  });

  it('should delete once, record once and refuse the rest, of deletions sent at once to two instances', async () => {
    const { owner, team } = await acme();
    const accountId = await pages.create(owner, team.id, 'deploy-bot');
    const { value } = await pages.token(owner, team.id, accountId);
    const page = `/teams/${team.id}/service-accounts/${accountId}`;
    const [onA, onB] = owner.client.onEach(d.servers);
    const csrf = await owner.client.csrfFrom(page);
    const answers = await burst(20, d.servers, (_, server) =>
      (server === a ? onA : onB).post(`${page}/delete`, csrf),
    );
    expect(tally(answers, (r) => String(r.status))).toEqual({ '303': 1, '404': 19 });
    await drain();
    const recorded = await t.dataSource
      .getRepository(AuditEvent)
      .countBy({ teamId: team.id, event: 'service_account.deleted' });
    expect(recorded).toBe(1);
    expect(
      (await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).serviceAccountCount,
    ).toBe(0);
    expect((await api(b, '/api/v1/team', value!)).status).toBe(401);
  });

  it('should be made and given a token from the command line, whose last lines are its id and the token', async () => {
    const { owner, team } = await acme();
    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(args, {
        env: { NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: t.database.url },
        out: (line) => out.push(line),
        err: (line) => err.push(line),
      });
      return { code, out, err };
    };
    const made = await cli('service-account:create', '--team', team.slug, '--name', 'nightly');
    expect(made).toMatchObject({ code: 0, err: [] });
    const accountId = Number(made.out.at(-1));
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: accountId }))
        .serviceAccountTeamId,
    ).toBe(team.id);

    const token = await cli(
      'token:create',
      '--service-account',
      String(accountId),
      '--name',
      'cron',
      '--abilities',
      'team:read',
      '--expires-in-days',
      '7',
    );
    expect(token).toMatchObject({ code: 0, err: [] });
    const value = token.out.at(-1)!;
    expect((await api(b, '/api/v1/team', value)).body.data.id).toBe(team.id);
    const [stored] = await t.dataSource.getRepository(PersonalAccessToken).findBy({
      userId: accountId,
    });
    expect(stored).toMatchObject({ abilities: ['team:read'], lifetimeDays: 7, createdById: null });
    const membersOnly = await cli(
      'token:create',
      '--service-account',
      String(accountId),
      '--name',
      'roster',
      '--abilities',
      'members:read',
    );
    expect([membersOnly.code, membersOnly.err]).toEqual([
      1,
      [expect.stringContaining('A service account is not a member of its team')],
    ]);

    // Its address names no person: commands acting as a person refuse it.
    const address = (await t.dataSource.getRepository(User).findOneByOrFail({ id: accountId }))
      .email;
    const asPerson = await cli('token:create', '--email', address, '--name', 'x');
    expect(asPerson.code).not.toBe(0);
    expect(asPerson.err.join('\n')).toContain('is a service account');
    const passwordLink = await cli('user:password-link', '--email', address);
    expect([passwordLink.code, passwordLink.err.at(-1)]).toEqual([
      1,
      `error: ${address} is a service account, which signs in with no password.`,
    ]);
    expect(passwordLink.out).toEqual([]);
    const both = await cli(
      'token:create',
      '--service-account',
      String(accountId),
      '--email',
      owner.email,
      '--name',
      'x',
    );
    expect(both.code).not.toBe(0);

    // Its tokens are listed as acting in its team, to which they are pinned.
    const listed = await cli('token:list', '--email', address);
    expect(listed.code).toBe(0);
    expect(
      listed.out.slice(1).map((line) => line.split('\t').slice(1, 3).concat(line.split('\t')[6])),
    ).toEqual([['cron', 'active', `${team.name} only`]]);
  });
});

describe("service accounts' mail", () => {
  let t: TestApp;
  const clock = new ManualClock();
  const scanner = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

  beforeAll(async () => {
    t = await createTestApp(
      {
        RATE_LIMIT_ENABLED: 'false',
        TOKEN_REPORT_PUBLIC_KEYS: scanner.publicKey.export({
          type: 'spki',
          format: 'pem',
        }) as string,
      },
      { clock },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it("should send its expiry reminders and leak notices to the team's owners and admins, never to its address", async () => {
    const owner = await signedInPerson(t, { name: 'Olive Owner', email: uniqueEmail('olive') });
    const admin = await signedInPerson(t, { name: 'Adam Admin', email: uniqueEmail('adam') });
    const member = await signedInPerson(t, { name: 'Mia Member', email: uniqueEmail('mia') });
    const team = await createTeam(t.app, owner.user, 'Acme');
    await addMember(t.app, team.id, admin.user, 'admin');
    await addMember(t.app, team.id, member.user, 'member');
    const accountId = await pages.create(admin, team.id, 'deploy-bot');
    const { value } = await pages.token(admin, team.id, accountId, {
      name: 'ci',
      expires_in_days: '30',
    });
    const created = "A token was created for one of your team's service accounts";
    await t.mail.waitForCount({ subject: created }, 2);
    const address = (await t.dataSource.getRepository(User).findOneByOrFail({ id: accountId }))
      .email;

    clock.advance(24 * 86_400_000);
    await t.app.get(TokenExpiryReminders).run();
    const subject = /^The token "ci" of the service account deploy-bot expires in \d days$/;
    const reminders = await t.mail.waitForCount({ subject }, 2);
    expect(reminders.flatMap((m) => m.to).sort()).toEqual([admin.email, owner.email].sort());
    expect(reminders[0].text).toContain(`/teams/${team.id}/service-accounts/${accountId}`);

    const body = JSON.stringify([
      { token: value, type: 'tessera', url: 'https://example.com/leak', source: 'content' },
    ]);
    const report = await request(t.server)
      .post('/security/token-reports')
      .set('Github-Public-Key-Identifier', keyIdentifierOf(scanner.publicKey))
      .set(
        'Github-Public-Key-Signature',
        sign('sha256', Buffer.from(body), scanner.privateKey).toString('base64'),
      )
      .set('Content-Type', 'application/json')
      .send(body);
    expect(report.status).toBe(200);
    const leaked = await t.mail.waitForCount(
      { subject: "A token of one of your team's service accounts was found in public and revoked" },
      2,
    );
    expect(leaked.flatMap((m) => m.to).sort()).toEqual([admin.email, owner.email].sort());
    expect(leaked[0].text).toContain('https://example.com/leak');
    await t.app.get(Scheduler).drain();
    expect(t.mail.find({ to: address })).toEqual([]);
    expect(t.mail.find({ to: member.email, subject })).toEqual([]);
    expect((await api(t.server, '/api/v1/team', value!)).status).toBe(401);
  });
});
