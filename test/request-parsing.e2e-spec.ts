import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ManualClock } from '../src/clock/clock.js';
import { Session } from '../src/auth/session.entity.js';
import { OneTimeLink } from '../src/one-time-links/one-time-link.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { RecoveryCode } from '../src/two-factor/recovery-code.entity.js';
import { TwoFactorCredential } from '../src/two-factor/two-factor-credential.entity.js';
import { User } from '../src/users/user.entity.js';
import { createExpiredToken, createToken, createUser, uniqueEmail } from './factories/index.js';
import { AUTHORIZATION_CASES } from './support/authorization-cases.js';
import { visibleText } from './support/html.js';
import { SQL, TEMPLATE } from './support/hostile-text.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { turnOnTwoFactor } from './support/two-factor.js';
import { WebClient } from './support/web-client.js';

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
  body?: { error?: { code?: string } };
}

interface Case {
  name: string;
  send: () => Promise<Answer>;
  status: number;
  /** The API error code, when the answer is the JSON envelope. */
  code?: string;
  /** The Allow header a 405 must carry. */
  allow?: string;
}

/** A JSON value `depth` arrays deep. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/**
 * Hostile requests, each with the answer it must get: never a 5xx, never a change it should
 * not make (the row counts of every table are compared around the whole table of cases).
 */
describe('hostile requests', () => {
  let t: TestApp;
  let web: WebClient;
  let me: User;
  const tokens: Record<string, string> = {};
  let otherTeamId: number;
  /** Someone with two-factor sign-in on, for the second step's form. */
  let guarded: User;

  beforeAll(async () => {
    // Its expired token is made a day ago (createExpiredToken moves the clock).
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { clock: new ManualClock() });
    ({ client: web, user: me } = await signedInPerson(t, {
      name: 'Hostile Tester',
      email: uniqueEmail('hostile'),
      register: true,
    }));
    tokens.valid = (await createToken(t.app, me)).plaintext;
    tokens.teamOnly = (await createToken(t.app, me, { abilities: ['team:read'] })).plaintext;
    tokens.userOnly = (await createToken(t.app, me, { abilities: ['user:read'] })).plaintext;
    tokens.inviting = (await createToken(t.app, me, { abilities: ['members:write'] })).plaintext;
    const revoked = await createToken(t.app, me);
    await web.submit('/settings/api-tokens', `/settings/api-tokens/${revoked.token.id}/revoke`);
    tokens.revoked = revoked.plaintext;
    tokens.expired = (await createExpiredToken(t.app, me)).plaintext;
    const other = await createUser(t.app, { name: 'Someone Else' });
    tokens.other = (await createToken(t.app, other)).plaintext;
    otherTeamId = other.currentTeamId!;
    guarded = await createUser(t.app, { name: 'Two Factor', password: 'correct horse battery' });
    await turnOnTwoFactor(t, { user: guarded, email: guarded.email });
    // Three argon2 hashes and an app to boot: seconds on a busy machine running every spec.
  });
  afterAll(async () => {
    await t.close();
  });

  const profile = (authorization?: string) => {
    const req = request(t.server).get('/api/v1/user/profile');
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };

  /** Raw bytes on a socket, for what an HTTP client library would refuse to send. */
  function raw(path: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> {
    const { port } = t.server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      let answered = false;
      const req = httpRequest(
        { host: '127.0.0.1', port, path, method, headers, insecureHTTPParser: false },
        (res) => {
          answered = true;
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
          // Node 24 resets the connection right after a 431 for a request it did not read whole:
          // the answer already received is what counts.
          res.on('error', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
        },
      );
      req.on('error', (error) => (answered ? undefined : reject(error)));
      req.end();
    });
  }

  const form = (action: string, fields: Record<string, unknown>, page = '/dashboard') =>
    web.csrfFrom(page).then((_csrf) =>
      web.agent
        .post(action)
        .type('form')
        .send({ ...fields, _csrf }),
    );

  /** A visitor whose password was right, at the second step of signing in. */
  async function halfSignedIn(): Promise<WebClient> {
    const client = new WebClient(t.server, t.mail);
    const res = await client.login(guarded.email);
    if (res.headers.location !== '/two-factor-challenge') throw new Error('no two-factor step');
    return client;
  }
  const challenge = async (fields: Record<string, unknown>) =>
    (await halfSignedIn()).submit(
      '/two-factor-challenge',
      '/two-factor-challenge',
      fields as Record<string, string>,
    );

  const authCases: Case[] = [
    // The shared header cases, then what only hostile clients send.
    ...AUTHORIZATION_CASES.map((c): Case => {
      const header = () => c.header({ valid: tokens.valid, other: tokens.other });
      return {
        name: c.name,
        send: () =>
          c.raw ? raw('/api/v1/user/profile', { Authorization: header()! }) : profile(header()),
        status: c.status,
        code: c.code,
      };
    }),
    {
      name: 'a header of 64 KB (refused by the HTTP parser)',
      send: () => raw('/api/v1/user/profile', { Authorization: `Bearer ${'a'.repeat(64 * 1024)}` }),
      status: 431,
    },
    {
      name: 'a token in the query string',
      send: () => request(t.server).get(`/api/v1/user/profile?access_token=${tokens.valid}`),
      status: 401,
      code: 'missing_token',
    },
    {
      name: 'a token in a JSON body',
      send: () =>
        request(t.server).get('/api/v1/user/profile').send({ access_token: tokens.valid }),
      status: 401,
      code: 'missing_token',
    },
    {
      name: 'a token in a form body',
      send: () =>
        request(t.server)
          .post('/api/v1/user/profile')
          .type('form')
          .send({ access_token: tokens.valid }),
      status: 405,
      code: 'method_not_allowed',
    },
    {
      name: 'a token in a cookie',
      send: () =>
        request(t.server).get('/api/v1/user/profile').set('Cookie', `access_token=${tokens.valid}`),
      status: 401,
      code: 'missing_token',
    },
    {
      name: 'a revoked token',
      send: () => profile(`Bearer ${tokens.revoked}`),
      status: 401,
      code: 'token_revoked',
    },
    {
      name: 'an expired token',
      send: () => profile(`Bearer ${tokens.expired}`),
      status: 401,
      code: 'token_expired',
    },
    {
      name: 'a token lacking user:read',
      send: () => profile(`Bearer ${tokens.teamOnly}`),
      status: 403,
      code: 'insufficient_scope',
    },
    {
      name: 'a token lacking team:read',
      send: () =>
        request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${tokens.userOnly}`),
      status: 403,
      code: 'insufficient_scope',
    },
  ];

  const pathCases: Case[] = [
    {
      name: 'an unknown API path',
      send: () => request(t.server).get('/api/v1/admin'),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'another API version',
      send: () => request(t.server).get('/api/v2/user/profile'),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'the bare /api',
      send: () => request(t.server).get('/api'),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'POST on a read-only endpoint',
      send: () =>
        request(t.server).post('/api/v1/team').set('Authorization', `Bearer ${tokens.valid}`),
      status: 405,
      code: 'method_not_allowed',
      allow: 'GET, HEAD',
    },
    {
      name: 'DELETE on an endpoint',
      send: () =>
        request(t.server)
          .delete('/api/v1/user/profile')
          .set('Authorization', `Bearer ${tokens.valid}`),
      status: 405,
      code: 'method_not_allowed',
      allow: 'GET, HEAD',
    },
    {
      name: 'PATCH on an endpoint',
      send: () => request(t.server).patch('/api/v1/team'),
      status: 405,
      code: 'method_not_allowed',
      allow: 'GET, HEAD',
    },
    {
      name: 'POST on an unknown API path',
      send: () => request(t.server).post('/api/v1/teams'),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'a 2 MB JSON body to the API, which reads no body',
      send: () =>
        request(t.server)
          .post('/api/v1/team')
          .set('Content-Type', 'application/json')
          .send(`{"a":"${'x'.repeat(2 * 1024 * 1024)}"}`),
      status: 405,
      code: 'method_not_allowed',
    },
    {
      name: 'a 2 MB form to a page',
      send: () =>
        request(t.server)
          .post('/login')
          .type('form')
          .send(`email=${'x'.repeat(2 * 1024 * 1024)}`),
      status: 413,
    },
    {
      name: 'malformed JSON to a page',
      send: () =>
        request(t.server).post('/login').set('Content-Type', 'application/json').send('{"email":'),
      status: 400,
    },
    {
      name: 'malformed JSON to the API',
      send: () =>
        request(t.server)
          .post('/api/v1/team')
          .set('Content-Type', 'application/json')
          .send('{"name":'),
      status: 405,
      code: 'method_not_allowed',
    },
    {
      name: 'JSON nested 5,000 deep to the API, with an Idempotency-Key',
      send: () =>
        request(t.server)
          .post('/api/v1/team/invitations')
          .set('Authorization', `Bearer ${tokens.inviting}`)
          .set('Idempotency-Key', 'nested-deep-0001')
          .set('Content-Type', 'application/json')
          .send(`{"email":"a@example.com","role":${nested(5000)}}`),
      status: 400,
      code: 'bad_request',
    },
    {
      // The limit leaves room: a body 32 deep reaches validation, which names the field.
      name: 'JSON nested 32 deep to the API',
      send: () =>
        request(t.server)
          .post('/api/v1/team/invitations')
          .set('Authorization', `Bearer ${tokens.inviting}`)
          .set('Content-Type', 'application/json')
          .send(`{"email":"a@example.com","role":${nested(31)}}`),
      status: 422,
      code: 'validation_failed',
    },
    {
      name: 'JSON nested 5,000 deep to the sign-in page',
      send: async () => {
        const visitor = new WebClient(t.server, t.mail);
        const csrf = await visitor.csrfFrom('/login');
        return visitor.agent
          .post('/login')
          .set('Content-Type', 'application/json')
          .send(`{"_csrf":"${csrf}","email":${nested(5000)},"password":"x"}`);
      },
      status: 400,
    },
    {
      name: 'JSON nested 5,000 deep to a signed-in form',
      send: async () =>
        web.agent
          .post('/teams')
          .set('Content-Type', 'application/json')
          .send(`{"_csrf":"${await web.csrfFrom('/dashboard')}","name":${nested(5000)}}`),
      status: 400,
    },
    {
      name: 'a path that climbs out of the assets',
      send: () => raw('/assets/../../package.json', {}),
      status: 404,
    },
    {
      name: 'an encoded path climb',
      send: () => raw('/assets/..%2f..%2fpackage.json', {}),
      status: 404,
    },
    {
      name: 'an asset under its unhashed name',
      send: () => raw('/assets/app.css', {}),
      status: 404,
    },
    { name: 'a NUL byte in an id', send: () => web.get('/teams/%00'), status: 404 },
    {
      name: 'broken percent-encoding in a path',
      send: () => web.get('/teams/%E0%A4%A'),
      status: 400,
    },
    {
      name: 'an 8 KB path',
      send: () => request(t.server).get(`/api/v1/${'a'.repeat(8 * 1024)}`),
      status: 404,
      code: 'not_found',
    },
  ];

  const formCases: Case[] = [
    {
      name: 'a form without its CSRF token',
      send: () => web.agent.post('/teams').type('form').send({ name: 'No CSRF' }),
      status: 403,
    },
    {
      name: 'a JSON body instead of the form, without CSRF',
      send: () => web.agent.post('/teams').send({ name: 'JSON' }),
      status: 403,
    },
    {
      name: 'a repeated token name',
      send: () => form('/settings/api-tokens', { name: ['a', 'b'], abilities: 'user:read' }),
      status: 303,
    },
    {
      name: 'a token name given as an object',
      send: () =>
        web
          .csrfFrom('/dashboard')
          .then((c) =>
            web.agent
              .post('/settings/api-tokens')
              .type('form')
              .send(`_csrf=${c}&name[x]=1&abilities=user:read`),
          ),
      status: 303,
    },
    {
      name: 'an unknown ability',
      send: () => form('/settings/api-tokens', { name: 'n', abilities: 'admin:write' }),
      status: 303,
    },
    {
      name: 'a negative expiry',
      send: () =>
        form('/settings/api-tokens', { name: 'n', abilities: 'user:read', expires_in_days: '-1' }),
      status: 303,
    },
    {
      name: 'a team id in scientific notation',
      send: () => form('/teams/switch', { team_id: '1e3' }),
      status: 303,
    },
    {
      name: 'a repeated team id',
      send: () => form('/teams/switch', { team_id: ['1', '2'] }),
      status: 303,
    },
    {
      name: "another person's team id",
      send: () => form('/teams/switch', { team_id: String(otherTeamId) }),
      status: 404,
    },
    {
      name: 'a role of owner',
      send: () =>
        form(`/teams/${me.currentTeamId}/invitations`, { email: 'x@example.com', role: 'owner' }),
      status: 303,
    },
    {
      name: "a member added to another person's team",
      send: () => form(`/teams/${otherTeamId}/invitations`, { email: me.email, role: 'admin' }),
      status: 404,
    },
    {
      name: 'a revocation of a token id that is not a number',
      send: () => form('/settings/api-tokens/abc/revoke', {}),
      status: 404,
    },
    {
      name: 'a revocation of a huge token id',
      send: () => form('/settings/api-tokens/99999999999999999999/revoke', {}),
      status: 404,
    },
    {
      name: 'an account deletion without its CSRF token',
      send: () =>
        web.agent
          .post('/settings/account/delete')
          .type('form')
          .send({ password: 'correct horse battery' }),
      status: 403,
    },
    {
      name: 'an account deletion with the password as a list',
      send: () =>
        form('/settings/account/delete', {
          password: ['correct horse battery', 'correct horse battery'],
        }),
      status: 303,
    },
    {
      name: 'a session revocation naming a session that is not there',
      send: () => form('/settings/sessions/..%2F..%2Fdashboard/revoke', {}),
      status: 404,
    },
    {
      name: 'a password change with a current password of 90 KB',
      send: () =>
        form('/settings/password', {
          current_password: 'x'.repeat(90 * 1024),
          password: 'a new password',
          password_confirmation: 'a new password',
        }),
      status: 303,
    },
    {
      name: 'a profile change with the e-mail as a list',
      send: () =>
        form('/settings/profile', { name: 'Hostile Tester', email: [me.email, 'x@example.com'] }),
      status: 303,
    },
    {
      name: 'a repeated password confirmation at sign-up',
      send: () =>
        new WebClient(t.server, t.mail).submit('/register', '/register', {
          name: 'X',
          email: uniqueEmail(),
          password: 'password123',
          password_confirmation: ['password123', 'password123'],
        }),
      status: 303,
    },
    {
      name: 'a sign-in with the email as a list',
      send: () =>
        new WebClient(t.server, t.mail).submit('/login', '/login', {
          email: [me.email, me.email],
          password: 'x',
        }),
      status: 303,
    },
    {
      name: 'a sign-in with an e-mail of 90 KB',
      send: () =>
        new WebClient(t.server, t.mail).submit('/login', '/login', {
          email: `${'a'.repeat(90 * 1024)}@example.com`,
          password: 'x',
        }),
      status: 303,
    },
    {
      name: 'a sign-in that asks to go on to another site',
      send: () =>
        new WebClient(t.server, t.mail).submit('/login', '/login', {
          email: me.email,
          password: 'a wrong password',
          return_to: '//evil.example/',
        }),
      status: 303,
    },
    {
      name: 'a sign-in page asked to go on to a 10 KB path',
      send: () => request(t.server).get(`/login?return_to=/${'a'.repeat(10_000)}`),
      status: 200,
    },
    {
      name: 'a sign-up with the name as an object',
      send: async () => {
        const visitor = new WebClient(t.server, t.mail);
        const csrf = await visitor.csrfFrom('/register');
        return visitor.agent
          .post('/register')
          .type('form')
          .send(
            `_csrf=${csrf}&name[first]=X&email=${uniqueEmail()}&password=p&password_confirmation=p`,
          );
      },
      status: 303,
    },
    {
      name: 'a second-factor code with no sign-in under way',
      send: () =>
        new WebClient(t.server, t.mail).submit('/login', '/two-factor-challenge', {
          code: '123456',
        }),
      status: 303,
    },
    {
      name: 'a second-factor code as a list',
      send: () => challenge({ code: ['123456', '654321'] }),
      status: 303,
    },
    {
      name: 'a second-factor code of 90 KB',
      send: () => challenge({ code: '1'.repeat(90 * 1024) }),
      status: 303,
    },
    {
      name: 'a recovery code of SQL and template text',
      send: () => challenge({ recovery_code: `${SQL} ${TEMPLATE}` }),
      status: 303,
    },
    {
      name: 'a second-factor answer without its CSRF token',
      send: async () =>
        (await halfSignedIn()).agent.post('/two-factor-challenge').type('form').send({ code: '1' }),
      status: 403,
    },
    {
      name: 'a two-factor confirmation with the code as an object and a secret of its own',
      send: async () => {
        const csrf = await web.csrfFrom('/settings/security');
        return web.agent
          .post('/settings/two-factor/confirm')
          .type('form')
          .send(`_csrf=${csrf}&code[x]=123456&secret=JBSWY3DPEHPK3PXP`);
      },
      status: 303,
    },
    {
      name: 'a two-factor confirmation with no setup started',
      send: () => form('/settings/two-factor/confirm', { code: '123456' }, '/settings/security'),
      status: 303,
    },
    {
      name: 'a password reset asked for a list of addresses',
      send: () =>
        new WebClient(t.server, t.mail).submit('/forgot-password', '/forgot-password', {
          email: [me.email, uniqueEmail()],
        }),
      status: 303,
    },
    {
      name: 'a password reset asked for an e-mail of 90 KB',
      send: () =>
        new WebClient(t.server, t.mail).submit('/forgot-password', '/forgot-password', {
          email: `${'a'.repeat(90 * 1024)}@example.com`,
        }),
      status: 303,
    },
    {
      name: 'a password reset asked for SQL',
      send: () =>
        new WebClient(t.server, t.mail).submit('/forgot-password', '/forgot-password', {
          email: SQL,
        }),
      status: 303,
    },
    {
      name: 'a reset link with SQL for a token',
      send: () => request(t.server).get(`/reset-password/${encodeURIComponent(SQL)}`),
      status: 404,
    },
    {
      name: 'a reset link with a token of 8 KB',
      send: () => request(t.server).get(`/reset-password/${'A'.repeat(8 * 1024)}`),
      status: 404,
    },
    {
      name: 'a reset link with an encoded path in its token',
      send: () => request(t.server).get('/reset-password/..%2F..%2Fsettings%2Fapi-tokens'),
      status: 404,
    },
    {
      name: 'a new password posted to a made-up reset link',
      send: () =>
        new WebClient(t.server, t.mail).submit(
          '/forgot-password',
          `/reset-password/${'B'.repeat(43)}`,
          {
            password: 'a good new password',
            password_confirmation: 'a good new password',
          },
        ),
      status: 404,
    },
    {
      name: 'a new password as an object, posted to a made-up reset link',
      send: async () => {
        const visitor = new WebClient(t.server, t.mail);
        const csrf = await visitor.csrfFrom('/forgot-password');
        return visitor.agent
          .post(`/reset-password/${'B'.repeat(43)}`)
          .type('form')
          .send(`_csrf=${csrf}&password[$gt]=&password_confirmation[$gt]=`);
      },
      status: 303,
    },
    {
      name: 'a new password without its CSRF token',
      send: () =>
        request(t.server)
          .post(`/reset-password/${'B'.repeat(43)}`)
          .type('form')
          .send({ password: 'a good new password', password_confirmation: 'a good new password' }),
      status: 403,
    },
    {
      name: 'a confirmation link with a template for a token',
      send: () => request(t.server).get(`/verify-email/${encodeURIComponent(TEMPLATE)}`),
      status: 404,
    },
    {
      name: 'a new confirmation link asked for without a CSRF token',
      send: () => web.agent.post('/verify-email/resend').type('form').send({}),
      status: 403,
    },
    {
      name: 'a sign-out without its CSRF token',
      send: () => web.agent.post('/logout').type('form').send({}),
      status: 403,
    },
    {
      name: 'a removal of a member id that is not a number',
      send: () => form(`/teams/${me.currentTeamId}/members/abc/remove`, {}),
      status: 404,
    },
    {
      name: "a removal from another person's team",
      send: () => form(`/teams/${otherTeamId}/members/${me.id}/remove`, {}),
      status: 404,
    },
    {
      name: 'a team page with a negative id',
      send: () => web.get('/teams/-1'),
      status: 404,
    },
    {
      name: 'OPTIONS * (the asterisk target)',
      send: () => raw('*', {}, 'OPTIONS'),
      status: 404,
    },
    {
      name: 'an absolute URL as the request target',
      send: () => raw('http://evil.example/dashboard', {}),
      status: 303,
    },
    {
      // 405, not 403: no route takes PUT there, so there is no form whose forgery CSRF
      // protection could stop; the method is refused before the body is read or CSRF checked.
      name: 'a health check with a body and an odd method',
      send: () => request(t.server).put('/health/live').send({ x: 1 }),
      status: 405,
      allow: 'GET, HEAD',
    },
    {
      name: 'a form posted to a page that takes no form, without a CSRF token',
      send: () => web.agent.post('/dashboard').type('form').send({ x: 1 }),
      status: 405,
      allow: 'GET, HEAD',
    },
    {
      name: 'a form posted to no page at all',
      send: () => web.agent.post('/no-such-page').type('form').send({ x: 1 }),
      status: 404,
    },
  ];

  it('should answer as expected, never with a 5xx, and change nothing when hostile requests arrive', async () => {
    const counts = () =>
      Promise.all(
        [
          User,
          Team,
          TeamMember,
          PersonalAccessToken,
          TwoFactorCredential,
          RecoveryCode,
          OneTimeLink,
        ].map((e) => t.dataSource.getRepository(e).count()),
      );
    const before = await counts();
    const revokedBefore = await t.dataSource
      .getRepository(PersonalAccessToken)
      .find({ order: { id: 'ASC' } });
    const cases = [...authCases, ...pathCases, ...formCases];
    expect(cases.length).toBeGreaterThanOrEqual(50);

    const failures: string[] = [];
    for (const c of cases) {
      const res = (await c.send()) as Answer;
      const body = res.body ?? (res.text?.startsWith('{') ? JSON.parse(res.text) : undefined);
      const problems: string[] = [];
      if (res.status !== c.status) problems.push(`status ${res.status}, expected ${c.status}`);
      if (res.status >= 500) problems.push('a 5xx');
      if (c.code && body?.error?.code !== c.code)
        problems.push(`code ${body?.error?.code}, expected ${c.code}`);
      if (c.allow && res.headers.allow !== c.allow)
        problems.push(`Allow ${res.headers.allow}, expected ${c.allow}`);
      if (/\bat \/|node_modules|SQLITE|ER_[A-Z_]+|QueryFailedError/.test(res.text ?? ''))
        problems.push('internals leaked');
      if (problems.length > 0) failures.push(`${c.name}: ${problems.join('; ')}`);
    }
    expect(failures).toEqual([]);
    expect(await counts()).toEqual(before);
    const after = await t.dataSource
      .getRepository(PersonalAccessToken)
      .find({ order: { id: 'ASC' } });
    expect(after.map((r) => r.revokedAt?.getTime() ?? null)).toEqual(
      revokedBefore.map((r) => r.revokedAt?.getTime() ?? null),
    );
  });

  it('should keep only the form’s own fields when a form of 90 KB is refused', async () => {
    const client = new WebClient(t.server, t.mail);
    await client.register('Big Form', uniqueEmail('big'));
    const res = await client.submit('/teams', '/teams', {
      name: 'x'.repeat(30_000),
      padding: 'p'.repeat(60_000),
      more: 'm'.repeat(5_000),
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/teams');
    const page = await client.get('/teams');
    expect(page.status).toBe(200);
    expect(visibleText(page.text)).toContain('Team name can be at most 100 characters.');
    const sessions = await t.dataSource.getRepository(Session).find();
    expect(sessions.every((s) => s.data.length < 5_000)).toBe(true);
  });
});
