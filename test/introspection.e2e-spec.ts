import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { Actors } from '../src/common/actor.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import { TeamMembersService } from '../src/teams/team-members.service.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { Team } from '../src/teams/team.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenDailyUsage } from '../src/tokens/token-daily-usage.entity.js';
import { generateToken } from '../src/tokens/token-format.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { TokenRegenerationService } from '../src/tokens/token-regeneration.service.js';
import { User } from '../src/users/user.entity.js';
import {
  addMember,
  createExpiredToken,
  createTeam,
  createToken,
  createUser,
} from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { ManualClock } from '../src/clock/clock.js';
import { startInstances, type Instances } from './support/instances.js';
import { OpenApiContract } from './support/openapi-contract.js';
import type { TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';

const ROOT = join(import.meta.dirname, '..');
const ABILITIES_FILE = join(ROOT, 'test', 'fixtures', 'invoices', 'abilities.json');
const EXPRESS_EXAMPLE = join(ROOT, 'docs', 'examples', 'introspection-express.mjs');
const PYTHON_EXAMPLE = join(ROOT, 'docs', 'examples', 'introspection_wsgi.py');

/** The team's service: `token=…` posted as a form, with the caller's token. */
const introspect = (server: Server, caller: string, fields: Record<string, string>) =>
  request(server)
    .post('/api/v1/introspect')
    .set('Authorization', `Bearer ${caller}`)
    .type('form')
    .send(fields);

describe('token introspection', () => {
  const clock = new ManualClock();
  let d: Instances;
  let t: TestApp;
  let a: Server;
  let b: Server;
  let contract: OpenApiContract;

  beforeAll(async () => {
    d = await startInstances(2, { RATE_LIMIT_ENABLED: 'false', ABILITIES_FILE }, { clock });
    t = d.first;
    [a, b] = d.servers;
    contract = await OpenApiContract.fetch(a);
  });
  afterAll(async () => {
    await d.close();
  });

  /** Checked on instance `server`, the answer held against the OpenAPI document. */
  async function check(server: Server, caller: string, fields: Record<string, string>) {
    const res = await introspect(server, caller, fields);
    contract.expectMatches('POST', '/api/v1/introspect', res);
    return res;
  }

  /**
   * Acme, owned by Olive, with Mia as a member working in it, and its service account `gateway`
   * whose token (tokens:introspect) the team's other services call with.
   */
  async function acme(name = 'Acme') {
    const owner = await createUser(t.app, { name: 'Olive Owner' });
    const member = await createUser(t.app, { name: 'Mia Member' });
    const team = await createTeam(t.app, owner, name);
    await addMember(t.app, team.id, member, 'member');
    await t.app.get(TeamsService).switchTeam(Actors.person(member.id), team.id);
    const accounts = t.app.get(ServiceAccountsService);
    const operator = Actors.operator();
    const gateway = await accounts.create(operator, team.id, { name: 'gateway' });
    const caller = await accounts.createToken(operator, team.id, gateway.id, {
      name: 'introspection',
      abilities: ['tokens:introspect'],
      expiresInDays: 7,
    });
    return { owner, member, team, gateway, caller: caller.plaintext };
  }

  it("should answer an active token of the caller's team in RFC 7662's shape, with whose it is and what it may do", async () => {
    const { member, team, caller } = await acme();
    const { plaintext, token } = await createToken(t.app, member, {
      name: 'laptop',
      abilities: ['user:read', 'invoices:write'],
      expiresInDays: 30,
    });
    const res = await check(b, caller, { token: plaintext });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      active: true,
      scope: 'user:read invoices:write',
      token_type: 'bearer',
      exp: Math.floor(token.expiresAt!.getTime() / 1000),
      iat: Math.floor(token.createdAt.getTime() / 1000),
      sub: String(member.id),
      username: member.email,
      token_id: token.id,
      user: { id: member.id, name: 'Mia Member', type: 'person' },
      team: { id: team.id, name: 'Acme', slug: team.slug },
      binding: 'current',
      abilities: ['user:read', 'invoices:write'],
      refusal: null,
    });
    expect(JSON.stringify(res.body)).not.toContain(plaintext);

    // The same asked as JSON; a token that never expires has no `exp`.
    const forever = await createToken(t.app, member, { name: 'forever' });
    const json = await request(a)
      .post('/api/v1/introspect')
      .set('Authorization', `Bearer ${caller}`)
      .send({ token: forever.plaintext });
    contract.expectMatches('POST', '/api/v1/introspect', json);
    expect(json.body).toMatchObject({ active: true, token_id: forever.token.id });
    expect(json.body).not.toHaveProperty('exp');
    // The service account's own token introspects as a service account's.
    const self = await check(a, caller, { token: caller });
    expect(self.body).toMatchObject({
      active: true,
      binding: 'pinned',
      scope: 'tokens:introspect',
    });
    expect(self.body.user.type).toBe('service_account');
  });

  it('should answer a value replaced by a regeneration with the end of its grace period as exp, and no iat', async () => {
    const { member, caller } = await acme();
    const { plaintext, token } = await createToken(t.app, member, {
      name: 'rotated',
      expiresInDays: 30,
    });
    const regenerated = await t.app
      .get(TokenRegenerationService)
      .regenerate(Actors.person(member.id), token.id, 10);
    const stored = await t.dataSource
      .getRepository(PersonalAccessToken)
      .findOneByOrFail({ id: token.id });
    const old = await check(b, caller, { token: plaintext });
    expect(old.body).toMatchObject({ active: true, token_id: token.id });
    expect(old.body.exp).toBe(Math.floor(stored.previousValidUntil!.getTime() / 1000));
    expect(old.body).not.toHaveProperty('iat');
    // The new value answers with its own lifetime.
    const current = await check(a, caller, { token: regenerated.plaintext });
    expect(current.body).toMatchObject({
      active: true,
      exp: Math.floor(stored.expiresAt!.getTime() / 1000),
      iat: Math.floor(stored.regeneratedAt!.getTime() / 1000),
    });
    expect(old.body.exp).toBeLessThan(current.body.exp);
    // Past the grace period, the old value is inactive.
    clock.advance(10 * 60_000 + 1_000);
    expect((await check(b, caller, { token: plaintext })).body).toEqual({ active: false });
  });

  it("should answer active: false alone for an unknown, malformed, revoked, expired or other team's token, the revocation seen at once on the other instance", async () => {
    const { owner, member, team, caller } = await acme();
    const stranger = await createUser(t.app, { name: 'Sam Stranger' });
    const elsewhere = await createToken(t.app, stranger);
    const expired = await createExpiredToken(t.app, member);
    const revoked = await createToken(t.app, member, { name: 'soon revoked' });
    // Pinned to the personal team: the member's, but not acting in Acme.
    const personal = await createToken(t.app, member, {
      name: 'personal',
      teamId: (await t.app.get(TeamsService).membershipsOf(Actors.person(member.id))).find(
        (m) => m.team.personal,
      )!.team.id,
    });
    expect((await check(b, caller, { token: revoked.plaintext })).body.active).toBe(true);
    await t.app.get(TokensService).revoke(Actors.person(member.id), revoked.token.id);

    const inactive = {
      unknown: generateToken().plaintext,
      malformed: 'not a token',
      empty: '',
      revoked: revoked.plaintext,
      expired: expired.plaintext,
      "another team's": elsewhere.plaintext,
      'pinned to another team': personal.plaintext,
    };
    for (const [what, token] of Object.entries(inactive)) {
      const res = await check(b, caller, { token });
      expect({ what, status: res.status, body: res.body }).toEqual({
        what,
        status: 200,
        body: { active: false },
      });
    }
    // Its person removed from Acme, a token that followed them there acts elsewhere.
    const following = await createToken(t.app, member, { name: 'following' });
    expect((await check(a, caller, { token: following.plaintext })).body.active).toBe(true);
    await t.app.get(TeamMembersService).removeMember(Actors.person(owner.id), team.id, member.id);
    expect((await check(a, caller, { token: following.plaintext })).body).toEqual({
      active: false,
    });
  });

  it("should answer each of the API's refusals through required_abilities, and the team's own refusals as inactive", async () => {
    const { member, team, caller, gateway } = await acme();
    const reader = await createToken(t.app, member, { name: 'reader', abilities: ['team:read'] });

    const lacking = await check(a, caller, {
      token: reader.plaintext,
      required_abilities: 'team:read invoices:write',
    });
    expect(lacking.body).toMatchObject({
      active: true,
      refusal: { code: 'insufficient_scope', message: expect.stringContaining('invoices:write') },
    });
    const enough = await check(a, caller, {
      token: reader.plaintext,
      required_abilities: 'team:read',
    });
    expect(enough.body).toMatchObject({ active: true, refusal: null });

    // What only the team's owners and admins reach, a plain member's token is refused as the API
    // refuses it, and its scope leaves it out; a service account's, what only members reach.
    const inventory = await createToken(t.app, member, {
      name: 'inventory',
      abilities: ['team:read', 'tokens:read', 'audit:read'],
    });
    const asMember = await check(a, caller, {
      token: inventory.plaintext,
      required_abilities: 'tokens:read',
    });
    const api = await request(b)
      .get('/api/v1/team/tokens')
      .set('Authorization', `Bearer ${inventory.plaintext}`);
    expect(api.status).toBe(403);
    expect(asMember.body).toMatchObject({
      active: true,
      scope: 'team:read',
      abilities: ['team:read', 'tokens:read', 'audit:read'],
      refusal: { code: api.body.error.code, message: api.body.error.message },
    });
    // The service account's own token, holding members:read from before the rule (a database
    // edit: none can be given it today), checks itself.
    const tokens = t.dataSource.getRepository(PersonalAccessToken);
    const own = await tokens.findOneByOrFail({ userId: gateway.id });
    await tokens.update({ id: own.id }, { abilities: ['tokens:introspect', 'members:read'] });
    const roster = await request(a)
      .get('/api/v1/team/members')
      .set('Authorization', `Bearer ${caller}`);
    expect(roster.status).toBe(403);
    const asAccount = await check(b, caller, { token: caller, required_abilities: 'members:read' });
    expect(asAccount.body).toMatchObject({
      active: true,
      scope: 'tokens:introspect',
      refusal: { code: roster.body.error.code, message: roster.body.error.message },
    });
    await tokens.update({ id: own.id }, { abilities: ['tokens:introspect'] });

    // A hint of another kind of token changes nothing (RFC 7662: the server searches on).
    for (const hint of ['access_token', 'refresh_token', 'urn:example:other']) {
      const hinted = await check(a, caller, {
        token: reader.plaintext,
        token_type_hint: hint,
        required_abilities: 'team:read',
      });
      contract.expectMatches('POST', '/api/v1/introspect', hinted);
      expect(hinted.body).toEqual(enough.body);
    }

    // The team's policy: an ability it does not allow, then its own refusals.
    const teams = t.dataSource.getRepository(Team);
    await teams.update({ id: team.id }, { allowedAbilities: ['tokens:introspect', 'user:read'] });
    const notAllowed = await check(b, caller, {
      token: reader.plaintext,
      required_abilities: 'team:read',
    });
    expect(notAllowed.body).toMatchObject({
      active: true,
      scope: '',
      refusal: { code: 'ability_not_allowed_by_team' },
    });
    await teams.update({ id: team.id }, { allowedAbilities: null, tokenMaxLifetimeDays: 7 });
    const tooLong = await check(b, caller, { token: reader.plaintext });
    expect(tooLong.body).toEqual({
      active: false,
      refusal: { code: 'token_lifetime_exceeds_policy', message: expect.any(String) },
    });
    await teams.update({ id: team.id }, { tokenMaxLifetimeDays: null, requireTwoFactor: true });
    const noSecondFactor = await check(b, caller, { token: reader.plaintext });
    expect(noSecondFactor.body).toEqual({
      active: false,
      refusal: { code: 'two_factor_required', message: expect.any(String) },
    });
    // The service account calling asks no second factor of itself: it is still let in.
    expect((await check(a, caller, { token: caller })).body.active).toBe(true);
  });

  it("should refuse a caller without tokens:introspect, or whose team does not allow it, and bad input with the API's codes", async () => {
    const { member, team, caller } = await acme();
    const plain = await createToken(t.app, member, { abilities: ['team:read'] });
    const lacking = await check(a, plain.plaintext, { token: caller });
    expect([lacking.status, lacking.body.error.code]).toEqual([403, 'insufficient_scope']);

    await t.dataSource
      .getRepository(Team)
      .update({ id: team.id }, { allowedAbilities: ['team:read'] });
    const notAllowed = await check(b, caller, { token: plain.plaintext });
    expect([notAllowed.status, notAllowed.body.error.code]).toEqual([
      403,
      'ability_not_allowed_by_team',
    ]);
    await t.dataSource.getRepository(Team).update({ id: team.id }, { allowedAbilities: null });

    const missing = await check(a, caller, {});
    expect([missing.status, missing.body.error.code]).toEqual([422, 'validation_failed']);
    expect(missing.body.error.fields).toHaveProperty('token');
    const unknownAbility = await check(a, caller, {
      token: plain.plaintext,
      required_abilities: 'invoices:delete',
    });
    expect(unknownAbility.status).toBe(422);
    expect(unknownAbility.body.error.fields.required_abilities).toContain('invoices:delete');
    // Names run together, and text that could be split between names in countless ways, are
    // refused in one pass (the latter once blocked the server for minutes).
    for (const required of ['team:readinvoices:write', `a${':aaaa'.repeat(390)}!`]) {
      const malformed = await check(a, caller, {
        token: plain.plaintext,
        required_abilities: required,
      });
      expect([malformed.status, malformed.body.error.code]).toEqual([422, 'validation_failed']);
      expect(malformed.body.error.fields.required_abilities).toMatch(/separated by spaces/);
    }
    // As JSON, an optional field given as null is refused as the description's text would be.
    for (const field of ['required_abilities', 'token_type_hint']) {
      const nulled = await request(a)
        .post('/api/v1/introspect')
        .set('Authorization', `Bearer ${caller}`)
        .send({ token: plain.plaintext, [field]: null });
      expect([nulled.status, Object.keys(nulled.body.error.fields)]).toEqual([422, [field]]);
    }
    // A form names a field the request does not have, even one the form parser would drop.
    const inherited = await request(a)
      .post('/api/v1/introspect')
      .set('Authorization', `Bearer ${caller}`)
      .type('form')
      .send(`token=${plain.plaintext}&%5F%5Fproto%5F%5F=1&constructor=2`);
    contract.expectMatches('POST', '/api/v1/introspect', inherited);
    expect([inherited.status, inherited.body.error.fields]).toEqual([
      422,
      {
        ['__proto__']: '__proto__ is not a field of this request.',
        constructor: 'constructor is not a field of this request.',
      },
    ]);
    const text = await request(a)
      .post('/api/v1/introspect')
      .set('Authorization', `Bearer ${caller}`)
      .set('Content-Type', 'text/plain')
      .send(`token=${plain.plaintext}`);
    contract.expectMatches('POST', '/api/v1/introspect', text);
    expect([text.status, text.body.error.code]).toEqual([415, 'unsupported_media_type']);
    // A short form of too many fields is told as such, not as a body too large.
    const crowded = await request(a)
      .post('/api/v1/introspect')
      .set('Authorization', `Bearer ${caller}`)
      .type('form')
      .send(Array.from({ length: 1001 }, (_, i) => `f${i}=`).join('&'));
    contract.expectMatches('POST', '/api/v1/introspect', crowded);
    expect([crowded.status, crowded.body.error]).toEqual([
      413,
      { code: 'payload_too_large', message: 'The form has more than 1000 fields.' },
    ]);
    const noCaller = await check(a, generateToken().plaintext, { token: plain.plaintext });
    expect([noCaller.status, noCaller.body.error.code]).toEqual([401, 'invalid_token']);
    // A caller that acts in no team (its current team gone) has no team's tokens to check, and
    // is told so as GET /team tells it.
    const adrift = await createToken(t.app, member, { abilities: ['tokens:introspect'] });
    await t.dataSource.getRepository(User).update({ id: member.id }, { currentTeamId: null });
    const noTeam = await check(b, adrift.plaintext, { token: plain.plaintext });
    expect([noTeam.status, noTeam.body.error.code]).toEqual([404, 'not_found']);
    // A form is the exception of this endpoint alone: the others still want JSON.
    const elsewhere = await request(a)
      .post('/api/v1/team/invitations')
      .set('Authorization', `Bearer ${caller}`)
      .type('form')
      .send({ email: 'ann@example.com' });
    expect(elsewhere.status).toBe(415);
  });

  it("should count a checked token's use in its usage, and each caller's checks of a minute as one event of the team's audit log", async () => {
    const { member, team, gateway, caller } = await acme();
    const checked = await createToken(t.app, member, { name: 'counted' });
    for (let i = 0; i < 5; i++) await check(i % 2 ? a : b, caller, { token: checked.plaintext });
    await check(a, caller, { token: generateToken().plaintext });
    // Each instance writes its minute, then its audit events, one after the other.
    for (const app of d.apps) {
      await app.app.get(TokenUsageRecorder).flush();
      await app.app.get(Scheduler).drain();
    }
    const usage = await t.dataSource
      .getRepository(TokenDailyUsage)
      .findBy({ tokenId: checked.token.id });
    expect(usage.reduce((n, day) => n + day.requests, 0)).toBe(5);
    const stored = await t.dataSource
      .getRepository(PersonalAccessToken)
      .findOneByOrFail({ id: checked.token.id });
    expect(stored.lastUsedAt).not.toBeNull();
    const events = await waitFor(async () => {
      const found = await t.dataSource
        .getRepository(AuditEvent)
        .findBy({ teamId: team.id, event: 'token.introspected' });
      return found.length === 2 ? found : null;
    });
    // One per instance that was called, each counting its own checks.
    const details = events.map((e) => JSON.parse(e.detail!) as Record<string, number>);
    expect(details.reduce((n, e) => n + e.checks, 0)).toBe(6);
    expect(details.reduce((n, e) => n + e.inactive, 0)).toBe(1);
    expect(events.every((e) => e.actorUserId === gateway.id)).toBe(true);
  });

  /** Runs an example of docs/introspection.md as a service of the team, calling Tessera. */
  async function runExample(command: string, file: string, caller: string) {
    const { port } = a.address() as AddressInfo;
    const service = spawn(command, [file], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TESSERA_URL: `http://127.0.0.1:${port}`,
        TESSERA_TOKEN: caller,
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    service.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    service.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => service.on('close', resolve));
    const listening = await waitFor(() => /listening on (\d+)/.exec(output)?.[1], {
      message: () => `the example did not start:\n${output}`,
    });
    return {
      post: (token?: string) =>
        fetch(`http://127.0.0.1:${listening}/invoices`, {
          method: 'POST',
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        }),
      stop: async () => {
        service.kill('SIGTERM');
        await exited;
      },
    };
  }

  /** What the examples answer: the writer's token let in, the others refused as they should be. */
  async function expectProtected(
    example: Awaited<ReturnType<typeof runExample>>,
    member: { id: number },
  ) {
    const writer = await createToken(t.app, member, { abilities: ['invoices:write'] });
    const reader = await createToken(t.app, member, { abilities: ['team:read'] });
    const created = await example.post(writer.plaintext);
    expect([created.status, await created.json()]).toMatchObject([
      201,
      { created_by: 'Mia Member' },
    ]);
    const scope = await example.post(reader.plaintext);
    expect([scope.status, await scope.json()]).toEqual([403, { error: 'insufficient_scope' }]);
    const none = await example.post();
    expect([none.status, await none.json()]).toEqual([401, { error: 'invalid_token' }]);
    await t.app.get(TokensService).revoke(Actors.person(member.id), writer.token.id);
    const revoked = await example.post(writer.plaintext);
    expect([revoked.status, await revoked.json()]).toEqual([401, { error: 'invalid_token' }]);
  }

  it('should protect the Express example of docs/introspection.md end to end: a service account token checks the tokens of its clients', async () => {
    const { member, caller } = await acme();
    const docs = readFileSync(join(ROOT, 'docs', 'introspection.md'), 'utf8');
    const middleware = /^export function tessera[\s\S]*?^}$/m.exec(
      readFileSync(EXPRESS_EXAMPLE, 'utf8'),
    )![0];
    // The page shows the very middleware the test runs.
    expect(docs).toContain(middleware);
    const example = await runExample(process.execPath, EXPRESS_EXAMPLE, caller);
    try {
      await expectProtected(example, member);
    } finally {
      await example.stop();
    }
  });

  it("should protect the Python example of docs/introspection.md the same way, with Python's standard library only", async () => {
    const { member, caller } = await acme();
    const docs = readFileSync(join(ROOT, 'docs', 'introspection.md'), 'utf8');
    const middleware = /^def tessera[\s\S]*?^ {4}return protected$/m.exec(
      readFileSync(PYTHON_EXAMPLE, 'utf8'),
    )![0];
    expect(docs).toContain(middleware);
    const example = await runExample('python3', PYTHON_EXAMPLE, caller);
    try {
      await expectProtected(example, member);
    } finally {
      await example.stop();
    }
  });
});

describe('token introspection under a burst', () => {
  const LIMIT = 10;
  let d: Instances;

  beforeAll(async () => {
    d = await startInstances(2, {
      RATE_LIMIT_INTROSPECTIONS_PER_TOKEN: String(LIMIT),
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      RATE_LIMIT_REDIS_PREFIX: `tessera-test:${randomBytes(6).toString('hex')}:`,
    });
  });
  afterAll(async () => {
    await d.close();
  });

  it("should check no more than the caller's budget of introspections, of a burst sent to two instances, and leave its other budget alone", async () => {
    const t: TestApp = d.first;
    const owner = await createUser(t.app, { name: 'Olive Owner' });
    const team = await createTeam(t.app, owner, 'Acme');
    const accounts = t.app.get(ServiceAccountsService);
    const gateway = await accounts.create(Actors.operator(), team.id, { name: 'gateway' });
    const { plaintext: caller } = await accounts.createToken(
      Actors.operator(),
      team.id,
      gateway.id,
      {
        name: 'gateway',
        abilities: ['tokens:introspect', 'team:read'],
      },
    );
    const answers = await burst(40, d.servers, (_, server) =>
      introspect(server, caller, { token: caller }),
    );
    expect(tally(answers, (r) => String(r.status))).toEqual({ '200': LIMIT, '429': 40 - LIMIT });
    expect(answers.find((r) => r.status === 429)!.headers['retry-after']).toMatch(/^\d+$/);
    // Its API requests count on a budget of their own.
    const own = await request(d.servers[1])
      .get('/api/v1/team')
      .set('Authorization', `Bearer ${caller}`);
    expect(own.status).toBe(200);
  });
});
