import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { IdempotencyKey } from '../src/api/v1/idempotency/idempotency-key.entity.js';
import {
  CLAIM_LEASE_MS,
  IdempotencyStore,
  KEY_LIFETIME_MS,
} from '../src/api/v1/idempotency/idempotency.store.js';
import { ManualClock } from '../src/clock/clock.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import {
  digestBeforeTeams,
  requestDigest,
} from '../src/api/v1/idempotency/idempotency.interceptor.js';
import { createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The Idempotency-Key's life in time: a key holds its answer for 24 hours, then acts anew and is
 * pruned; a request that died holding its key lets go of it after the lease.
 */
describe('Idempotency-Key over time', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let auth: string;
  let teamId: number;
  let ownerId: number;

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    const owner = await createUser(t.app);
    ownerId = owner.id;
    teamId = (await createTeam(t.app, owner)).id;
    const { plaintext } = await createToken(t.app, owner, {
      abilities: ['members:write'],
      teamId,
      expiresInDays: 30,
    });
    auth = `Bearer ${plaintext}`;
  });
  afterAll(async () => {
    await t.close();
  });

  const invite = (key: string, email: string) =>
    request(t.server)
      .post('/api/v1/team/invitations')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send({ email });
  const keys = () => t.dataSource.getRepository(IdempotencyKey);

  it('should keep the first answer for 24 hours, then act anew, and prune keys past their day', async () => {
    const email = uniqueEmail('day');
    const first = await invite('day-key', email);
    expect(first.status).toBe(201);
    clock.advance(KEY_LIFETIME_MS - 1000);
    expect((await invite('day-key', email)).body).toEqual(first.body);

    clock.advance(2000);
    // A day on, the key is free: the same request acts again (and is refused: already invited).
    const later = await invite('day-key', email);
    expect([later.status, later.body.error.code]).toEqual([409, 'already_invited']);
    expect(later.headers['idempotent-replayed']).toBeUndefined();

    await invite('other-key', uniqueEmail('other'));
    expect(await keys().count()).toBe(2);
    // A day on, the hourly pruning the clock just ran, or a pruning now, leaves no key behind.
    clock.advance(KEY_LIFETIME_MS + 1000);
    await t.app.get(Scheduler).drain();
    await t.app.get(IdempotencyStore).prune();
    expect(await keys().count()).toBe(0);
  });

  it('should let the next request act once the request holding a key has been gone for its lease', async () => {
    const email = uniqueEmail('lease');
    // A request that claimed its key, then died with its instance before it acted.
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const claimed = await t.app
      .get(IdempotencyStore)
      .claim(
        ownerId,
        sha('lease-key'),
        requestDigest('POST', '/api/v1/team/invitations', teamId, { email }),
      );
    expect(claimed.kind).toBe('claimed');

    const waiting = await invite('lease-key', email);
    expect([waiting.status, waiting.body.error.code]).toEqual([409, 'idempotency_key_in_use']);
    expect(waiting.headers['retry-after']).toBe('1');

    clock.advance(CLAIM_LEASE_MS + 1);
    const taken = await invite('lease-key', email);
    expect(taken.status).toBe(201);
    const again = await invite('lease-key', email);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(taken.body);
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId, email })).toBe(1);
  });

  it('should tell a JSON null from no body or {}, under one key', async () => {
    const send = (body?: string) => {
      const req = request(t.server)
        .post('/api/v1/team/invitations')
        .set('Authorization', auth)
        .set('Idempotency-Key', 'null-or-empty');
      return body === undefined ? req : req.set('Content-Type', 'application/json').send(body);
    };
    const refused = await send('null');
    expect(refused.body.error.fields).toEqual({ body: 'The body must be a JSON object.' });
    for (const other of ['{}', undefined]) {
      const res = await send(other);
      expect([other, res.status, res.body.error.code]).toEqual([
        other,
        422,
        'idempotency_key_reused',
      ]);
    }
  });

  it('should keep no answer for a body that was never read, so the corrected request acts under its key', async () => {
    const email = uniqueEmail('unread');
    const send = (type: string, body: string) =>
      request(t.server)
        .post('/api/v1/team/invitations')
        .set('Authorization', auth)
        .set('Idempotency-Key', 'unread-key')
        .set('Content-Type', type)
        .send(body);
    const notJson = await send('application/json', '{"email": ');
    expect([notJson.status, notJson.body.error.code]).toEqual([400, 'bad_request']);
    const notOurs = await send('text/plain', JSON.stringify({ email }));
    expect(notOurs.status).toBe(415);
    const acted = await send('application/json', JSON.stringify({ email }));
    expect(acted.status).toBe(201);
    expect(acted.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await send('application/json', JSON.stringify({ email }));
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(acted.body);
  });

  it('should replay, not refuse, the retry of a request whose key was stored before the team joined the digest', async () => {
    const email = uniqueEmail('upgrade');
    const store = t.app.get(IdempotencyStore);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    // As a key claimed and answered by the version before: the request's digest had no team.
    const claimed = await store.claim(
      ownerId,
      sha('upgrade-key'),
      digestBeforeTeams('POST', '/api/v1/team/invitations', { email }),
    );
    if (claimed.kind !== 'claimed') throw new Error(`not claimed: ${claimed.kind}`);
    const first = { success: true, data: { email }, version: 'v1', timestamp: 'then' };
    await store.answer(claimed.id, 201, first);

    const retried = await invite('upgrade-key', email);
    expect([retried.status, retried.headers['idempotent-replayed'], retried.body]).toEqual([
      201,
      'true',
      first,
    ]);
    const other = await invite('upgrade-key', uniqueEmail('other'));
    expect([other.status, other.body.error.code]).toEqual([422, 'idempotency_key_reused']);
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId, email })).toBe(0);
  });
});
