import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { Team } from '../src/teams/team.entity.js';
import { TokenDailyUsage } from '../src/tokens/token-daily-usage.entity.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { createTeam, createToken, createUser } from './factories/index.js';
import { InvoicesModule } from './fixtures/invoices/invoices.module.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** The deployment's abilities file: `invoices:write`, which the fixture's endpoint names. */
const ABILITIES_FILE = join(import.meta.dirname, 'fixtures', 'invoices', 'abilities.json');
const BUDGET = 5;

/**
 * docs/extending.md, proved: a module of the deployment's own (test/fixtures/invoices) adds a
 * team-scoped endpoint with one decorator naming its ability, and gets authentication, the
 * ability check, the team's policies, rate limits, usage, the audit log and its OpenAPI entry.
 */
describe("a deployment's own endpoint", () => {
  let t: TestApp;
  let contract: OpenApiContract;

  beforeAll(async () => {
    t = await createTestApp(
      { ABILITIES_FILE, RATE_LIMIT_API_PER_TOKEN: String(BUDGET) },
      { modules: [InvoicesModule] },
    );
    contract = await OpenApiContract.fetch(t.server);
  });
  afterAll(async () => {
    await t.close();
  });

  const invoice = (token?: string, body: object = { title: 'November', amount_cents: 1200 }) => {
    const req = request(t.server).post('/api/v1/invoices');
    return (token ? req.set('Authorization', `Bearer ${token}`) : req).send(body);
  };

  it('should take a token made on the tokens page with the ability from the abilities file, and count and log what it did', async () => {
    const person = await signedInPerson(t);
    const form = await person.client.agent.get('/settings/api-tokens');
    expect(form.text).toContain('value="invoices:write"');
    expect(form.text).toContain('Create invoices in the team the token acts in');
    const { value, id } = await person.client.createTokenOnPage({
      name: 'billing',
      abilities: ['invoices:write'],
      expires_in_days: '30',
    });

    const created = await invoice(value);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      team_id: person.user.currentTeamId,
      title: 'November',
      amount_cents: 1200,
    });
    contract.expectMatches('POST', '/api/v1/invoices', created);
    // Limits: the token's budget is counted and reported.
    expect(created.headers['ratelimit-limit']).toBe(String(BUDGET));

    // Usage and the team's audit log, as for Tessera's own endpoints.
    await t.app.get(TokenUsageRecorder).flush();
    const usage = await t.dataSource.getRepository(TokenDailyUsage).findBy({ tokenId: id });
    expect(usage.map((u) => u.requests)).toEqual([1]);
    await t.app.get(Scheduler).drain();
    const events = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ event: 'invoice.created', teamId: person.user.currentTeamId! });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actorKind: 'token', tokenId: id, userId: person.user.id });
    expect(JSON.parse(events[0].detail!)).toEqual({
      endpoint: 'POST /api/v1/invoices',
      id: created.body.data.id,
    });
  });

  it("should refuse it as Tessera's own endpoints are refused: no token, another ability, the team's policy, the budget", async () => {
    const user = await createUser(t.app);
    const team = await createTeam(t.app, user);
    const writer = await createToken(t.app, user, {
      abilities: ['invoices:write'],
      teamId: team.id,
    });
    const reader = await createToken(t.app, user, { abilities: ['team:read'], teamId: team.id });

    const anonymous = await invoice();
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'missing_token']);
    const scoped = await invoice(reader.plaintext);
    expect([scoped.status, scoped.body.error.code]).toEqual([403, 'insufficient_scope']);
    contract.expectMatches('POST', '/api/v1/invoices', scoped);
    const invalid = await invoice(writer.plaintext, { title: '', amount_cents: 'lots' });
    expect(invalid.status).toBe(422);
    expect(Object.keys(invalid.body.error.fields).sort()).toEqual(['amount_cents', 'title']);

    await t.dataSource
      .getRepository(Team)
      .update({ id: team.id }, { allowedAbilities: ['team:read'] });
    const policy = await invoice(writer.plaintext);
    expect([policy.status, policy.body.error.code]).toEqual([403, 'ability_not_allowed_by_team']);
    expect(policy.body.error.message).toContain('"invoices:write"');
    contract.expectMatches('POST', '/api/v1/invoices', policy);
    await t.dataSource.getRepository(Team).update({ id: team.id }, { allowedAbilities: null });

    const answers = [];
    for (let i = 0; i < BUDGET + 1; i++) answers.push((await invoice(writer.plaintext)).status);
    // Two of the budget went to the refusals above.
    expect(answers.filter((s) => s === 201)).toHaveLength(BUDGET - 2);
    expect(answers.at(-1)).toBe(429);
  });

  it('should give a POST the same Idempotency-Key handling: one invoice for two requests', async () => {
    const user = await createUser(t.app);
    const { plaintext } = await createToken(t.app, user, { abilities: ['invoices:write'] });
    const send = () => invoice(plaintext).set('Idempotency-Key', 'invoice-nov-0001');
    const [first, second] = [await send(), await send()];
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
  });

  it('should describe it in the OpenAPI document, with the ability in the catalog', () => {
    const doc = contract.document as unknown as {
      paths: Record<string, Record<string, { operationId: string; responses: object }>>;
      components: { securitySchemes: { bearer: { description: string } } };
    };
    const operation = doc.paths['/api/v1/invoices'].post;
    expect(operation.operationId).toBe('createInvoice');
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['201', '401', '403', '409', '413', '415', '422', '429']),
    );
    expect(JSON.stringify(operation.responses)).toContain('ability_not_allowed_by_team');
    expect(doc.components.securitySchemes.bearer.description).toContain(
      '`invoices:write`: Create invoices in the team the token acts in',
    );
  });
});

describe('an endpoint naming an ability the catalog lacks', () => {
  it('should keep the app from starting, and say which', async () => {
    await expect(createTestApp({}, { modules: [InvoicesModule] })).rejects.toThrow(
      'InvoicesController.create needs the ability "invoices:write", which is not in the catalog: add it to ABILITIES_FILE',
    );
  });
});
