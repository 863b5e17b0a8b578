import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { Session } from '../src/auth/session.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { NEW_TOKEN_VALUE, visibleText } from './support/html.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const PAGE = '/settings/api-tokens';

describe('Account Settings > API Tokens', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const signedIn = () =>
    signedInPerson(t, { name: 'Token Person', email: uniqueEmail('tokens'), register: true });

  const api = (path: string, token: string) =>
    request(t.server).get(path).set('Authorization', `Bearer ${token}`);
  const tokens = () => t.dataSource.getRepository(PersonalAccessToken);

  it('should show how to use the API, linked from the dashboard and this page: its base URL and a curl line for every endpoint the API document names', async () => {
    const { client } = await signedIn();
    for (const from of ['/dashboard', PAGE]) {
      expect((await client.get(from)).text).toContain('href="/use-the-api"');
    }
    const page = await client.get('/use-the-api');
    expect(page.status).toBe(200);
    const text = visibleText(page.text);
    expect(page.text).toContain('href="/api/docs"');
    const base = /data-api-base>([^<]+)</.exec(page.text)![1];
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    const document = (await request(t.server).get('/api/v1/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => [method.toUpperCase(), path] as const),
    );
    expect(operations.length).toBeGreaterThan(10);
    const shown = [...text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/api\/v1\/\S*)/g)].map(
      (m) => `${m[1]} ${m[2].replace(/\/42\b/, '/{id}')}`,
    );
    expect(new Set(shown)).toEqual(new Set(operations.map(([m, p]) => `${m} ${p}`)));
    for (const [method, path] of operations) {
      const line = `curl ${method === 'GET' ? '' : `-X ${method} `}-H "Authorization: Bearer $TOKEN"`;
      expect(text).toContain(line);
      expect(text).toContain(`${base}${path.replace('/api/v1', '').replace('{id}', '42')}`);
    }
    expect((await request(t.server).get('/use-the-api')).headers.location).toMatch(/^\/login/);
  });

  it('should show a new token once, with a copy button and a warning, then never again', async () => {
    const { client, user } = await signedIn();
    const created = await client.submit(PAGE, PAGE, {
      name: 'Deploy script',
      abilities: ['user:read', 'team:read'],
      expires_in_days: '30',
    });
    expect(created.status).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');

    const page = created;
    const plaintext = NEW_TOKEN_VALUE.exec(page.text)?.[1];
    expect(plaintext).toBeDefined();
    expect(page.text).toContain('data-copy-target="new-token"');
    expect(visibleText(page.text)).toContain('it will not be shown again');

    const profile = await api('/api/v1/user/profile', plaintext!);
    expect(profile.status).toBe(200);
    expect(profile.body.data.id).toBe(user.id);

    const reloaded = await client.get(PAGE);
    expect(reloaded.text).not.toContain(plaintext!);
    expect(reloaded.text).not.toMatch(NEW_TOKEN_VALUE);
    expect(visibleText(reloaded.text)).toContain(`tsr_…${plaintext!.slice(-4)}`);

    const [row] = await tokens().findBy({ userId: user.id });
    expect(row.tokenHash).toBe(createHash('sha256').update(plaintext!).digest('hex'));
    const sessionDump = JSON.stringify(await t.dataSource.getRepository(Session).find());
    expect(sessionDump).not.toContain(plaintext!.slice(4, -4));
  });

  it('should list active tokens with name, abilities, dates and the last four characters', async () => {
    const { client, user } = await signedIn();
    const { plaintext } = await createToken(t.app, user, {
      name: 'Read-only bot',
      abilities: ['team:read'],
      expiresInDays: 7,
    });
    await api('/api/v1/team', plaintext);
    const revoked = await createToken(t.app, user, { name: 'Old laptop' });
    await client.submit(PAGE, `${PAGE}/${revoked.token.id}/revoke`);

    // Revoked tokens are listed apart, below the active ones (token-lifecycle.e2e-spec.ts).
    const [active] = (await client.get(PAGE)).text.split('Revoked and expired');
    const text = visibleText(active);
    expect(text).toContain('Read-only bot');
    expect(text).toContain(`tsr_…${plaintext.slice(-4)}`);
    expect(text).toMatch(
      /Read-only bot tsr_…\w{4} team:read current team \d{4}-\d{2}-\d{2} (just now|1 minute ago) \d{4}-\d{2}-\d{2} Revoke/,
    );
    expect(text).not.toContain('Old laptop tsr_');
  });

  it('should keep the values and say what is wrong when the form is refused, creating nothing', async () => {
    const { client, user } = await signedIn();
    const res = await client.submit(PAGE, PAGE, { name: '   ', expires_in_days: '12' });
    expect(res.headers.location).toBe(PAGE);
    const text = visibleText((await client.get(PAGE)).text);
    expect(text).toContain('Give the token a name.');
    expect(text).toContain('Choose at least one ability.');
    expect(text).toContain('Choose an expiry from the list.');
    expect(await tokens().countBy({ userId: user.id })).toBe(0);
  });

  it('should refuse names with control or invisible characters', async () => {
    const { client, user } = await signedIn();
    for (const name of [
      'nul\u0000byte',
      'two\nlines',
      '\u200b',
      '\u202eevil',
      '\u3164',
      '\u2800',
    ]) {
      const res = await client.submit(PAGE, PAGE, { name, abilities: 'user:read' });
      expect(res.headers.location).toBe(PAGE);
      expect(visibleText((await client.get(PAGE)).text)).toContain('Name must be visible text');
    }
    const ok = await client.submit(PAGE, PAGE, { name: 'Family 👨‍👩‍👧 bot', abilities: 'user:read' });
    expect(ok.status).toBe(200);
    expect(await tokens().countBy({ userId: user.id })).toBe(1);
  });

  it('should tell browsers never to keep the page, so Back cannot show a token again', async () => {
    const { client } = await signedIn();
    await client.submit(PAGE, PAGE, { name: 'Back button', abilities: 'user:read' });
    const page = await client.get(PAGE);
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('should revoke a token so that the very next API request is refused', async () => {
    const { client, user } = await signedIn();
    const { plaintext, token } = await createToken(t.app, user, { name: 'CI' });
    expect((await api('/api/v1/user/profile', plaintext)).status).toBe(200);

    const res = await client.submit(PAGE, `${PAGE}/${token.id}/revoke`);
    expect(res.status).toBe(303);
    expect(visibleText((await client.get(PAGE)).text)).toContain('Token "CI" was revoked.');

    const after = await api('/api/v1/user/profile', plaintext);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('token_revoked');
  });

  it("should answer another person's token id with a 404 page and leave the token working", async () => {
    const { client } = await signedIn();
    const other = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, other);

    const res = await client.submit(PAGE, `${PAGE}/${token.id}/revoke`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect((await tokens().findOneByOrFail({ id: token.id })).revokedAt).toBeNull();
    expect((await api('/api/v1/user/profile', plaintext)).status).toBe(200);

    for (const id of ['999999999', 'abc', '1e3', '-1']) {
      expect((await client.submit(PAGE, `${PAGE}/${id}/revoke`)).status).toBe(404);
    }
  });

  it('should refuse a revocation without the CSRF token and keep the token', async () => {
    const { client, user } = await signedIn();
    const { plaintext, token } = await createToken(t.app, user);
    const res = await client.agent.post(`${PAGE}/${token.id}/revoke`).type('form').send({});
    expect(res.status).toBe(403);
    expect((await api('/api/v1/user/profile', plaintext)).status).toBe(200);
  });
});
