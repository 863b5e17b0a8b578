import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import request from 'supertest';
import { ManualClock } from '../src/clock/clock.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { TokenRegenerationService } from '../src/tokens/token-regeneration.service.js';
import { createTeam, createToken, createUser } from './factories/index.js';
import { AUTHORIZATION_CASES, type CaseTokens } from './support/authorization-cases.js';
import { LogCapture } from './support/log-capture.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function expectError(res: request.Response, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({
    success: false,
    error: { code, message: expect.any(String) },
    version: 'v1',
    timestamp: expect.stringMatching(TIMESTAMP),
  });
}

describe('API v1', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, authorization?: string) => {
    const req = request(t.server).get(path).set('Accept', 'application/json');
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };

  describe('GET /api/v1/user/profile', () => {
    it("should answer the token owner's profile with exactly id, name, email and its type", async () => {
      const user = await createUser(t.app, { name: 'Grace Hopper 🚀', email: 'Grace@Example.com' });
      const { plaintext } = await createToken(t.app, user);

      const asked = Date.now();
      const res = await get('/api/v1/user/profile', `Bearer ${plaintext}`);
      const answered = Date.now();

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        success: true,
        data: { id: user.id, name: 'Grace Hopper 🚀', email: 'grace@example.com', type: 'person' },
        version: 'v1',
        timestamp: expect.stringMatching(TIMESTAMP),
      });
      // Stamped while the request was answered, however long that took.
      const stamp = Date.parse(res.body.timestamp);
      expect(stamp).toBeGreaterThanOrEqual(asked);
      expect(stamp).toBeLessThanOrEqual(answered);
    });

    it('should give real microseconds in the timestamp, not padded zeros', async () => {
      const user = await createUser(t.app);
      const { plaintext } = await createToken(t.app, user);
      const stamps: string[] = [];
      for (let i = 0; i < 10; i++) {
        stamps.push((await get('/api/v1/user/profile', `Bearer ${plaintext}`)).body.timestamp);
      }
      const microDigits = stamps.map((s) => s.slice(23, 26));
      expect(microDigits.some((d) => d !== '000')).toBe(true);
      expect(new Set(stamps).size).toBe(stamps.length);
    });

    it('should accept the scheme in any case', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
        expect((await get('/api/v1/user/profile', `${scheme} ${plaintext}`)).status).toBe(200);
      }
    });
  });

  describe('GET /api/v1/token', () => {
    it('should describe the presented token, whatever its abilities, from one query', async () => {
      const user = await createUser(t.app);
      const { plaintext, token } = await createToken(t.app, user, {
        name: 'deploy script',
        abilities: ['team:read'],
        expiresInDays: 30,
      });
      t.queries.clear();
      const res = await get('/api/v1/token', `Bearer ${plaintext}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        id: token.id,
        name: 'deploy script',
        abilities: ['team:read'],
        abilities_no_longer_offered: [],
        // The deployment's catalog, Tessera's own abilities first.
        catalog: expect.arrayContaining([
          {
            name: 'members:write',
            description: expect.stringContaining('Invite people'),
          },
        ]),
        created_at: token.createdAt.toISOString(),
        expires_at: token.expiresAt!.toISOString(),
        last_used_at: null,
        binding: 'current',
        team: { id: user.currentTeamId, name: "Ada's Team", slug: expect.any(String) },
        team_refusal: null,
        replaced_value_valid_until: null,
      });
      expect(res.body.data.catalog.map((a: { name: string }) => a.name)).toEqual([
        'user:read',
        'team:read',
        'members:read',
        'members:write',
        'tokens:read',
        'audit:read',
        'tokens:introspect',
      ]);
      expect(t.queries.queries.filter((q) => /^\s*SELECT/i.test(q))).toHaveLength(1);
      expect(JSON.stringify(res.body)).not.toContain(plaintext.slice(4));

      // Once recorded, the last use shows; a token that never expires says so.
      const forever = await createToken(t.app, user, { name: 'forever' });
      // Stored with its milliseconds, on every database.
      const used = Date.now();
      await get('/api/v1/token', `Bearer ${forever.plaintext}`);
      await waitFor(async () =>
        Boolean(
          (
            await t.dataSource
              .getRepository(PersonalAccessToken)
              .findOneByOrFail({ id: forever.token.id })
          ).lastUsedAt,
        ),
      );
      const again = await get('/api/v1/token', `Bearer ${forever.plaintext}`);
      expect(again.body.data).toMatchObject({ name: 'forever', expires_at: null });
      expect(Date.parse(again.body.data.last_used_at)).toBeGreaterThanOrEqual(used);
      expect(Date.parse(again.body.data.last_used_at)).toBeLessThanOrEqual(Date.now());
    });

    it('should name the team only to a token that may read it and that the team does not refuse', async () => {
      const user = await createUser(t.app);
      const team = await createTeam(t.app, user, 'Quiet Co');
      const withoutTeamRead = await createToken(t.app, user, { abilities: ['user:read'] });
      const withTeamRead = await createToken(t.app, user, { abilities: ['team:read'] });

      const hidden = await get('/api/v1/token', `Bearer ${withoutTeamRead.plaintext}`);
      expect(hidden.status).toBe(200);
      expect(hidden.body.data).toMatchObject({
        binding: 'current',
        team: null,
        team_refusal: null,
      });
      expect(JSON.stringify(hidden.body)).not.toContain('Quiet Co');
      expect(JSON.stringify(hidden.body)).not.toContain(team.slug);
      const shown = await get('/api/v1/token', `Bearer ${withTeamRead.plaintext}`);
      expect(shown.body.data.team).toEqual({ id: team.id, name: 'Quiet Co', slug: team.slug });

      // A team that refuses the token: it says why, not which team.
      await t.dataSource.getRepository(Team).update({ id: team.id }, { requireTwoFactor: true });
      for (const token of [withTeamRead, withoutTeamRead]) {
        const refused = await get('/api/v1/token', `Bearer ${token.plaintext}`);
        expect(refused.status).toBe(200);
        expect(refused.body.data).toMatchObject({
          team: null,
          team_refusal: 'two_factor_required',
        });
        expect(JSON.stringify(refused.body)).not.toContain('Quiet Co');
      }
      expectError(
        await get('/api/v1/team', `Bearer ${withTeamRead.plaintext}`),
        403,
        'two_factor_required',
      );
    });

    it('should refuse revoked and expired tokens as every endpoint does', async () => {
      const user = await createUser(t.app);
      const { plaintext, token } = await createToken(t.app, user);
      await t.app.get(TokensService).revoke(Actors.operator(user.id), token.id);
      expectError(await get('/api/v1/token', `Bearer ${plaintext}`), 401, 'token_revoked');
      expectError(await get('/api/v1/token'), 401, 'missing_token');
    });
  });

  describe('refusals that say what to do', () => {
    it('should say the scheme must be Bearer, or is missing, without echoing what was sent', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      const basic = await get('/api/v1/user/profile', 'Basic dXNlcjpwYXNzd29yZA==');
      expectError(basic, 401, 'missing_token');
      expect(basic.body.error.message).toBe(
        'The Authorization header uses the Basic scheme; this API takes only bearer tokens. Send "Authorization: Bearer <token>".',
      );
      expect(basic.headers['www-authenticate']).toBe('Bearer realm="tessera"');

      const bare = await get('/api/v1/user/profile', plaintext);
      expectError(bare, 401, 'invalid_token');
      expect(bare.body.error.message).toBe(
        'The Authorization header has no scheme: the token goes after "Bearer ". Send "Authorization: Bearer <token>".',
      );
      expect(JSON.stringify(bare.body)).not.toContain(plaintext);

      // A token given as if it were a scheme is not named back either.
      const odd = await get('/api/v1/user/profile', `${plaintext} extra`);
      expect(odd.body.error.message).toContain('uses a scheme other than Bearer');
      expect(JSON.stringify(odd.body)).not.toContain(plaintext);

      const empty = await get('/api/v1/user/profile', 'Bearer');
      expectError(empty, 401, 'invalid_token');
      expect(empty.body.error.message).toContain('says Bearer but carries no token');
      // What was right stays as it was.
      expectError(await get('/api/v1/user/profile'), 401, 'missing_token');
      expect((await get('/api/v1/user/profile', `bearer   ${plaintext}`)).status).toBe(200);
    });

    it('should name the team that requires two-factor sign-in to a token that may read it', async () => {
      const user = await createUser(t.app);
      const team = await createTeam(t.app, user, 'Strict "Ops"');
      const reader = await createToken(t.app, user, { abilities: ['team:read', 'user:read'] });
      const other = await createToken(t.app, user, { abilities: ['user:read'] });
      await t.dataSource.getRepository(Team).update({ id: team.id }, { requireTwoFactor: true });

      const named = await get('/api/v1/team', `Bearer ${reader.plaintext}`);
      expectError(named, 403, 'two_factor_required');
      expect(named.body.error.message).toBe(
        'The team "Strict \\"Ops\\"" requires two-factor sign-in, which the token\'s person has not turned on: they turn it on under Security, and the token works in "Strict \\"Ops\\"" again.',
      );
      const unnamed = await get('/api/v1/user/profile', `Bearer ${other.plaintext}`);
      expectError(unnamed, 403, 'two_factor_required');
      expect(unnamed.body.error.message).toBe(
        "The team this token acts in requires two-factor sign-in, which the token's person has not turned on.",
      );
    });

    it("should say during a regeneration's grace period that the value is the old one, and until when it works", async () => {
      const user = await createUser(t.app);
      const { plaintext, token } = await createToken(t.app, user);
      const current = await get('/api/v1/token', `Bearer ${plaintext}`);
      expect(current.body.data.replaced_value_valid_until).toBeNull();

      const renewed = await t.app
        .get(TokenRegenerationService)
        .regenerate(Actors.operator(user.id), token.id, 10);
      const { previousValidUntil } = await t.dataSource
        .getRepository(PersonalAccessToken)
        .findOneByOrFail({ id: token.id });
      const old = await get('/api/v1/token', `Bearer ${plaintext}`);
      expect(old.status).toBe(200);
      expect(old.body.data.replaced_value_valid_until).toBe(previousValidUntil!.toISOString());
      expect(previousValidUntil!.getTime()).toBeGreaterThan(Date.now());
      const fresh = await get('/api/v1/token', `Bearer ${renewed.plaintext}`);
      expect(fresh.body.data.replaced_value_valid_until).toBeNull();
    });
  });

  describe('GET /api/v1/team', () => {
    it("should answer the current team of the token's user", async () => {
      const user = await createUser(t.app, { name: 'Linus Torvalds' });
      const { plaintext } = await createToken(t.app, user);

      const res = await get('/api/v1/team', `Bearer ${plaintext}`);

      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        success: true,
        data: {
          id: user.currentTeamId,
          name: "Linus's Team",
          slug: expect.stringMatching(/^linuss-team(-\d+)?$/),
        },
        version: 'v1',
        timestamp: expect.stringMatching(TIMESTAMP),
      });
    });

    it('should follow a team switch made after the token was created', async () => {
      const user = await createUser(t.app);
      const personalTeamId = user.currentTeamId!;
      const { plaintext } = await createToken(t.app, user);
      const team = await createTeam(t.app, user, 'Research & Development');

      const afterCreate = await get('/api/v1/team', `Bearer ${plaintext}`);
      expect(afterCreate.body.data).toEqual({
        id: team.id,
        name: 'Research & Development',
        slug: team.slug,
      });

      await t.app.get(TeamsService).switchTeam(Actors.operator(user.id), personalTeamId);
      const afterSwitch = await get('/api/v1/team', `Bearer ${plaintext}`);
      expect(afterSwitch.body.data.id).toBe(personalTeamId);
    });
  });

  describe('authentication failures', () => {
    describe.each(AUTHORIZATION_CASES.filter((c) => !c.raw))('with $name', (c) => {
      let tokens: CaseTokens;
      beforeAll(async () => {
        tokens = {
          valid: (await createToken(t.app, await createUser(t.app))).plaintext,
          other: (await createToken(t.app, await createUser(t.app))).plaintext,
        };
      });

      it(`should answer ${c.status}${c.code ? ` ${c.code}` : ''} on both endpoints`, async () => {
        for (const path of ['/api/v1/user/profile', '/api/v1/team']) {
          t.queries.clear();
          const res = await get(path, c.header(tokens));
          expect(res.headers['cache-control']).toBe('no-store');
          if (c.status === 200) {
            expect(res.status).toBe(200);
            continue;
          }
          expectError(res, c.status, c.code!);
          expect(res.headers['www-authenticate']).toBe(
            c.code === 'missing_token'
              ? 'Bearer realm="tessera"'
              : 'Bearer realm="tessera", error="invalid_token"',
          );
          // No lookup of the token (mail and usage flushes may run in the background meanwhile).
          if (c.refusedWithoutQuery) {
            expect(t.queries.queries.filter((q) => /token_hash/.test(q))).toEqual([]);
          }
        }
      });
    });

    it('should refuse a well-formed token that was never issued', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      await t.dataSource
        .getRepository(PersonalAccessToken)
        .delete({ lastFour: plaintext.slice(-4) });
      const res = await get('/api/v1/user/profile', `Bearer ${plaintext}`);
      expectError(res, 401, 'invalid_token');
    });

    it('should refuse a revoked token with 401 token_revoked on the very next request', async () => {
      const user = await createUser(t.app);
      const { plaintext, token } = await createToken(t.app, user);
      expect((await get('/api/v1/user/profile', `Bearer ${plaintext}`)).status).toBe(200);

      await t.app.get(TokensService).revoke(Actors.operator(user.id), token.id);

      const res = await get('/api/v1/user/profile', `Bearer ${plaintext}`);
      expectError(res, 401, 'token_revoked');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="tessera", error="invalid_token"');
      expectError(await get('/api/v1/team', `Bearer ${plaintext}`), 401, 'token_revoked');
    });

    it('should refuse a token lacking the ability with 403 insufficient_scope', async () => {
      const user = await createUser(t.app);
      const { plaintext } = await createToken(t.app, user, { abilities: ['team:read'] });

      const res = await get('/api/v1/user/profile', `Bearer ${plaintext}`);
      expectError(res, 403, 'insufficient_scope');
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="tessera", error="insufficient_scope", scope="user:read"',
      );
      expect((await get('/api/v1/team', `Bearer ${plaintext}`)).status).toBe(200);
    });

    it('should never authenticate a token sent in the query string or the body', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      expectError(
        await get(`/api/v1/user/profile?access_token=${plaintext}`),
        401,
        'missing_token',
      );
      const body = await request(t.server)
        .get('/api/v1/user/profile')
        .type('form')
        .send({ access_token: plaintext });
      expectError(body, 401, 'missing_token');
    });
  });

  describe('every spelling of a route authenticated alike', () => {
    /** What a client sees of an answer, without what differs per request. */
    const seen = (res: request.Response) => ({
      status: res.status,
      code: res.body.error?.code ?? null,
      data: res.body.data ?? null,
      challenge: res.headers['www-authenticate'] ?? null,
      cacheControl: res.headers['cache-control'],
      csp: res.headers['content-security-policy'],
      requestId: typeof res.headers['x-request-id'],
      rateLimit: res.headers['ratelimit-limit'] ?? null,
    });

    it('should answer each kind of token the same on either path', async () => {
      const user = await createUser(t.app);
      const valid = (await createToken(t.app, user)).plaintext;
      const teamOnly = (await createToken(t.app, user, { abilities: ['team:read'] })).plaintext;
      const revoked = await createToken(t.app, user);
      await t.app.get(TokensService).revoke(Actors.operator(user.id), revoked.token.id);
      const cases: Array<[string, string | undefined, number]> = [
        ['valid', `Bearer ${valid}`, 200],
        ['lacking the ability', `Bearer ${teamOnly}`, 403],
        ['revoked', `Bearer ${revoked.plaintext}`, 401],
        ['bad checksum', `Bearer ${valid.slice(0, -1)}${valid.endsWith('a') ? 'b' : 'a'}`, 401],
        ['malformed', 'Bearer not-a-token', 401],
        ['missing', undefined, 401],
      ];
      for (const [name, authorization, status] of cases) {
        // Every spelling Express routes is authenticated by the same middleware.
        const early = seen(await get('/api/v1/user/profile', authorization));
        const guarded = seen(await get('/api/v1/user/profile/', authorization));
        expect({ name, ...guarded }).toEqual({ name, ...early });
        expect({ name, status: early.status }).toEqual({ name, status });
      }
    });

    it('should refuse a malformed or bad-checksum token without asking the database', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      t.queries.clear();
      expectError(await get('/api/v1/user/profile', 'Bearer tsr_short'), 401, 'invalid_token');
      const badChecksum = `${plaintext.slice(0, -1)}${plaintext.endsWith('a') ? 'b' : 'a'}`;
      expectError(await get('/api/v1/team', `Bearer ${badChecksum}`), 401, 'invalid_token');
      expect(t.queries.count('SELECT')).toBe(0);
    });
  });

  describe('other errors', () => {
    it('should answer unknown paths under /api with 404 and other methods with 405, in the envelope', async () => {
      const res = await get('/api/v1/nothing-here');
      expectError(res, 404, 'not_found');
      const deleted = await request(t.server).delete('/api/v1/user/profile');
      expectError(deleted, 405, 'method_not_allowed');
      expect(deleted.headers.allow).toBe('GET, HEAD');
    });

    it("should give /api in any spelling the API's answers: envelope, challenge, no-store", async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      const upper = await get('/API/V1/USER/PROFILE', `Bearer ${plaintext}`);
      expect(upper.status).toBe(200);
      expect(upper.headers['cache-control']).toBe('no-store');
      const refused = await get('/Api/v1/user/profile');
      expectError(refused, 401, 'missing_token');
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="tessera"');
      expectError(await get('/API/nothing'), 404, 'not_found');
    });

    it('should read no body on the API: a POST with malformed JSON is refused for its method', async () => {
      const res = await request(t.server)
        .post('/api/v1/team')
        .set('Content-Type', 'application/json')
        .send('{"name":');
      expectError(res, 405, 'method_not_allowed');
    });

    it('should answer malformed JSON to a page with a 400 page and no parser details', async () => {
      const res = await request(t.server)
        .post('/login')
        .set('Content-Type', 'application/json')
        .send('{"email":');
      expect(res.status).toBe(400);
      expect(res.text).not.toMatch(/JSON|position|Unexpected/);
    });

    it('should answer unknown pages outside /api with an HTML 404 page', async () => {
      const res = await request(t.server).get('/no-such-page');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('We could not find that page');
    });
  });
});

describe('API v1 on a clock the spec moves', () => {
  const clock = new ManualClock(Date.parse('2031-02-03T04:05:06.789Z'));
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
  });
  afterAll(async () => {
    await t.close();
  });

  it("should stamp answers and refusals with the app's clock when the clock is moved", async () => {
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    const profile = () =>
      request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${plaintext}`);
    expect((await profile()).body.timestamp).toBe('2031-02-03T04:05:06.789000Z');
    clock.advance(60_000);
    const answered = await profile();
    expect(answered.status).toBe(200);
    expect(answered.body.timestamp).toBe('2031-02-03T04:06:06.789000Z');
    const refused = await request(t.server).get('/api/v1/user/profile');
    expect(refused.status).toBe(401);
    expect(refused.body.timestamp).toBe('2031-02-03T04:06:06.789000Z');
  });

  it('should refuse an expired token with 401 token_expired', async () => {
    const user = await createUser(t.app);
    const { plaintext } = await createToken(t.app, user, { expiresInDays: 1 });
    const get = (path: string) =>
      request(t.server).get(path).set('Authorization', `Bearer ${plaintext}`);
    expect((await get('/api/v1/user/profile')).status).toBe(200);

    // A day and a second later.
    clock.advance(86_400_000 + 1000);

    expectError(await get('/api/v1/user/profile'), 401, 'token_expired');
  });
});

/** What a client sees when something fails that is nobody's input: here, a table gone missing. */
describe('API v1 when the database fails', () => {
  let t: TestApp;

  afterEach(async () => {
    await t.close();
  });

  it('should answer 500 internal_error in the envelope, revealing nothing internal, when a query fails', async () => {
    const logs = new LogCapture();
    t = await createTestApp({ LOG_LEVEL: 'log' }, { logs });
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    await t.dataSource.query(
      'ALTER TABLE personal_access_tokens RENAME TO personal_access_tokens_gone',
    );

    const res = await request(t.server)
      .get('/api/v1/user/profile')
      .set('Authorization', `Bearer ${plaintext}`);

    expect(res.status).toBe(500);
    const requestId = res.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'internal_error', message: 'Something went wrong on our side.', requestId },
      version: 'v1',
      timestamp: expect.any(String),
    });
    expect(res.text).not.toMatch(/personal_access_tokens|SELECT|SQLITE|ER_|at \//);
    // Support finds the failure by the id the client was given: the cause and the request line.
    const cause = logs.entries.find((e) => e.reqId === requestId && e.context === 'Errors');
    expect(cause).toMatchObject({
      level: 'error',
      err: { stack: expect.stringMatching(/personal_access_tokens/) },
    });
    expect(logs.requestLines(requestId)).toEqual([
      expect.objectContaining({ level: 'error', status: 500, route: '/api/v1/user/profile' }),
    ]);
  });
});
