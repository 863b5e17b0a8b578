import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { Session } from '../src/auth/session.entity.js';
import { Actors } from '../src/common/actor.js';
import { ManualClock } from '../src/clock/clock.js';
import { keyIdentifierOf } from '../src/config/token-report-keys.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { generateToken } from '../src/tokens/token-format.js';
import { TokenRegenerationService } from '../src/tokens/token-regeneration.service.js';
import type { User } from '../src/users/user.entity.js';
import {
  createExpiredToken,
  createRevokedToken,
  createToken,
  createUser,
} from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { startInstances, type Instances } from './support/instances.js';
import { visibleText } from './support/html.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const PATH = '/security/token-reports';
const TYPE = 'tessera_personal_access_token';
const LEAKED_SUBJECT = 'One of your API tokens was found in public and revoked';
const LIMIT = 5;

/** The scanner's key pair (GitHub's, in production), and a key nobody configured. */
const scanner = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const SCANNER_KEY_ID = keyIdentifierOf(scanner.publicKey);

/** A client address of its own for each report, so that only the limit's test shares one. */
let addresses = 0;
const freshIp = () => `198.51.${(addresses >> 8) & 255}.${addresses++ & 255}`;

const foundAt = (file = 'config/deploy.env') =>
  `https://github.com/octo-org/deploy-scripts/blob/${randomBytes(20).toString('hex')}/${file}`;

/** One match as GitHub's secret scanning reports it. */
const match = (token: string, url = foundAt()) => ({ token, type: TYPE, url, source: 'content' });

const signatureOf = (body: string, key: KeyObject = scanner.privateKey) =>
  sign('sha256', Buffer.from(body), key).toString('base64');

/** `body` posted to `path` of `server` as the scanner sends it, signed with its key. */
const signedPost = (server: Server, body: string, path = PATH): request.Test =>
  request(server)
    .post(path)
    .set('Github-Public-Key-Identifier', SCANNER_KEY_ID)
    .set('Github-Public-Key-Signature', signatureOf(body))
    .send(body);

interface ReportOptions {
  ip?: string;
  /** The key id header; null sends none. */
  keyId?: string | null;
  /** The signature header; null sends none, a KeyObject signs the body with that key. */
  signature?: string | KeyObject | null;
  contentEncoding?: string;
}

describe('leaked tokens reported by a secret scanner', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp(
      {
        TOKEN_REPORT_PUBLIC_KEYS: scanner.publicKey.export({
          type: 'spki',
          format: 'pem',
        }) as string,
        RATE_LIMIT_TOKEN_REPORTS_PER_HOUR: String(LIMIT),
        // Reports come from many addresses, told by the test in X-Forwarded-For.
        TRUST_PROXY: 'loopback',
      },
      { clock },
    );
  });
  beforeEach(() => clock.set(Date.now()));
  afterAll(async () => {
    await t.close();
  });

  /** Sends `matches` (or a body as it is) signed by the scanner unless told otherwise. */
  function report(matches: object | string, options: ReportOptions = {}): request.Test {
    const body = typeof matches === 'string' ? matches : JSON.stringify(matches);
    const { keyId = SCANNER_KEY_ID, signature = scanner.privateKey } = options;
    const req = request(t.server)
      .post(PATH)
      .set('Content-Type', 'application/json')
      .set('X-Forwarded-For', options.ip ?? freshIp());
    if (keyId !== null) req.set('Github-Public-Key-Identifier', keyId);
    if (signature !== null) {
      const value = typeof signature === 'string' ? signature : signatureOf(body, signature);
      req.set('Github-Public-Key-Signature', value);
    }
    if (options.contentEncoding) req.set('Content-Encoding', options.contentEncoding);
    return req.send(body);
  }

  const api = (token: string) =>
    request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);
  const tokenRow = (id: number) =>
    t.dataSource.getRepository(PersonalAccessToken).findOneByOrFail({ id });
  /** Waits for the work a report started after its answer: its mail sent, its log written. */
  const settled = () => t.app.get(Scheduler).drain();
  const leakMails = (user: Pick<User, 'email'>) =>
    t.mail.find({ to: user.email, subject: LEAKED_SUBJECT });
  const queuedNotices = async (user: Pick<User, 'email'>) =>
    (await t.dataSource.getRepository(OutboxMessage).findBy({ recipient: user.email })).filter(
      (m) => (JSON.parse(m.params) as { notice?: string }).notice === 'token-leaked',
    ).length;
  const revocations = (tokenId: number) =>
    t.dataSource.getRepository(AuditEvent).findBy({ event: 'token.revoked', tokenId });

  /** Nothing a refused report could have changed: the token works, nobody mailed or logged. */
  async function expectUntouched(user: User, token: { plaintext: string; token: { id: number } }) {
    await settled();
    expect((await api(token.plaintext)).status).toBe(200);
    expect((await tokenRow(token.token.id)).revokedAt).toBeNull();
    expect(await queuedNotices(user)).toBe(0);
    expect(await revocations(token.token.id)).toEqual([]);
  }

  it('should revoke a working token reported, answer true_positive, mail its person where it was found and log it', async () => {
    const person = await signedInPerson(t);
    const token = await createToken(t.app, person.user, { name: 'Deploy bot' });
    expect((await api(token.plaintext)).status).toBe(200);
    const sessions = await t.dataSource.getRepository(Session).count();
    const url = foundAt('.github/workflows/deploy.yml');
    const ip = freshIp();

    const res = await report([match(token.plaintext, url)], { ip });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual([
      { token_raw: token.plaintext, token_type: TYPE, label: 'true_positive' },
    ]);
    // Machine to machine: no session, no CSRF cookie, nothing kept.
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await t.dataSource.getRepository(Session).count()).toBe(sessions);

    const refused = await api(token.plaintext);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('token_revoked');
    expect((await tokenRow(token.token.id)).revokedAt).not.toBeNull();

    await settled();
    const [mail] = leakMails(person.user);
    expect(mail.text).toContain('Your API token named "Deploy bot" was found in public');
    expect(mail.text).toContain(url);
    expect(mail.html).toContain(url);
    expect(mail.text).not.toContain(token.plaintext);
    expect(leakMails(person.user)).toHaveLength(1);

    const [event] = await revocations(token.token.id);
    expect(event).toMatchObject({
      userId: person.user.id,
      actorKind: 'anonymous',
      actorUserId: null,
      targetType: 'token',
      ip,
    });
    expect(JSON.parse(event.detail!)).toEqual({
      name: 'Deploy bot',
      reason: 'leaked',
      found_at: url,
    });
    const log = visibleText((await person.client.get('/settings/security-log')).text);
    expect(log).toContain('Token revoked');
    expect(log).toContain('it was found in public, and reported by a secret scanner');
  });

  it('should answer false_positive for strings that are no token of ours, without a query for malformed ones', async () => {
    const user = await createUser(t.app);
    const token = await createToken(t.app, user);
    const checksumBroken =
      token.plaintext.slice(0, -1) + (token.plaintext.endsWith('a') ? 'b' : 'a');
    const strings = ['not-a-token', 'tsr_short', checksumBroken, token.plaintext.toUpperCase(), ''];

    t.queries.clear();
    const res = await report(strings.map((s) => match(s)));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      strings.map((s) => ({ token_raw: s, token_type: TYPE, label: 'false_positive' })),
    );
    expect(t.queries.queries.filter((q) => q.includes('personal_access_tokens'))).toEqual([]);

    // Well formed, with a good checksum, but no token has that value: looked up, not found.
    const unknown = generateToken().plaintext;
    const looked = await report([match(unknown)]);
    expect(looked.body).toEqual([
      { token_raw: unknown, token_type: TYPE, label: 'false_positive' },
    ]);
    await expectUntouched(user, token);
  });

  it('should revoke a token whose replaced value is reported during its grace period; a value that no longer works changes nothing', async () => {
    const user = await createUser(t.app);
    const tokens = t.app.get(TokenRegenerationService);
    const inGrace = await createToken(t.app, user, { name: 'Grace' });
    const regenerated = await tokens.regenerate(Actors.operator(user.id), inGrace.token.id, 60);
    expect((await api(inGrace.plaintext)).status).toBe(200);

    const res = await report([match(inGrace.plaintext)]);
    expect(res.body).toEqual([
      { token_raw: inGrace.plaintext, token_type: TYPE, label: 'true_positive' },
    ]);
    // The token is revoked: its new value with it.
    expect((await api(regenerated.plaintext)).body.error.code).toBe('token_revoked');
    await settled();
    expect(leakMails(user).map((m) => m.text)).toEqual([expect.stringContaining('"Grace"')]);

    // A value replaced with no grace, an expired token, a revoked one: real tokens, none working.
    const replaced = await createToken(t.app, user, { name: 'Replaced' });
    const current = await tokens.regenerate(Actors.operator(user.id), replaced.token.id, 0);
    clock.advance(60_000);
    const expired = await createExpiredToken(t.app, user);
    const revoked = await createRevokedToken(t.app, user);
    await settled();
    const notices = await queuedNotices(user);
    // The revocation of `revoked` itself is logged already, once.
    expect(await revocations(revoked.token.id)).toHaveLength(1);

    const dead = [replaced.plaintext, expired.plaintext, revoked.plaintext];
    const answer = await report(dead.map((s) => match(s)));
    expect(answer.body).toEqual(
      dead.map((s) => ({ token_raw: s, token_type: TYPE, label: 'true_positive' })),
    );
    expect((await api(current.plaintext)).status).toBe(200);
    expect((await tokenRow(expired.token.id)).revokedAt).toBeNull();
    await settled();
    expect(await queuedNotices(user)).toBe(notices);
    for (const id of [replaced.token.id, expired.token.id])
      expect(await revocations(id)).toEqual([]);
    expect(await revocations(revoked.token.id)).toHaveLength(1);
  });

  it('should revoke, mail and log once when the same report arrives many times at once, or names a token twice', async () => {
    const user = await createUser(t.app);
    const token = await createToken(t.app, user);
    const url = foundAt();

    const answers = await burst(20, t.server, () =>
      report([match(token.plaintext, url), match(token.plaintext, url)]),
    );
    expect(
      tally(answers, (r) => `${r.status} ${r.body.map((l: { label: string }) => l.label).join()}`),
    ).toEqual({
      '200 true_positive,true_positive': 20,
    });
    await settled();
    expect(await queuedNotices(user)).toBe(1);
    expect(leakMails(user)).toHaveLength(1);
    expect(await revocations(token.token.id)).toHaveLength(1);
  });

  it('should refuse a report that is unsigned, signed by another key or for another body, or names a key not configured: 401 in the envelope, nothing changed', async () => {
    const user = await createUser(t.app);
    const token = await createToken(t.app, user);
    const body = JSON.stringify([match(token.plaintext)]);
    const otherBody = JSON.stringify([match(token.plaintext), match('tsr_')]);
    const refusals: [string, ReportOptions, string][] = [
      ['no headers', { keyId: null, signature: null }, 'signature_required'],
      ['no signature', { signature: null }, 'signature_required'],
      ['no key id', { keyId: null }, 'signature_required'],
      ['a key not configured', { keyId: keyIdentifierOf(stranger.publicKey) }, 'unknown_key'],
      ['a key id that is not hex', { keyId: 'github' }, 'unknown_key'],
      ['another key', { signature: stranger.privateKey }, 'invalid_signature'],
      [
        'a signature of another body',
        {
          signature: signatureOf(otherBody),
        },
        'invalid_signature',
      ],
      ['a signature that is not base64', { signature: 'not a signature!' }, 'invalid_signature'],
    ];
    for (const [name, options, code] of refusals) {
      const res = await report(body, options);
      expect(`${name}: ${res.status} ${res.body.error?.code}`).toBe(`${name}: 401 ${code}`);
      expect(res.body.success).toBe(false);
      expect(res.headers['www-authenticate']).toBe('GitHub-Public-Key-Signature realm="tessera"');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    await expectUntouched(user, token);
  });

  it('should refuse a signed body that is not JSON (400), not a list of tokens or too long a list (422), too large (413) or encoded (415), nothing changed', async () => {
    const user = await createUser(t.app);
    const token = await createToken(t.app, user);
    const good = match(token.plaintext);
    const tooMany = [good, ...Array.from({ length: 100 }, () => match('tsr_'))];
    const tooLarge = [good, match('tsr_', `https://github.com/${'x'.repeat(70 * 1024)}`)];
    const cases: [string, object | string, ReportOptions, string][] = [
      ['not JSON', `[${JSON.stringify(good)}`, {}, '400 malformed_report'],
      ['an object', good, {}, '422 validation_failed'],
      ['an entry without a token', [good, { type: TYPE }], {}, '422 validation_failed'],
      ['a token that is not a string', [good, { token: 7 }], {}, '422 validation_failed'],
      ['a token far too long', [good, match('x'.repeat(1001))], {}, '422 validation_failed'],
      ['101 tokens', tooMany, {}, '422 validation_failed'],
      ['more than 64 KiB', tooLarge, {}, '413 payload_too_large'],
      ['gzip', [good], { contentEncoding: 'gzip' }, '415 unsupported_media_type'],
    ];
    for (const [name, body, options, expected] of cases) {
      const res = await report(body, options);
      expect(`${name}: ${res.status} ${res.body.error?.code}`).toBe(`${name}: ${expected}`);
      expect(res.body.success).toBe(false);
    }
    await expectUntouched(user, token);
  });

  it('should take a report at the path in any spelling Express routes to it', async () => {
    for (const path of ['/security/token-reports/', '/Security/Token-Reports']) {
      const res = await signedPost(t.server, JSON.stringify([match('tsr_')]), path).set(
        'X-Forwarded-For',
        freshIp(),
      );
      expect(`${path} ${res.status} ${res.text}`).toBe(
        `${path} 200 [{"token_raw":"tsr_","token_type":"${TYPE}","label":"false_positive"}]`,
      );
    }
  });

  it('should answer any other method with 405 in the envelope, naming POST', async () => {
    const res = await request(t.server).get(PATH).set('X-Forwarded-For', freshIp());
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.error.code).toBe('method_not_allowed');
  });

  it('should let exactly RATE_LIMIT_TOKEN_REPORTS_PER_HOUR reports through from one address when 20 arrive at once', async () => {
    const user = await createUser(t.app);
    const token = await createToken(t.app, user);
    const ip = freshIp();
    const answers = await burst(20, t.server, () => report([match(token.plaintext)], { ip }));
    expect(tally(answers, (r) => String(r.status))).toEqual({ 200: LIMIT, 429: 20 - LIMIT });
    const refused = answers.find((r) => r.status === 429)!;
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is counted apart.
    expect((await report([match('tsr_')])).status).toBe(200);
  });

  describe('without TOKEN_REPORT_PUBLIC_KEYS', () => {
    let off: TestApp;
    beforeAll(async () => {
      off = await createTestApp();
    });
    afterAll(async () => {
      await off?.close();
    });

    it('should answer 404 as at any path nothing serves, and revoke nothing', async () => {
      const user = await createUser(off.app);
      const token = await createToken(off.app, user);
      const body = JSON.stringify([match(token.plaintext)]);
      const reported = await signedPost(off.server, body);
      const nowhere = await signedPost(off.server, body, '/security/nothing-here');
      expect(reported.status).toBe(404);
      expect([reported.headers['content-type'], visibleText(reported.text)]).toEqual([
        nowhere.headers['content-type'],
        visibleText(nowhere.text),
      ]);
      const res = await request(off.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${token.plaintext}`);
      expect(res.status).toBe(200);
    });
  });

  describe('on two instances sharing one database', () => {
    let instances: Instances;
    beforeAll(async () => {
      instances = await startInstances(2, {
        TOKEN_REPORT_PUBLIC_KEYS: scanner.publicKey.export({
          type: 'spki',
          format: 'pem',
        }) as string,
      });
    });
    afterAll(async () => {
      await instances?.close();
    });

    it('should revoke, mail and log once of 20 identical reports taking turns between them', async () => {
      const { first, apps, servers, mail } = instances;
      const user = await createUser(first.app);
      const token = await createToken(first.app, user);
      const body = JSON.stringify([match(token.plaintext)]);

      const answers = await burst(20, servers, (_i, server) => signedPost(server, body));
      expect(tally(answers, (r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual({
        [`200 [{"token_raw":"${token.plaintext}","token_type":"${TYPE}","label":"true_positive"}]`]: 20,
      });
      for (const app of apps) await app.app.get(Scheduler).drain();
      const events = await first.dataSource
        .getRepository(AuditEvent)
        .countBy({ event: 'token.revoked', tokenId: token.token.id });
      expect(events).toBe(1);
      expect(mail.find({ to: user.email, subject: LEAKED_SUBJECT })).toHaveLength(1);
      for (const server of servers) {
        const res = await request(server)
          .get('/api/v1/user/profile')
          .set('Authorization', `Bearer ${token.plaintext}`);
        expect(res.body.error.code).toBe('token_revoked');
      }
    });
  });
});
