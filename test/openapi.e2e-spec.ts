import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { ManualClock } from '../src/clock/clock.js';
import { User } from '../src/users/user.entity.js';
import {
  createExpiredToken,
  createRevokedToken,
  createToken,
  createUser,
} from './factories/index.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const ENDPOINTS = [
  { path: '/api/v1/user/profile', ability: 'user:read', other: 'team:read' },
  { path: '/api/v1/team', ability: 'team:read', other: 'user:read' },
  // Any valid token may read itself: a token with one ability is as good as any.
  { path: '/api/v1/token', ability: undefined, other: 'team:read' },
] as const;

describe('the OpenAPI document', () => {
  let t: TestApp;
  let contract: OpenApiContract;

  beforeAll(async () => {
    t = await createTestApp(
      { RATE_LIMIT_API_PER_TOKEN: '3', RATE_LIMIT_API_ANONYMOUS_PER_IP: '1000' },
      // Its expired tokens are made in the past (createExpiredToken).
      { clock: new ManualClock() },
    );
    contract = await OpenApiContract.fetch(t.server);
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every operation of the API by its stable id: what a generated client calls. */
  const OPERATIONS = {
    'GET /api/v1/user/profile': 'getProfile',
    'GET /api/v1/user/teams': 'listTeams',
    'GET /api/v1/team': 'getTeam',
    'GET /api/v1/team/members': 'listMembers',
    'PATCH /api/v1/team/members/{id}': 'updateMemberRole',
    'DELETE /api/v1/team/members/{id}': 'removeMember',
    'GET /api/v1/team/invitations': 'listInvitations',
    'POST /api/v1/team/invitations': 'createInvitation',
    'DELETE /api/v1/team/invitations/{id}': 'deleteInvitation',
    'GET /api/v1/team/tokens': 'listTeamTokens',
    'GET /api/v1/team/audit-log': 'listAuditEvents',
    'GET /api/v1/token': 'getToken',
    'POST /api/v1/introspect': 'introspectToken',
  };

  type Operation = {
    operationId: string;
    security: object[];
    parameters?: { name: string; in: string }[];
    responses: Record<
      string,
      { $ref?: string; content?: unknown; headers?: Record<string, unknown> }
    >;
  };
  const operations = () =>
    Object.entries(
      contract.document.paths as unknown as Record<string, Record<string, Operation>>,
    ).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );

  it('should describe every operation by a stable id, the bearer scheme with the ability catalog, and every answer, as OpenAPI 3.1', () => {
    const doc = contract.document;
    expect(doc.openapi).toBe('3.1.0');
    const scheme = doc.components.securitySchemes.bearer as { type: string; description: string };
    expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const ability of [
      'user:read',
      'team:read',
      'members:read',
      'members:write',
      'tokens:read',
      'audit:read',
      'tokens:introspect',
    ]) {
      expect(scheme.description).toContain(`\`${ability}\``);
    }
    const found = Object.fromEntries(
      operations()
        .filter(({ method }) => method !== 'HEAD')
        .map(({ method, path, op }) => [`${method} ${path}`, op.operationId]),
    );
    expect(found).toEqual(OPERATIONS);
    for (const { method, path, op } of operations()) {
      const statuses = Object.keys(op.responses);
      // Introspection answers as RFC 7662 says: 200, its object without the envelope.
      const introspection = path === '/api/v1/introspect';
      const success =
        method === 'DELETE' ? '204' : method === 'POST' && !introspection ? '201' : '200';
      expect({ method, path, statuses }).toEqual({
        method,
        path,
        statuses: expect.arrayContaining([success, '400', '401', '429', '431', '500', '503']),
      });
      expect(op.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(op.responses[success].headers ?? {})).toEqual(
        expect.arrayContaining([
          'X-Request-Id',
          'RateLimit-Limit',
          'RateLimit-Remaining',
          'RateLimit-Reset',
        ]),
      );
      expect(Object.keys(op.responses['429'].headers ?? {})).toContain('Retry-After');
      expect(Object.keys(op.responses['401'].headers ?? {})).toContain('WWW-Authenticate');
      // Each error answer names its codes; every answer but a 204, 304 or HEAD's has a body.
      for (const [status, response] of Object.entries(op.responses)) {
        if (response.$ref || ['204', '304'].includes(status) || method === 'HEAD') continue;
        expect({ method, path, status, body: Boolean(response.content) }).toEqual({
          method,
          path,
          status,
          body: true,
        });
      }
      if (method === 'GET') {
        expect(statuses).toContain('304');
        expect(op.parameters?.map((p) => p.name)).toContain('If-None-Match');
      }
      // Safe to repeat, introspection takes none: every other POST does.
      if (method === 'POST' && !introspection) {
        expect(op.parameters?.map((p) => p.name)).toContain('Idempotency-Key');
      }
    }
    expect(Object.keys(doc.paths['/api/v1/team'].get.responses)).toContain('404');
  });

  it('should list only operations that exist: HEAD wherever GET is, and 405 described once, as every path answers it with Allow', async () => {
    const paths = contract.document.paths as unknown as Record<string, Record<string, Operation>>;
    const { responses } = contract.document.components as unknown as {
      responses: Record<string, { headers: Record<string, unknown> }>;
    };
    expect(Object.keys(responses.MethodNotAllowed.headers)).toContain('Allow');
    // No operation stands for a method a path does not take.
    for (const { op } of operations()) expect(Object.keys(op.responses)).not.toEqual(['405']);
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    for (const [path, item] of Object.entries(paths)) {
      const concrete = path.replace('{id}', '1');
      const taken = Object.keys(item).map((m) => m.toUpperCase());
      if (item.get) {
        // HEAD answers as GET does, without a body.
        expect(Object.keys(item.head.responses)).toEqual(Object.keys(item.get.responses));
        expect(Object.values(item.head.responses).some((r) => r.content)).toBe(false);
        const head = await request(t.server).head(concrete);
        expect(item.head.responses[String(head.status)]).toBeDefined();
      }
      for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
        if (item[method]) continue;
        const res = await request(t.server)
          [method](concrete)
          .set('Authorization', `Bearer ${plaintext}`);
        expect({
          path,
          method,
          status: res.status,
          allow: res.headers.allow?.split(', ').sort(),
        }).toEqual({
          path,
          method,
          status: 405,
          allow: [...taken].sort(),
        });
      }
    }
  });

  it('should name the server at the public URL, the license and a contact', async () => {
    const { info, servers } = contract.document;
    expect(servers).toEqual([{ url: 'http://localhost:3000', description: expect.any(String) }]);
    expect(info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(info.contact).toEqual({ name: 'Tessera', url: 'http://localhost:3000' });

    const deployed = await createTestApp({ APP_URL: 'https://tessera.example.com/' });
    try {
      const doc = (await request(deployed.server).get('/api/v1/openapi.json')).body;
      expect(doc.servers).toEqual([
        { url: 'https://tessera.example.com', description: expect.any(String) },
      ]);
    } finally {
      await deployed.close();
    }
  });

  it("should answer the document as JSON without a token, and the docs page with the app's own assets", async () => {
    const json = await request(t.server).get('/api/v1/openapi.json');
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);

    const page = await request(t.server).get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const url = new URL(asset, 'http://localhost/api/docs').pathname;
      expect({ url, status: (await request(t.server).get(url)).status }).toEqual({
        url,
        status: 200,
      });
    }
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    // Only the files the page uses: not swagger-ui-dist's demo page, which loads a remote API.
    for (const other of [
      '/api/docs/index.html',
      '/api/docs/swagger-initializer.js',
      '/api/docs/LICENSE',
    ]) {
      expect({ other, status: (await request(t.server).get(other)).status }).toEqual({
        other,
        status: 404,
      });
    }
  });

  describe.each(ENDPOINTS)('$path', ({ path, ability, other }) => {
    const get = (authorization?: string) => {
      const req = request(t.server).get(path);
      return authorization ? req.set('Authorization', authorization) : req;
    };

    it('should match the document when it succeeds', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      const res = await get(`Bearer ${plaintext}`);
      expect(res.status).toBe(200);
      contract.expectMatches('GET', path, res);
    });

    it('should match the document for every authentication failure', async () => {
      const user = await createUser(t.app);
      const revoked = await createRevokedToken(t.app, user);
      const expired = await createExpiredToken(t.app, user);
      const scoped = await createToken(t.app, user, { abilities: [other] });

      const answers = {
        missing_token: await get(),
        invalid_token: await get('Bearer tsr_000000000000000000000000000000000000'),
        token_revoked: await get(`Bearer ${revoked.plaintext}`),
        token_expired: await get(`Bearer ${expired.plaintext}`),
        insufficient_scope: await get(`Bearer ${scoped.plaintext}`),
      };
      for (const [code, res] of Object.entries(answers)) {
        const needsNoAbility = code === 'insufficient_scope' && !ability;
        expect({
          code: needsNoAbility ? 'none' : (res.body as { error: { code: string } }).error.code,
          status: res.status,
        }).toEqual({
          code: needsNoAbility ? 'none' : code,
          status: needsNoAbility ? 200 : code === 'insufficient_scope' ? 403 : 401,
        });
        contract.expectMatches('GET', path, res);
      }
      expect(ability).not.toBe(other);
      const documented = Object.keys(contract.document.paths[path].get.responses);
      expect(documented.includes('403')).toBe(Boolean(ability));
    });

    it('should match the document when the token has used up its budget', async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      let res = await get(`Bearer ${plaintext}`);
      for (let i = 0; i < 5 && res.status !== 429; i++) res = await get(`Bearer ${plaintext}`);
      expect(res.status).toBe(429);
      contract.expectMatches('GET', path, res);
    });
  });

  it('should match the document when the user has no current team', async () => {
    const user = await createUser(t.app);
    const { plaintext } = await createToken(t.app, user);
    await t.dataSource.getRepository(User).update({ id: user.id }, { currentTeamId: null });

    const res = await request(t.server)
      .get('/api/v1/team')
      .set('Authorization', `Bearer ${plaintext}`);

    expect(res.status).toBe(404);
    contract.expectMatches('GET', '/api/v1/team', res);
  });

  it('should fail a response the document does not describe', async () => {
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    const res = await request(t.server)
      .get('/api/v1/user/profile')
      .set('Authorization', `Bearer ${plaintext}`);

    const extraField = { ...res, body: { ...res.body, data: { ...res.body.data, admin: true } } };
    expect(() =>
      contract.expectMatches('GET', '/api/v1/user/profile', extraField as request.Response),
    ).toThrow(/additional properties/);
    const shortTimestamp = { ...res, body: { ...res.body, timestamp: '2026-11-22T10:15:30.123Z' } };
    expect(() =>
      contract.expectMatches('GET', '/api/v1/user/profile', shortTimestamp as request.Response),
    ).toThrow(/timestamp/);
  });

  // Last: it breaks the database under the app.
  it('should match the document when something unexpected fails', async () => {
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    await t.dataSource.query(
      'ALTER TABLE personal_access_tokens RENAME TO personal_access_tokens_gone',
    );

    for (const { path } of ENDPOINTS) {
      const res = await request(t.server).get(path).set('Authorization', `Bearer ${plaintext}`);
      expect(res.status).toBe(500);
      contract.expectMatches('GET', path, res);
    }
  });
});

describe('the OpenAPI document switched off', () => {
  it("should answer 404 for the document, the docs page and Swagger UI's files", async () => {
    const t = await createTestApp({ API_DOCS_ENABLED: 'false' });
    const swaggerUi = dirname(
      createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
    );
    const hash = createHash('sha256')
      .update(readFileSync(join(swaggerUi, 'swagger-ui.css')))
      .digest('hex')
      .slice(0, 8);
    try {
      for (const path of ['/api/v1/openapi.json', '/api/docs', `/assets/swagger-ui.${hash}.css`]) {
        const res = await request(t.server).get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
    } finally {
      await t.close();
    }
  });
});
