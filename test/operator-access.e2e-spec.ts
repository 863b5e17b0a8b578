import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { Actors } from '../src/common/actor.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { runCli } from '../src/cli/run-cli.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { runBuilt, type RunResult } from './support/run-built.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import { WebClient } from './support/web-client.js';

/**
 * What an operator does to a person's access from the command line (disable, enable, reset
 * two-factor sign-in), seen where the person meets it: the pages, the API, their mailbox, and
 * their security log. The commands run against the app's own database.
 */
describe('operator access commands', () => {
  let db: TestDatabase;
  let t: TestApp;
  const env = () => ({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    APP_URL: 'http://localhost:3000',
  });
  const cli = async (...args: string[]): Promise<RunResult> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, {
      env: env(),
      out: (line) => out.push(`${line}\n`),
      err: (line) => err.push(`${line}\n`),
    });
    return { code, stdout: out.join(''), stderr: err.join('') };
  };
  const events = async (userId: number): Promise<{ event: string; actor_kind: string }[]> =>
    t.dataSource.query(
      'SELECT event, actor_kind, detail FROM audit_events WHERE user_id = ? ORDER BY id',
      [userId],
    );
  const api = (token: string) =>
    request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);

  beforeAll(async () => {
    db = await createTestDatabase({ file: true });
    // The commands enqueue mail in the app's database; the app sends it at its next look.
    t = await createTestApp({ MAIL_POLL_SECONDS: '1' }, { database: db });
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('should refuse a disabled person everywhere until enabled, mail and log both, and give everything back', async () => {
    const person = await signedInPerson(t);
    const other = await new WebClient(t.server).login(person.email, PASSWORD);
    expect(other.status).toBe(303);
    const { plaintext } = await createToken(t.app, person.user);
    expect((await api(plaintext)).status).toBe(200);
    // A team the person is a member of, whose owner sees the tokens that act in it.
    const owner = await signedInPerson(t, { name: 'Team Owner' });
    const team = await createTeam(t.app, owner.user);
    await addMember(t.app, team.id, person.user);
    const { token: inTeam } = await createToken(t.app, person.user, {
      name: 'acts in the team',
      teamId: team.id,
    });
    const { plaintext: inventory } = await createToken(t.app, owner.user, {
      abilities: ['tokens:read'],
      teamId: team.id,
    });
    /** The team's inventory: each token's id and why it is refused there. */
    const listed = async (): Promise<Record<number, string | null>> =>
      Object.fromEntries(
        (
          await request(t.server)
            .get('/api/v1/team/tokens')
            .set('Authorization', `Bearer ${inventory}`)
        ).body.data.map((token: { id: number; team_refusal: string | null }) => [
          token.id,
          token.team_refusal,
        ]),
      );
    expect(await listed()).toMatchObject({ [inTeam.id]: null });

    const disabled = await cli('user:disable', '--email', person.email.toUpperCase());
    expect(disabled).toEqual({
      code: 0,
      stdout: `disabled: ${person.email}\nsessions ended: 2\n`,
      stderr: '',
    });

    // The session ends: the next page is the sign-in page.
    const page = await person.client.get('/dashboard');
    expect(page.status).toBe(303);
    expect(page.headers.location).toMatch(/^\/login/);
    // The token is refused on the next request, and says why; it is not revoked.
    const refused = await api(plaintext);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({
      code: 'account_disabled',
      message:
        "The bearer token's account is disabled: its tokens are refused until an operator enables it again.",
    });
    expect(
      (
        await t.dataSource.query(
          'SELECT revoked_at FROM personal_access_tokens WHERE user_id = ?',
          [person.user.id],
        )
      )[0].revoked_at,
    ).toBeNull();
    // Signing in again is refused with what to do, after the right password only.
    const again = new WebClient(t.server);
    const signIn = await again.login(person.email, PASSWORD);
    expect(signIn.status).toBe(403);
    expect(signIn.text).toContain('This account is disabled');
    expect((await again.login(person.email, 'wrong password entirely')).text).not.toContain(
      'disabled',
    );
    const mail = await t.mail.waitFor({
      to: person.email,
      subject: 'Your Tessera account was disabled',
    });
    expect(mail.text).toContain('your API tokens are refused');

    // Its team sees its tokens refused, says why, and may revoke them meanwhile.
    expect(await listed()).toMatchObject({ [inTeam.id]: 'account_disabled' });
    const teamTokens = `/teams/${team.id}/tokens`;
    expect(await owner.client.textOf(teamTokens)).toContain(
      'Refused everywhere: an operator disabled its account.',
    );
    const revoked = await owner.client.submit(teamTokens, `${teamTokens}/${inTeam.id}/revoke`);
    expect(revoked.status).toBe(303);
    expect(await listed()).not.toHaveProperty(String(inTeam.id));

    // Twice is refused, changing nothing.
    const twice = await cli('user:disable', '--email', person.email);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toBe(`error: ${person.email} is already disabled; nothing was changed.\n`);

    const enabled = await cli('user:enable', '--email', person.email);
    expect(enabled).toEqual({ code: 0, stdout: `enabled: ${person.email}\n`, stderr: '' });
    expect((await api(plaintext)).status).toBe(200);
    // What the team revoked meanwhile stays revoked.
    expect(await listed()).not.toHaveProperty(String(inTeam.id));
    expect((await again.login(person.email, PASSWORD)).headers.location).toBe('/dashboard');
    await t.mail.waitFor({ to: person.email, subject: 'Your Tessera account was enabled again' });
    const notDisabled = await cli('user:enable', '--email', person.email);
    expect(notDisabled.stderr).toBe(
      `error: ${person.email} is not disabled; nothing was changed.\n`,
    );

    // A refused token's event is written with the minute's usage: now.
    await t.app.get(TokenUsageRecorder).flush();
    await t.app.get(AuditLog).flush();
    const log = await events(person.user.id);
    expect(log).toContainEqual(
      expect.objectContaining({ event: 'account.disabled', actor_kind: 'operator' }),
    );
    expect(log).toContainEqual(
      expect.objectContaining({ event: 'account.enabled', actor_kind: 'operator' }),
    );
    expect(log).toContainEqual(
      expect.objectContaining({
        event: 'sign-in.failed',
        detail: JSON.stringify({ reason: 'account disabled' }),
      }),
    );
    expect(log).toContainEqual(
      expect.objectContaining({
        event: 'token.refused',
        detail: expect.stringContaining('account_disabled'),
      }),
    );
  });

  it('should end a session written back after the account was disabled on its next page', async () => {
    const person = await signedInPerson(t);
    // A request in flight writes the session back after the operator deleted it.
    const [row] = await t.dataSource.query('SELECT * FROM sessions WHERE user_id = ?', [
      person.user.id,
    ]);
    expect((await cli('user:disable', '--email', person.email)).code).toBe(0);
    await t.dataSource.query(
      'INSERT INTO sessions (id, user_id, data, expires_at, created_at) VALUES (?, ?, ?, ?, ?)',
      [row.id, row.user_id, row.data, row.expires_at, row.created_at],
    );
    const page = await person.client.get('/dashboard');
    expect(page.status).toBe(303);
    expect(page.headers.location).toMatch(/^\/login/);
  });

  it("should reset a locked-out person's two-factor sign-in and passkeys, end their sessions, and mail and log it", async () => {
    const person = await signedInPerson(t);
    await turnOnTwoFactor(t, person);
    await t.dataSource.query(
      "INSERT INTO passkeys (user_id, credential_id, public_key, counter, device_type, backed_up, name) VALUES (?, ?, 'key', 0, 'singleDevice', 0, 'Lost phone')",
      [person.user.id, `credential-${person.user.id}`],
    );
    // With two-factor on, the password leads to the challenge.
    const before = new WebClient(t.server);
    expect((await before.login(person.email, PASSWORD)).headers.location).toBe(CHALLENGE);

    const r = await cli('user:reset-two-factor', '--email', person.email);
    expect(r).toEqual({
      code: 0,
      stdout: `two-factor sign-in reset: ${person.email}\nremoved: authenticator app and recovery codes, 1 passkey\nsessions ended: 1\n`,
      stderr: '',
    });
    for (const table of [
      'two_factor_credentials',
      'two_factor_recovery_codes',
      'passkeys',
      'sessions',
    ]) {
      const [{ n }] = await t.dataSource.query(
        `SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`,
        [person.user.id],
      );
      expect([table, Number(n)]).toEqual([table, 0]);
    }
    // The password alone signs in now.
    expect((await new WebClient(t.server).login(person.email, PASSWORD)).headers.location).toBe(
      '/dashboard',
    );
    const mail = await t.mail.waitFor({
      to: person.email,
      subject: 'The two-factor sign-in of your Tessera account was reset',
    });
    expect(mail.text).toContain(
      'the authenticator app and the recovery codes and 1 passkey removed',
    );
    const log = await events(person.user.id);
    expect(log).toContainEqual(
      expect.objectContaining({ event: 'account.two_factor_reset', actor_kind: 'operator' }),
    );
    expect(log).toContainEqual(expect.objectContaining({ event: 'account.two_factor_disabled' }));
    expect(log).toContainEqual(expect.objectContaining({ event: 'account.passkey_removed' }));

    // Nothing left to reset: refused, nothing mailed.
    const again = await cli('user:reset-two-factor', '--email', person.email);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `error: ${person.email} has neither two-factor sign-in nor a passkey; nothing was changed.\n`,
    );
  });

  it("should not disable a team's service account, which its team stops", async () => {
    const owner = await createUser(t.app);
    const team = await createTeam(t.app, owner);
    const account = await t.app
      .get(ServiceAccountsService)
      .create(Actors.person(owner.id), team.id, { name: 'deploy bot' });
    const r = await cli('user:disable', '--email', account.email);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: ${account.email} is a service account, which acts as no person.\n`,
    });
    expect(
      (await t.dataSource.query('SELECT disabled_at FROM users WHERE id = ?', [account.id]))[0]
        .disabled_at,
    ).toBeNull();
  });

  it.each([
    ['user:disable', ['--email', 'nobody@example.com'], 'error: No such user.'],
    ['user:enable', [], 'error: Missing --email (usage: user:enable --email EMAIL)'],
    ['user:reset-two-factor', ['--email', 'nobody@example.com'], 'error: No such user.'],
    [
      'user:disable',
      ['--email', 'a@example.com', '--force', 'yes'],
      "error: Unknown option '--force'",
    ],
  ])('should refuse %s %j with one line and a non-zero exit', async (command, args, message) => {
    const r = await cli(command, ...args);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  });

  it('should disable and enable as its own process', async () => {
    const user = await createUser(t.app, { email: uniqueEmail('process') });
    const off = await runBuilt('cli.js', ['user:disable', '--email', user.email], env());
    expect(off).toEqual({
      code: 0,
      stdout: `disabled: ${user.email}\nsessions ended: 0\n`,
      stderr: '',
    });
    const on = await runBuilt('cli.js', ['user:enable', '--email', user.email], env());
    expect(on).toEqual({ code: 0, stdout: `enabled: ${user.email}\n`, stderr: '' });
  });
});
