import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import request from 'supertest';
import { ManualClock } from '../src/clock/clock.js';
import {
  createExpiredToken,
  createRevokedToken,
  createToken,
  createUser,
} from './factories/index.js';
import { AUTHORIZATION_CASES } from './support/authorization-cases.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * For any Authorization header at all, the profile endpoint answers 200 exactly when the header
 * is the bearer scheme followed by a valid, active token that has user:read, and never a 5xx.
 */
describe('Authorization header property', () => {
  let t: TestApp;
  let good: string[];
  let bad: string[];

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { clock: new ManualClock() });
    const user = await createUser(t.app);
    good = [(await createToken(t.app, user)).plaintext, (await createToken(t.app, user)).plaintext];
    const revoked = await createRevokedToken(t.app, user);
    const expired = await createExpiredToken(t.app, user);
    const teamOnly = await createToken(t.app, user, { abilities: ['team:read'] });
    bad = [revoked.plaintext, expired.plaintext, teamOnly.plaintext];
  });
  afterAll(async () => {
    await t.close();
  });

  /** What the header must be for a 200: after HTTP trims it, "bearer", spaces, a good token. */
  const shouldPass = (header: string) => {
    const match = /^bearer +(\S+)$/i.exec(header.trim());
    return match !== null && good.includes(match[1]);
  };

  const headerChars = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  });

  it('should judge the shared header cases as the cases themselves do (the oracle is sound)', () => {
    const tokens = { valid: good[0], other: good[1] };
    for (const c of AUTHORIZATION_CASES) {
      const header = c.header(tokens);
      expect(`${c.name}: ${header !== undefined && shouldPass(header)}`).toBe(
        `${c.name}: ${c.status === 200}`,
      );
    }
  });

  it('should answer 200 only for the exact header of a usable token, and never 5xx', async () => {
    const anyToken = fc.constantFrom(...good, ...bad);
    const scheme = fc.constantFrom(
      'Bearer',
      'bearer',
      'BEARER',
      'Basic',
      'Token',
      'Bearer:',
      '',
      'Bearerx',
    );
    const separator = fc.constantFrom(' ', '  ', '\t', '', ' \t ');
    const mutated = fc
      .tuple(
        anyToken,
        fc.nat(39),
        headerChars.filter((s) => s.length === 1),
      )
      .map(([token, at, ch]) => token.slice(0, at) + ch + token.slice(at + 1));
    const tokenLike = fc.oneof(
      anyToken,
      mutated,
      headerChars,
      anyToken.map((tk) => `${tk} ${tk}`),
    );
    const shared = fc.constantFrom(
      ...AUTHORIZATION_CASES.filter((c) => !c.raw)
        .map((c) => c.header({ valid: good[0], other: good[1] }))
        .filter((h): h is string => h !== undefined),
    );
    const header = fc.oneof(
      shared,
      fc
        .tuple(scheme, separator, tokenLike, fc.constantFrom('', ' ', ' x', ','))
        .map((p) => p.join('')),
      headerChars,
    );

    await fc.assert(
      fc.asyncProperty(header, async (value) => {
        const res = await request(t.server).get('/api/v1/user/profile').set('Authorization', value);
        expect(res.status).toBeLessThan(500);
        expect(res.status === 200).toBe(shouldPass(value));
        if (res.status !== 200) expect(res.body.success).toBe(false);
      }),
      { numRuns: 400 },
    );
  });
});
