import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ManualClock } from '../src/clock/clock.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { addMember, createTeam, createToken, createUser } from './factories/index.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * What a page costs the database, counted through TypeORM's logger (test/support/query-log.ts):
 * every statement the request sends, on SQLite or MariaDB as the suite runs. A page view that
 * changed nothing writes nothing; the budgets are what docs/architecture.md walks through.
 */
const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

describe('page budget', () => {
  let t: TestApp;
  let person: SignedInPerson;
  let teamId: number;
  let tokenId: number;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    person = await signedInPerson(t);
    teamId = (await createTeam(t.app, person.user, 'Budget')).id;
    tokenId = (await createToken(t.app, person.user)).token.id;
    // A first view of each page: the session's activity noted, the team switched to, and so on.
    for (const [, path] of PAGES) await person.client.get(path());
  });
  afterAll(async () => {
    await t.close();
  });

  /**
   * The pages, each with the most statements a view of it may send: what it sends today, the
   * first being the session read with its person, all within the five a page may cost.
   */
  const PAGES: [string, () => string, number][] = [
    ['the dashboard', () => '/dashboard', 2],
    ['the API tokens', () => '/settings/api-tokens', 2],
    ["a token's page", () => `/settings/api-tokens/${tokenId}`, 4],
    ['the team page', () => `/teams/${teamId}`, 4],
    ['the security log', () => '/settings/security-log', 4],
    ['the sessions', () => '/settings/sessions', 3],
  ];

  /**
   * The statements a request sends: the work it leaves for afterwards (the security log's event,
   * the mail sender's claims), in transactions of its own, is not counted (see requestQueries).
   */
  async function statementsOf(send: () => PromiseLike<{ status: number }>, status: number) {
    await t.app.get(Scheduler).drain();
    t.queries.clear();
    const res = await send();
    expect(res.status).toBe(status);
    await t.app.get(Scheduler).drain();
    return t.queries.requestQueries();
  }

  it.each(PAGES)(
    'should show %s on a warm session within its budget, writing nothing',
    async (_name, path, budget) => {
      const statements = await statementsOf(() => person.client.get(path()), 200);
      expect(statements.filter((q) => WRITE.test(q))).toEqual([]);
      expect(statements.length).toBeLessThanOrEqual(budget);
    },
  );

  it('should create a token on its page in at most 9 statements, its security log entry in its transaction', async () => {
    const _csrf = await person.client.csrfFrom('/settings/api-tokens');
    const statements = await statementsOf(
      () =>
        person.client.post('/settings/api-tokens', _csrf, {
          name: 'budget',
          abilities: 'user:read',
          expires_in_days: '30',
        }),
      200,
    );
    expect(statements.length).toBeLessThanOrEqual(9);
    const verbs = statements.map((q) => q.trimStart().split(/\s+/, 3).join(' ').toUpperCase());
    const entry = verbs.findIndex((v) => /^INSERT INTO .AUDIT_EVENTS/.test(v));
    expect(entry).toBeGreaterThan(verbs.findIndex((v) => /^(BEGIN|START)/.test(v)));
    expect(entry).toBeLessThan(verbs.indexOf('COMMIT'));
  });

  it("should show the person as the session's one read finds them, a team joined since included", async () => {
    const owner = await createUser(t.app, {
      name: 'Other Owner',
      email: 'other-owner@example.com',
    });
    const joined = await createTeam(t.app, owner, 'Joined Since');
    await addMember(t.app, joined.id, person.user, 'member');
    await t.app.get(Scheduler).drain();
    t.queries.clear();
    const page = await person.client.textOf('/dashboard');
    await t.app.get(Scheduler).drain();
    // In the header's team menu, from the same read as the session, at no cost of its own.
    expect(page).toContain('Joined Since');
    const statements = t.queries.requestQueries();
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/FROM sessions s\s+LEFT JOIN users u/);
  });

  it('should store a session a redirect changed once, before the redirect leaves', async () => {
    const { token } = await createToken(t.app, person.user, { name: 'to revoke' });
    const _csrf = await person.client.csrfFrom('/settings/api-tokens');
    await statementsOf(
      () => person.client.post(`/settings/api-tokens/${token.id}/revoke`, _csrf),
      303,
    );
    // Everything sent, the work left for afterwards included: none of it writes a session.
    const sessionWrites = t.queries.queries.filter((q) => WRITE.test(q) && /sessions/.test(q));
    expect(sessionWrites).toHaveLength(1);
    // The page it lands on finds the flash the redirect's session carried.
    expect(await person.client.textOf('/settings/api-tokens')).toContain('was revoked');
  });
});
