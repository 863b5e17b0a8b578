import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { declaredRoutes } from './support/declared-routes.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

describe('methods a path does not take', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('should answer 405 with Allow for every route asked with a method nobody takes there', async () => {
    const routes = declaredRoutes(t.app);
    expect(routes.length).toBeGreaterThanOrEqual(15);
    const wrong: string[] = [];
    const taken = (path: string) => routes.filter((r) => r.path === path).map((r) => r.method);
    for (const { method, path } of routes) {
      // A method no route of the path takes (most take one; the API's `/members/:id` two).
      const other = (['PATCH', 'PUT', 'DELETE'] as const).find((m) => !taken(path).includes(m))!;
      const res = await request(t.server)[other.toLowerCase() as 'patch'](
        path.replace(/:\w+/g, '1'),
      );
      const allowed = (res.headers.allow ?? '').split(', ');
      if (res.status !== 405 || !allowed.includes(method)) {
        wrong.push(`${other} ${path} (${method}): ${res.status}, Allow: ${res.headers.allow}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should answer an API path in the JSON envelope, before any token is looked at', async () => {
    const res = await request(t.server).post('/api/v1/team');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.body).toEqual({
      success: false,
      error: { code: 'method_not_allowed', message: 'That method is not allowed here.' },
      version: 'v1',
      timestamp: expect.any(String),
    });
  });

  it('should answer a page with an error page, before CSRF protection and the body parsers', async () => {
    const client = new WebClient(t.server);
    const res = await client.agent.delete('/dashboard').type('form').send('x=1');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('That method is not allowed here.');
    // A route that takes POST still wants its CSRF token: the check is for methods, not forms.
    expect((await client.agent.post('/teams').type('form').send('name=x')).status).toBe(403);
  });

  it('should name every method taken at a path, and only those', async () => {
    expect((await request(t.server).put('/teams')).headers.allow).toBe('GET, HEAD, POST');
    expect((await request(t.server).put('/logout')).headers.allow).toBe('POST');
    expect((await request(t.server).delete('/health/live')).headers.allow).toBe('GET, HEAD');
  });

  it("should lead a GET of a form's address to the page the form is on, never to a 405", async () => {
    const cases: Record<string, string> = {
      '/settings/api-tokens/5/regenerate': '/settings/api-tokens/5',
      '/settings/api-tokens/5/revoke': '/settings/api-tokens/5',
      '/teams/3/transfer': '/teams/3',
      '/teams/3/members/7/role': '/teams/3',
      '/settings/two-factor/disable': '/settings/security',
      '/settings/account/delete': '/settings/profile',
      '/logout': '/',
    };
    const seen: Record<string, string> = {};
    for (const path of Object.keys(cases)) {
      const res = await request(t.server).get(path);
      const head = await request(t.server).head(path);
      seen[path] =
        `${res.status} ${res.headers.location}, HEAD ${head.status} ${head.headers.location}`;
    }
    expect(seen).toEqual(
      Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, `303 ${v}, HEAD 303 ${v}`])),
    );

    // Every form's address that no page has: GET leads to a page (or to what answers GET there).
    const routes = declaredRoutes(t.app);
    const pages = routes
      .filter((r) => r.method === 'GET')
      .map((r) => new RegExp(`^${r.path.replace(/:\w+/g, '[^/]+')}$`));
    const wrong: string[] = [];
    for (const { path } of routes.filter((r) => r.method === 'POST')) {
      const res = await request(t.server).get(path.replace(/:\w+/g, '1'));
      if (path.startsWith('/api/')) {
        // An API path that lists with GET asks for a token; any other answers 405.
        const lists = routes.some((r) => r.path === path && r.method === 'GET');
        if (res.status !== (lists ? 401 : 405)) wrong.push(`${path}: ${res.status}`);
      } else if (res.status === 405) {
        wrong.push(`${path}: 405`);
      } else if (
        res.status === 303 &&
        !pages.some((page) => page.test(res.headers.location.split('?')[0]))
      ) {
        wrong.push(`${path}: 303 to ${res.headers.location}, which is no page`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('should answer the paths served beside the routes: the API description and the assets', async () => {
    const page = await request(t.server).get('/login');
    const css = /href="(\/assets\/app\.[0-9a-f]{8}\.css)"/.exec(page.text)![1];
    for (const path of ['/api/docs', '/api/v1/openapi.json', css]) {
      const res = await request(t.server).post(path);
      expect({ path, status: res.status, allow: res.headers.allow }).toEqual({
        path,
        status: 405,
        allow: 'GET, HEAD',
      });
    }
  });

  it('should keep answering HEAD wherever GET is answered', async () => {
    const page = await request(t.server).head('/login');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect((await request(t.server).head('/api/v1/team')).status).toBe(401);
    expect((await request(t.server).head('/health/live')).status).toBe(200);
  });

  it('should answer 404, not 405, where nothing is served whatever the method', async () => {
    for (const send of [
      () => request(t.server).post('/no-such-page'),
      () => request(t.server).put('/api/v1/nothing'),
      () => request(t.server).delete('/teams/1/nothing'),
    ]) {
      const res = await send();
      expect(res.status).toBe(404);
      expect(res.headers.allow).toBeUndefined();
    }
  });

  it('should answer OPTIONS with 405 and Allow without CORS, and CORS preflights as before', async () => {
    const plain = await request(t.server).options('/api/v1/team');
    expect(plain.status).toBe(405);
    expect(plain.headers.allow).toBe('GET, HEAD');

    const withCors = await createTestApp({ CORS_ORIGINS: 'https://app.example.com' });
    try {
      const preflight = await request(withCors.server)
        .options('/api/v1/team')
        .set('Origin', 'https://app.example.com')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'Authorization');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(preflight.headers['access-control-allow-methods']).toBe('GET,HEAD');
    } finally {
      await withCors.close();
    }
  });
});
