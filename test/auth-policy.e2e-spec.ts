import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { declaredRoutes } from './support/declared-routes.js';
import type { AuthPolicy } from '../src/common/auth-policy.decorator.js';
import { createToken, createUser } from './factories/index.js';
import { signedInPerson } from './support/people.js';
import { assetUrl } from './support/html.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Every route and who may use it: `public`, `guest` (visitors not signed in), `session` (a person
 * signed in through the browser) or `bearer:<ability>`. A route added, removed or whose policy
 * changes fails this table until the table says so.
 */
const ROUTES: Record<string, string> = {
  'GET /': 'public',
  'GET /dashboard': 'session',
  'GET /register': 'guest',
  'POST /register': 'guest',
  'GET /register/check-email': 'public',
  'POST /register/resend': 'public',
  'GET /login': 'guest',
  'POST /login': 'guest',
  'POST /login/passkey/options': 'guest',
  'POST /login/passkey': 'guest',
  // The second step of signing in: for a visitor whose password was right (nobody signed in yet).
  'GET /two-factor-challenge': 'guest',
  'POST /two-factor-challenge': 'guest',
  'POST /two-factor-challenge/passkey/options': 'guest',
  'POST /two-factor-challenge/passkey': 'guest',
  'POST /logout': 'session',
  'GET /forgot-password': 'public',
  'POST /forgot-password': 'public',
  'GET /reset-password/:token': 'public',
  'POST /reset-password/:token': 'public',
  'GET /verify-email/:token': 'public',
  'POST /verify-email/:token': 'session',
  'POST /verify-email/resend': 'session',
  'GET /teams': 'session',
  'POST /teams': 'session',
  'POST /teams/switch': 'session',
  'GET /teams/:id': 'session',
  'GET /teams/:id/audit-log': 'session',
  'GET /teams/:id/audit-log/export': 'session',
  'POST /teams/:id/invitations': 'session',
  'POST /teams/:id/invitations/:invitationId/resend': 'session',
  'POST /teams/:id/invitations/:invitationId/revoke': 'session',
  'GET /invitations/:token': 'public',
  'POST /invitations/:token/accept': 'session',
  'POST /invitations/:token/decline': 'session',
  'POST /invitations/pending/:invitationId/accept': 'session',
  'POST /invitations/pending/:invitationId/decline': 'session',
  'POST /teams/:id/members/:userId/remove': 'session',
  'POST /teams/:id': 'session',
  'POST /teams/:id/members/:userId/role': 'session',
  'POST /teams/:id/transfer': 'session',
  'POST /teams/:id/leave': 'session',
  'POST /teams/:id/delete': 'session',
  'POST /teams/:id/policy': 'session',
  'POST /teams/:id/policy/preview': 'session',
  'GET /teams/:id/members/:userId/remove': 'session',
  'GET /teams/:id/service-accounts': 'session',
  'GET /teams/:id/service-accounts/:accountId': 'session',
  'GET /teams/:id/tokens': 'session',
  'POST /teams/:id/service-accounts': 'session',
  'POST /teams/:id/service-accounts/:accountId/delete': 'session',
  'POST /teams/:id/service-accounts/:accountId/tokens': 'session',
  'POST /teams/:id/service-accounts/:accountId/tokens/:tokenId/revoke': 'session',
  'GET /teams/:id/webhooks': 'session',
  'GET /teams/:id/webhooks/:hookId': 'session',
  'POST /teams/:id/webhooks': 'session',
  'POST /teams/:id/webhooks/audit-stream': 'session',
  'POST /teams/:id/webhooks/:hookId/rotate-secret': 'session',
  'POST /teams/:id/webhooks/:hookId/test': 'session',
  'POST /teams/:id/webhooks/:hookId/delete': 'session',
  'POST /teams/:id/webhooks/:hookId/deliveries/:deliveryId/replay': 'session',
  'POST /teams/:id/tokens/:tokenId/revoke': 'session',
  'GET /confirm-password': 'session',
  'POST /confirm-password': 'session',
  'POST /confirm-password/passkey/options': 'session',
  'POST /confirm-password/passkey': 'session',
  'GET /confirm-password/continue': 'session',
  'GET /settings/security': 'session',
  'GET /settings/security-log': 'session',
  'GET /settings/security-log/export': 'session',
  'GET /settings': 'session',
  'GET /settings/profile': 'session',
  'POST /settings/profile': 'session',
  'GET /use-the-api': 'session',
  'POST /settings/profile/email-change/resend': 'session',
  'POST /settings/profile/email-change/cancel': 'session',
  // The link mailed to a new address works only for the account that asked for it.
  'GET /settings/profile/email/:token': 'session',
  'POST /settings/profile/email/:token': 'session',
  'POST /settings/account/delete': 'session',
  'GET /settings/password': 'session',
  'POST /settings/password': 'session',
  'GET /settings/sessions': 'session',
  'POST /settings/sessions/:id/revoke': 'session',
  'POST /settings/sessions/revoke-others': 'session',
  'GET /settings/two-factor': 'session',
  'POST /settings/two-factor': 'session',
  'POST /settings/passkeys/options': 'session',
  'POST /settings/passkeys': 'session',
  'POST /settings/passkeys/:id': 'session',
  'POST /settings/passkeys/:id/delete': 'session',
  'POST /settings/two-factor/confirm': 'session',
  'POST /settings/two-factor/recovery-codes': 'session',
  'POST /settings/two-factor/disable': 'session',
  'GET /settings/api-tokens': 'session',
  'POST /settings/api-tokens': 'session',
  'POST /settings/api-tokens/:id/revoke': 'session',
  'GET /settings/api-tokens/:id': 'session',
  'POST /settings/api-tokens/:id': 'session',
  'POST /settings/api-tokens/:id/regenerate': 'session',
  'GET /api/v1/user/profile': 'bearer:user:read',
  'GET /api/v1/user/teams': 'bearer:user:read',
  'GET /api/v1/team': 'bearer:team:read',
  'GET /api/v1/team/members': 'bearer:members:read',
  'PATCH /api/v1/team/members/:id': 'bearer:members:write',
  'DELETE /api/v1/team/members/:id': 'bearer:members:write',
  'GET /api/v1/team/invitations': 'bearer:members:read',
  'POST /api/v1/introspect': 'bearer:tokens:introspect',
  'POST /api/v1/team/invitations': 'bearer:members:write',
  'DELETE /api/v1/team/invitations/:id': 'bearer:members:write',
  'GET /api/v1/team/tokens': 'bearer:tokens:read',
  'GET /api/v1/team/audit-log': 'bearer:audit:read',
  'GET /api/v1/token': 'bearer',
  'GET /health/live': 'public',
  'GET /health/ready': 'public',
  // Public to the app's own auth: the scraper sends its own secret (METRICS_TOKEN).
  'GET /metrics': 'public',
  // Public to the app's own auth: a secret scanner signs its reports (TOKEN_REPORT_PUBLIC_KEYS).
  'POST /security/token-reports': 'public',
};

/** Served before Nest's router, so no decorator can say their policy: each is probed instead. */
const OUTSIDE_NEST: Record<string, string> = {
  'GET /api/docs': 'public',
  'GET /api/v1/openapi.json': 'public',
  // Under their hashed names (`/assets/app.3f9a1c2b.css`), read from the sign-in page.
  'GET /assets/app.css': 'public',
  'GET /assets/app.js': 'public',
};

const describePolicy = (policy: AuthPolicy | undefined): string =>
  !policy
    ? 'none'
    : policy.kind === 'bearer' && policy.ability
      ? `bearer:${policy.ability}`
      : policy.kind;

describe('auth policy of every route', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      METRICS_ENABLED: 'true',
      METRICS_TOKEN: 'scrape-secret-0123456789-0123456789',
      TOKEN_REPORT_PUBLIC_KEYS: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
        .publicKey.export({ type: 'spki', format: 'pem' })
        .toString(),
    });
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every route Nest serves, as "METHOD /path", with the policy its decorators declare. */
  function declaredPolicies(): Record<string, string> {
    return Object.fromEntries(
      declaredRoutes(t.app).map((r) => [`${r.method} ${r.path}`, describePolicy(r.policy)]),
    );
  }

  it('should declare for every route exactly the policy the table gives it', () => {
    expect(declaredPolicies()).toEqual(ROUTES);
  });

  it('should validate every form and query string a route reads against its class', () => {
    const routes = declaredRoutes(t.app);
    // The check sees what it checks: forms are read (a POST /register, say).
    expect(routes.filter((r) => r.method === 'POST').length).toBeGreaterThan(20);
    const unvalidated = routes
      .filter((r) => r.unvalidatedInputs.length > 0)
      .map((r) => `${r.method} ${r.path}`);
    expect(unvalidated).toEqual([]);
  });

  /** What an anonymous visitor gets from a GET of each kind. */
  const concrete = (path: string) => path.replace(/:[a-zA-Z]+/g, '1');

  it('should keep anonymous visitors out of every session page and API route, and let them in to public and guest pages', async () => {
    const signIn = (await request(t.server).get('/login')).text;
    for (const [route, policy] of Object.entries({ ...ROUTES, ...OUTSIDE_NEST })) {
      const [method, path] = route.split(' ');
      if (method !== 'GET') continue;
      const url = path.startsWith('/assets/') ? assetUrl(signIn, path.slice(8)) : concrete(path);
      const res = await request(t.server).get(url);
      const seen = `${route} -> ${res.status} ${res.headers.location ?? ''}`.trim();
      if (policy === 'session' && route !== 'GET /dashboard') {
        // A download comes back to the page with its link.
        const back = encodeURIComponent(concrete(path).replace(/\/export$/, ''));
        expect(seen).toBe(`${route} -> 303 /login?return_to=${back}`);
      } else if (policy === 'session') expect(seen).toBe(`${route} -> 303 /login`);
      else if (policy.startsWith('bearer')) expect(seen).toBe(`${route} -> 401`);
      else if (route === 'GET /') expect(seen).toBe(`${route} -> 303 /login`);
      // Nobody is half-way through signing in: back to the first step.
      else if (route === 'GET /two-factor-challenge') expect(seen).toBe(`${route} -> 303 /login`);
      else if (route === 'GET /metrics') expect(seen).toBe(`${route} -> 401`);
      // A made-up link: its page says the link is not valid.
      else if (route.endsWith('/:token')) expect(seen).toBe(`${route} -> 404`);
      else expect(seen).toBe(`${route} -> 200`);
    }
  });

  it('should send the signed-in away from guest pages and refuse a session where a token is needed', async () => {
    const person = await signedInPerson(t);
    for (const [route, policy] of Object.entries(ROUTES)) {
      const [method, path] = route.split(' ');
      if (method !== 'GET') continue;
      const res = await person.client.get(concrete(path));
      if (policy === 'guest')
        expect(`${route} -> ${res.status} ${res.headers.location}`).toBe(
          `${route} -> 303 /dashboard`,
        );
      if (policy.startsWith('bearer')) expect(`${route} -> ${res.status}`).toBe(`${route} -> 401`);
    }
  });

  it('should answer a path under /api/v1 that no route takes with 404 (405 for another method), whatever the token', async () => {
    const person = await signedInPerson(t);
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    const tokens = [undefined, 'Bearer tsr_not-a-token', `Bearer ${plaintext}`];
    const seen: string[] = [];
    for (const authorization of tokens) {
      for (const [method, path] of [
        ['get', '/api/v1/admin'],
        ['get', '/api/v1/user'],
        ['post', '/api/v1/team'],
      ] as const) {
        const req = request(t.server)[method](path);
        const res = await (authorization ? req.set('Authorization', authorization) : req);
        seen.push(`${method.toUpperCase()} ${path} -> ${res.status} ${res.body.error?.code}`);
      }
    }
    // The API's paths are public (its OpenAPI document lists them): a 404 hides nothing.
    expect(new Set(seen)).toEqual(
      new Set([
        'GET /api/v1/admin -> 404 not_found',
        'GET /api/v1/user -> 404 not_found',
        'POST /api/v1/team -> 405 method_not_allowed',
      ]),
    );
    expect(seen).toHaveLength(9);
    // A page's session is no token.
    expect((await person.client.get('/api/v1/admin')).status).toBe(404);
  });
});
