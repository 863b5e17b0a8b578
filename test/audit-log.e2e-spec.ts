import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { Session } from '../src/auth/session.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { AUDIT_EVENTS, type AuditEventName } from '../src/audit/audit-events.js';
import { runCli } from '../src/cli/run-cli.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { TokenExpiryReminders } from '../src/tokens/token-expiry-reminders.js';
import { addMember, createTeam, createToken, uniqueEmail } from './factories/index.js';
import { NEW_TOKEN_VALUE, newTokenValueIn, visibleText } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { PASSWORD, signedInPerson, type SignedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { sleep, waitFor } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';

const LOG = '/settings/security-log';
const DAY_MS = 86_400_000;

/** The event names a log page lists, newest first. */
const namesOn = (html: string) => [...html.matchAll(/data-event="([^"]+)"/g)].map((m) => m[1]);

describe('security log and team audit log', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    // Behind a proxy on loopback, so a token can be used from several addresses.
    t = await createTestApp(
      { RATE_LIMIT_ENABLED: 'false', TRUST_PROXY: 'loopback', LOG_LEVEL: 'warn' },
      { logs },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const events = () => t.dataSource.getRepository(AuditEvent);
  /** The person's own log, as its page lists it. */
  const ownLog = async (person: SignedInPerson, query = '') => {
    const res = await person.client.get(`${LOG}${query}`);
    expect(res.status).toBe(200);
    return { names: namesOn(res.text), text: visibleText(res.text), html: res.text };
  };
  const rowsOf = async (userId: number, event: AuditEventName) => {
    await t.app.get(AuditLog).flush();
    return events().find({ where: { userId, event }, order: { id: 'ASC' } });
  };

  it('should record signing in, a wrong password and signing out, with address and browser, in the account’s log only', async () => {
    const person = await signedInPerson(t, { name: 'Signe Inn' });
    const other = await signedInPerson(t);
    const stranger = new WebClient(t.server);
    const _csrf = await stranger.csrfFrom('/login');
    const refused = await stranger.agent
      .post('/login')
      .type('form')
      .set('User-Agent', 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0')
      .send({ email: person.email, password: 'not the password', _csrf });
    expect(refused.headers.location).toBe('/login');

    const log = await ownLog(person);
    expect(log.names.slice(0, 2)).toEqual(['sign-in.failed', 'sign-in.succeeded']);
    expect(log.text).toContain('Sign-in refused');
    expect(log.text).toContain('Someone not signed in');
    expect(log.text).toContain('reason wrong password');
    expect(log.text).toContain('from 127.0.0.1 · Firefox 133 on Linux');
    expect((await ownLog(other)).names).toEqual(['sign-in.succeeded', 'account.created']);

    const [signIn] = await rowsOf(person.user.id, 'sign-in.succeeded');
    expect(signIn).toMatchObject({
      actorUserId: person.user.id,
      actorKind: 'user',
      ip: '127.0.0.1',
    });
    expect(signIn.sessionHandle).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The session's id, which would sign anyone in, is nowhere in the log.
    const sessions = await t.dataSource.getRepository(Session).findBy({ userId: person.user.id });
    expect(sessions.length).toBeGreaterThan(0);
    const logged = JSON.stringify(await events().find());
    for (const session of sessions) expect(logged).not.toContain(session.id);

    await person.client.submit('/dashboard', '/logout');
    await person.client.login(person.email, PASSWORD);
    expect((await ownLog(person)).names.slice(0, 2)).toEqual([
      'sign-in.succeeded',
      'sign-in.signed_out',
    ]);
  });

  it('should record an account made by signing up, and its address confirmed', async () => {
    const email = uniqueEmail('signed-up');
    const client = new WebClient(t.server, t.mail);
    await client.register('Sig Nupp', email, PASSWORD);
    const res = await client.get(LOG);
    expect(namesOn(res.text)).toEqual([
      'account.email_confirmed',
      'sign-in.succeeded',
      'account.created',
    ]);
    const text = visibleText(res.text);
    expect(text).toContain('Account created');
    expect(text).toContain('via sign-up address confirmed no');
    expect(text).toContain('E-mail address confirmed');
  });

  it('should record changes to the account: password, address, sessions, two-factor, a reset', async () => {
    const person = await signedInPerson(t, { name: 'Cha Nges' });
    const elsewhere = new WebClient(t.server, t.mail);
    await elsewhere.login(person.email, PASSWORD);

    await person.client.submit('/settings/sessions', '/settings/sessions/revoke-others', {
      password: PASSWORD,
    });
    await person.client.submit('/settings/password', '/settings/password', {
      current_password: PASSWORD,
      password: 'a brand new passphrase',
      password_confirmation: 'a brand new passphrase',
    });
    const newEmail = uniqueEmail('moved');
    await person.client.submit('/settings/profile', '/settings/profile', {
      name: 'Cha Nges',
      email: newEmail,
    });
    const change = await t.mail.waitFor({ to: newEmail });
    const link = TestSmtpServer.linkPath(change, '/settings/profile/email/');
    expect((await person.client.submit(link, link)).status).toBeLessThan(400);
    await person.client.submit('/settings/security', '/settings/two-factor');
    const setup = await person.client.get('/settings/two-factor');
    expect(setup.status).toBe(200);

    const { names, text } = await ownLog(person);
    expect(names).toEqual(
      expect.arrayContaining([
        'account.session_revoked',
        'account.password_changed',
        'account.email_change_requested',
        'account.email_changed',
      ]),
    );
    expect(text).toContain(`to ${newEmail}`);
    expect(text).toContain('sessions 1');

    const forgot = new WebClient(t.server, t.mail);
    await forgot.submit('/forgot-password', '/forgot-password', { email: newEmail });
    const reset = await t.mail.waitFor({ to: newEmail, subject: /reset/i });
    const resetPath = TestSmtpServer.linkPath(reset, '/reset-password/');
    await forgot.submit(resetPath, resetPath, {
      password: 'yet another passphrase',
      password_confirmation: 'yet another passphrase',
    });
    expect(await rowsOf(person.user.id, 'account.password_reset')).toHaveLength(1);
    // Nothing typed, and no link's secret, is kept.
    const all = JSON.stringify(await events().findBy({ userId: person.user.id }));
    for (const secret of ['a brand new passphrase', 'yet another passphrase', PASSWORD]) {
      expect(all).not.toContain(secret);
    }
    expect(all).not.toContain(resetPath.split('/').pop());
    expect(all).not.toContain(link.split('/').pop());
  });

  it('should record a token’s life: created, edited, regenerated, used from a new address, refused, revoked', async () => {
    const person = await signedInPerson(t, { name: 'Toke Nowner' });
    const { value, id } = await person.client.createTokenOnPage({
      name: 'CI deploy',
      abilities: 'user:read',
      expires_in_days: '30',
    });
    const tokenPage = `/settings/api-tokens/${id}`;
    await person.client.submit(tokenPage, tokenPage, {
      name: 'CI deploy 2',
      abilities: 'user:read',
    });

    const api = (token: string, ip: string) =>
      request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${token}`)
        .set('X-Forwarded-For', ip)
        .set('User-Agent', 'deploy-script/2.1');
    expect((await api(value, '198.51.100.20')).status).toBe(200);
    expect((await api(value, '198.51.100.20')).status).toBe(200);
    expect((await api(value, '198.51.100.21')).status).toBe(200);
    await t.app.get(TokenUsageRecorder).flush();

    const regenerated = await person.client.submit(tokenPage, `${tokenPage}/regenerate`);
    const newValue = newTokenValueIn(regenerated.text);
    // The old value, refused again and again: one event a minute.
    for (let i = 0; i < 5; i++) expect((await api(value, '203.0.113.5')).status).toBe(401);
    await person.client.submit('/settings/api-tokens', `/settings/api-tokens/${id}/revoke`);
    expect((await api(newValue, '203.0.113.5')).status).toBe(401);
    await t.app.get(TokenUsageRecorder).flush();

    const { names, text } = await ownLog(person, '?kind=token');
    // Newest first by when each happened: the old value was refused before the revocation,
    // though its refusal was written after it (with the minute's usage).
    expect(names).toEqual([
      'token.revoked',
      'token.refused',
      'token.regenerated',
      'token.new_ip',
      'token.new_ip',
      'token.updated',
      'token.created',
    ]);
    expect(text).toContain('Token used from a new address');
    expect(text).toContain('from 198.51.100.21 · deploy-script 2.1');
    // In words: the token by its name, the reason as a sentence would say it.
    expect(text).toContain('reason it was revoked');
    expect(text).toContain('token CI deploy 2 previous name CI deploy');
    expect(text).toContain('You, with the token “CI deploy 2”');
    expect(text).not.toMatch(/API token \d|token id/);

    // The filtered log, every event of it, as JSON lines in the order they happened.
    const download = await person.client.get(`${LOG}/export?kind=token`);
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(download.headers['content-disposition']).toBe(
      'attachment; filename="security-log.jsonl"',
    );
    const lines = download.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; occurred_at: string; token_id: number });
    // The same events as the page, by when they happened: the old value was refused before
    // the revocation, though its refusal was written after (with the minute's usage).
    expect(lines.map((l) => l.event).sort()).toEqual([...names].sort());
    expect(lines.map((l) => l.event).slice(-2)).toEqual(['token.refused', 'token.revoked']);
    const times = lines.map((l) => l.occurred_at);
    expect([...times].sort()).toEqual(times);
    expect(lines.every((l) => l.token_id === id)).toBe(true);
    expect(download.text).not.toContain(value);
    expect((await ownLog(person, '?kind=token')).html).toContain(
      `href="${LOG}/export?kind&#x3D;token" download`,
    );
    const rows = JSON.stringify(await events().findBy({ userId: person.user.id }));
    expect(rows).not.toContain(value);
    expect(rows).not.toContain(newValue);
  });

  it('should record a team’s events, show them to its owner and admins only, and each person’s own in their log', async () => {
    const owner = await signedInPerson(t, { name: 'Olga Owner' });
    const admin = await signedInPerson(t, { name: 'Adam Admin' });
    const plain = await signedInPerson(t, { name: 'Mia Member' });
    const outsider = await signedInPerson(t, { name: 'Otto Outside' });
    const created = await owner.client.submit('/teams', '/teams', { name: 'Audit Co' });
    expect(created.status).toBe(303);
    const teamId = (
      await t.dataSource
        .getRepository(Team)
        .findOneByOrFail({ ownerId: owner.user.id, personal: false })
    ).id;
    const teamPage = `/teams/${teamId}`;
    await owner.client.submit(teamPage, teamPage, { name: 'Audit Company' });
    await owner.client.submit(teamPage, `${teamPage}/invitations`, {
      email: admin.email,
      role: 'admin',
    });
    const invitation = await t.mail.waitFor({ to: admin.email, subject: /invited/i });
    const link = TestSmtpServer.linkPath(invitation, '/invitations/');
    await admin.client.submit(link, `${link}/accept`);
    await addMember(t.app, teamId, plain.user);
    await owner.client.submit(teamPage, `${teamPage}/members/${plain.user.id}/role`, {
      role: 'admin',
    });
    await owner.client.submit(teamPage, `${teamPage}/members/${plain.user.id}/role`, {
      role: 'member',
    });
    await admin.client.submit(teamPage, `${teamPage}/members/${plain.user.id}/remove`);

    const auditLog = `${teamPage}/audit-log`;
    expect((await plain.client.get(auditLog)).status).toBe(404);
    await addMember(t.app, teamId, plain.user);
    expect((await plain.client.get(auditLog)).status).toBe(403);
    expect((await outsider.client.get(auditLog)).status).toBe(404);

    const page = await admin.client.get(auditLog);
    expect(page.status).toBe(200);
    expect(namesOn(page.text)).toEqual([
      'team.member_joined',
      'team.member_removed',
      'team.role_changed',
      'team.role_changed',
      'team.member_joined',
      'team.member_joined',
      'team.member_invited',
      'team.renamed',
      'team.created',
    ]);
    const text = visibleText(page.text);
    expect(text).toContain('An operator (command line)');
    expect(text).toContain('Olga Owner (');
    expect(text).toContain('role admin');
    expect(text).toContain('previous role member');
    expect(text).toContain('via invitation');
    // Its filter offers what a team's log holds: nothing of signing in or account settings.
    const offered = [...page.text.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);
    expect(offered).toEqual(['', 'token', 'team', 'service_account', 'webhook']);
    const own = (await admin.client.get('/settings/security-log')).text;
    expect([...own.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1])).toEqual([
      '',
      'sign-in',
      'account',
      'token',
      'team',
      'service_account',
      'webhook',
    ]);

    // The member removed sees it in their own log; the outsider sees nothing of the team.
    expect((await ownLog(plain)).names).toContain('team.member_removed');
    expect((await ownLog(outsider)).names.filter((n) => n.startsWith('team.'))).toEqual([]);

    await plain.client.submit(teamPage, `${teamPage}/leave`);
    await owner.client.submit(teamPage, `${teamPage}/transfer`, { user_id: String(admin.user.id) });
    await admin.client.submit(teamPage, `${teamPage}/delete`);
    expect((await ownLog(admin)).names.slice(0, 2)).toEqual([
      'team.deleted',
      'team.ownership_transferred',
    ]);
    expect((await ownLog(plain)).names[0]).toBe('team.member_left');
    // Once the team is gone, so is its page: the log stays in the people's own.
    expect((await admin.client.get(auditLog)).status).toBe(404);
  });

  it('should filter by kind, page through older events, and refuse a filter it does not know', async () => {
    const person = await signedInPerson(t);
    const team = await createTeam(t.app, person.user, 'Many Events');
    for (let i = 0; i < 60; i++) {
      t.app.get(AuditLog).record(Actors.person(person.user.id), {
        event: 'team.renamed',
        teamId: team.id,
        detail: { name: `Name ${i}` },
      });
    }
    const first = await ownLog(person);
    expect(first.names).toHaveLength(50);
    expect(first.text).toContain('name Name 59');
    const older = /href="([^"]+)" rel="next"/
      .exec(first.html)![1]
      .replaceAll('&amp;', '&')
      .replaceAll('&#x3D;', '=');
    expect(older).toMatch(/^\/settings\/security-log\?before=\d+$/);
    const second = await ownLog(person, older.slice(LOG.length));
    // The 10 other renames, the team's creation, the sign-in and the account's creation.
    expect(second.names).toHaveLength(13);
    expect(second.text).toContain('name Name 0');
    expect(second.html).not.toContain('rel="next"');

    const signIns = await ownLog(person, '?kind=sign-in');
    expect(signIns.names).toEqual(['sign-in.succeeded']);
    expect(signIns.html).toMatch(/<option value="sign-in" selected>/);

    for (const bad of ['?kind=everything', '?kind=token&kind=team', '?before=abc', '?before=0']) {
      const res = await person.client.get(`${LOG}${bad}`);
      expect(res.status).toBe(422);
      expect(visibleText(res.text)).toMatch(/kind must be one of|before must be an event number/);
      // A way on: the log as it is with no filter.
      expect(res.text).toContain(
        `<a class="button" href="${LOG}">Show this page without filters</a>`,
      );
      // Its download refused likewise is a page, leading to the log, not a file.
      const download = await person.client.get(`${LOG}/export${bad}`);
      expect(download.status).toBe(422);
      expect(download.headers['content-type']).toMatch(/^text\/html/);
      expect(download.headers['content-disposition']).toBeUndefined();
      expect(download.text).toContain(
        `<a class="button" href="${LOG}">Show this page without filters</a>`,
      );
    }
  });

  it('should make no change it cannot record, keep a sign-in it could not record yet, and say so in the server log', async () => {
    const person = await signedInPerson(t);
    await t.app.get(AuditLog).flush();
    const signInsBefore = (await rowsOf(person.user.id, 'sign-in.succeeded')).length;
    await t.dataSource.query('ALTER TABLE audit_events RENAME TO audit_events_gone');
    try {
      // A change and its entry commit together: without the log, the change is not made.
      const refused = await person.client.submit('/settings/api-tokens', '/settings/api-tokens', {
        name: 'not without its entry',
        abilities: 'user:read',
        expires_in_days: '30',
      });
      expect(refused.status).toBe(500);
      expect(visibleText(refused.text)).toContain('Sorry, that did not work');
      expect(refused.text).not.toMatch(/audit_events|QueryFailedError|\bat \w+ \(/);
      expect(NEW_TOKEN_VALUE.test(refused.text)).toBe(false);
      // What is no change is recorded off its path: signing in works, its entry waits.
      const elsewhere = new WebClient(t.server);
      expect((await elsewhere.login(person.email, PASSWORD)).headers.location).toBe('/dashboard');
      await t.app.get(AuditLog).flush();
      expect(logs.text).toContain('Could not write the security log');
    } finally {
      await t.dataSource.query('ALTER TABLE audit_events_gone RENAME TO audit_events');
    }
    const tokens = t.dataSource.getRepository(PersonalAccessToken);
    expect(await tokens.countBy({ userId: person.user.id, name: 'not without its entry' })).toBe(0);
    // Tried again: the sign-in's entry is not lost to a short outage.
    await waitFor(
      async () => (await rowsOf(person.user.id, 'sign-in.succeeded')).length > signInsBefore,
      { intervalMs: 200 },
    );
    const made = await person.client.submit('/settings/api-tokens', '/settings/api-tokens', {
      name: 'not without its entry',
      abilities: 'user:read',
      expires_in_days: '30',
    });
    expect(made.status).toBe(200);
    expect(await rowsOf(person.user.id, 'token.created')).toHaveLength(1);
  });

  it('should name every event kind it records', () => {
    for (const name of Object.keys(AUDIT_EVENTS))
      expect(name).toMatch(/^(sign-in|account|token|team|service_account|webhook)\.[a-z_]+$/);
  });

  it('should show a member neither the address nor the browser of the admin when an admin acted on them', async () => {
    const owner = await signedInPerson(t, { name: 'Olive Owner' });
    const admin = await signedInPerson(t, { name: 'Adam Admin' });
    const member = await signedInPerson(t, { name: 'Mia Member' });
    const team = await createTeam(t.app, owner.user, 'Watched');
    await addMember(t.app, team.id, admin.user, 'admin');
    await addMember(t.app, team.id, member.user, 'member');
    const csrf = await admin.client.csrfFrom(`/teams/${team.id}`);
    const removed = await admin.client
      .post(`/teams/${team.id}/members/${member.user.id}/remove`, csrf)
      .set('X-Forwarded-For', '203.0.113.77')
      .set('User-Agent', 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0');
    expect(removed.status).toBe(303);
    await t.app.get(AuditLog).flush();

    const own = visibleText((await member.client.get('/settings/security-log')).text);
    expect(own).toContain('Adam Admin');
    expect(own).not.toContain('203.0.113.77');
    expect(own).not.toContain('Firefox');
    const teamLog = visibleText((await owner.client.get(`/teams/${team.id}/audit-log`)).text);
    expect(teamLog).toContain('203.0.113.77');
    expect(teamLog).toContain('Firefox');
    // The admin's own log shows their own address, as ever.
    expect(visibleText((await admin.client.get('/settings/security-log')).text)).toContain(
      '203.0.113.77',
    );
  });
});

describe('security log on the command line', () => {
  let t: TestApp;
  let db: TestDatabase;

  beforeAll(async () => {
    // A database file, so the commands (another connection) see what the app wrote.
    db = await createTestDatabase({ file: true });
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { database: db });
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  const events = () => t.dataSource.getRepository(AuditEvent);

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

  it('should export events as JSON lines, for one account or one team, and prune those past retention', async () => {
    const person = await signedInPerson(t, { email: uniqueEmail('export') });
    const team = await createTeam(t.app, person.user, 'Exported');
    await createToken(t.app, person.user, { name: 'exported token' });
    await t.app.get(AuditLog).flush();

    const mine = await cli('audit:export', '--since', '2020-01-01', '--user', person.email);
    expect(mine.err).toEqual([]);
    expect(mine.code).toBe(0);
    const lines = mine.out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.event)).toEqual([
      'account.created',
      'sign-in.succeeded',
      'team.created',
      'token.created',
    ]);
    expect(lines[0]).toMatchObject({
      actor: { kind: 'operator', user_id: null },
      detail: { via: 'command line', address_confirmed: true },
    });
    expect(lines[3]).toMatchObject({
      actor: { kind: 'operator', user_id: null },
      user_id: person.user.id,
      target: { type: 'token' },
      detail: { name: 'exported token', abilities: 'user:read team:read' },
    });
    expect(lines[0].occurred_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const teamLines = await cli(
      'audit:export',
      '--since',
      '2020-01-01T00:00:00Z',
      '--team',
      team.slug,
    );
    expect(teamLines.out.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual([
      'team.created',
    ]);
    const none = await cli(
      'audit:export',
      '--since',
      '2099-01-01',
      '--user',
      String(person.user.id),
    );
    expect(none.out).toEqual([]);
    // In the order things happened, also when one was written after a later one.
    const early = events().create({
      occurredAt: new Date(Date.now() - 60 * DAY_MS),
      event: 'token.new_ip',
      actorKind: 'token',
      actorUserId: person.user.id,
      userId: person.user.id,
    });
    await events().save(early);
    const ordered = await cli('audit:export', '--since', '2020-01-01', '--user', person.email);
    const orderedLines = ordered.out.map((l) => JSON.parse(l) as { event: string; id: number });
    expect(orderedLines[0]).toMatchObject({ event: 'token.new_ip', id: Number(early.id) });
    await events().delete({ id: early.id });
    // Days that do not exist are refused, not rolled over into the next month.
    for (const since of ['yesterday', '2026-02-30', '2026-11-31', '2026-11-31T10:00:00Z']) {
      const bad = await cli('audit:export', '--since', since);
      expect([since, bad.code, bad.out]).toEqual([since, 1, []]);
      expect(bad.err).toEqual([expect.stringContaining('--since must be a date (YYYY-MM-DD)')]);
    }

    const old = events().create({
      occurredAt: new Date(Date.now() - 400 * DAY_MS),
      event: 'sign-in.succeeded',
      actorKind: 'user',
      actorUserId: person.user.id,
      userId: person.user.id,
    });
    await events().save(old);
    const pruned = await cli('audit:prune');
    expect(pruned.code).toBe(0);
    expect(pruned.out.join('\n')).toMatch(/^Deleted [1-9]\d* events? from before /);
    expect(await events().findOneBy({ id: old.id })).toBeNull();
    expect(await events().countBy({ userId: person.user.id, event: 'token.created' })).toBe(1);
  });
});

describe('token expiry reminders', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  const tokens = () => t.dataSource.getRepository(PersonalAccessToken);
  /** Moves the token's lifetime back in time, so it ends `leftMs` from now. */
  const endIn = async (id: number, leftMs: number, lifetimeDays = 30) => {
    const expiresAt = new Date(Date.now() + leftMs);
    const startedAt = new Date(expiresAt.getTime() - lifetimeDays * DAY_MS);
    const { regeneratedAt } = await tokens().findOneByOrFail({ id });
    await tokens().update(
      { id },
      { expiresAt, createdAt: startedAt, ...(regeneratedAt ? { regeneratedAt: startedAt } : {}) },
    );
  };
  const remindersTo = (email: string) => t.mail.find({ to: email, subject: /expires/ });
  const run = () => t.app.get(TokenExpiryReminders).run();
  const settle = async () => {
    await t.app.get(AuditLog).flush();
    await sleep(300);
  };

  it('should mail a reminder a week before and one on the day, each once, linking to the token’s page', async () => {
    const person = await signedInPerson(t, { name: 'Remi Nder' });
    const { token } = await createToken(t.app, person.user, { name: 'nightly', expiresInDays: 30 });
    expect((await run()).reminded).toBe(0);

    await endIn(token.id, 6 * DAY_MS + 3_600_000);
    const [first, again] = await Promise.all([run(), run()]);
    expect(first.reminded + again.reminded).toBe(1);
    const week = await t.mail.waitFor({ to: person.email, subject: /expires in 7 days/ });
    expect(week.subject).toBe('Your API token "nightly" expires in 7 days');
    expect(week.links).toContain(`${t.config.app.publicUrl}/settings/api-tokens/${token.id}`);
    expect(week.text).toContain('regenerate it');
    expect((await run()).reminded).toBe(0);

    await endIn(token.id, 5 * 3_600_000);
    expect((await run()).reminded).toBe(1);
    const today = await t.mail.waitFor({ to: person.email, subject: /within a day/ });
    expect(today.subject).toBe('Your API token "nightly" expires within a day');
    expect((await run()).reminded).toBe(0);
    await settle();
    expect(remindersTo(person.email)).toHaveLength(2);

    // The token's page, where the link leads, offers Regenerate.
    const page = await person.client.get(`/settings/api-tokens/${token.id}`);
    expect(visibleText(page.text)).toContain('Regenerate');

    await endIn(token.id, -60_000);
    expect((await run()).expired).toBe(1);
    expect((await run()).expired).toBe(0);
    await settle();
    const log = await person.client.get('/settings/security-log?kind=token');
    // Each reminder is logged when it was sent. The expiry is dated when the token expired (a
    // minute ago here, before its creation was logged: the spec moved the token's times back,
    // not its events).
    expect(namesOn(log.text)).toEqual([
      'token.expiry_reminded',
      'token.expiry_reminded',
      'token.created',
      'token.expired',
    ]);
    expect(visibleText(log.text)).toContain('Tessera');
  });

  it('should start over after a regeneration, and send nothing for revoked or short-lived tokens', async () => {
    const person = await signedInPerson(t);
    const { token } = await createToken(t.app, person.user, { name: 'rotated', expiresInDays: 30 });
    await endIn(token.id, 3 * DAY_MS);
    expect((await run()).reminded).toBe(1);
    await person.client.submit(
      `/settings/api-tokens/${token.id}`,
      `/settings/api-tokens/${token.id}/regenerate`,
    );
    expect((await tokens().findOneByOrFail({ id: token.id })).expiryNotices).toBe(0);
    await endIn(token.id, 2 * DAY_MS);
    expect((await run()).reminded).toBe(1);

    const revoked = await createToken(t.app, person.user, { name: 'revoked', expiresInDays: 30 });
    await endIn(revoked.token.id, DAY_MS / 2);
    await person.client.submit(
      '/settings/api-tokens',
      `/settings/api-tokens/${revoked.token.id}/revoke`,
    );
    // Made for three days: no "expires in 3 days" the moment it is made.
    const short = await createToken(t.app, person.user, { name: 'short', expiresInDays: 3 });
    expect((await run()).reminded).toBe(0);
    await settle();
    expect(remindersTo(person.email).map((m) => m.subject)).toEqual([
      'Your API token "rotated" expires in 3 days',
      'Your API token "rotated" expires in 2 days',
    ]);
    expect((await tokens().findOneByOrFail({ id: short.token.id })).expiryNotices).toBe(1);
  });
});
