import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { ManualClock } from '../src/clock/clock.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenAddress } from '../src/tokens/token-address.entity.js';
import { TokenDailyUsage } from '../src/tokens/token-daily-usage.entity.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { TokensRepository } from '../src/tokens/tokens.repository.js';
import { Transactions } from '../src/database/transactions.js';
import { createToken, createUser } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { sleep, waitFor } from './support/wait-for.js';

describe('personal access tokens', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({}, { clock });
  });
  // The machine's time at each test's start, moved only by the test.
  beforeEach(() => clock.set(Date.now()));
  afterAll(async () => {
    await t.close();
  });

  const profile = (token: string) =>
    request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);

  it('should issue tsr_ tokens of 40 characters and store only their SHA-256', async () => {
    const user = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, user, { name: 'deploy bot' });

    expect(plaintext).toMatch(/^tsr_[0-9A-Za-z]{36}$/);
    const rows = await t.dataSource.query('SELECT * FROM personal_access_tokens WHERE id = ?', [
      token.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(plaintext).digest('hex'));
    expect(rows[0].last_four).toBe(plaintext.slice(-4));
    expect(JSON.stringify(rows[0])).not.toContain(plaintext.slice(4));
    expect(token).not.toHaveProperty('tokenHash');
    expect(token.hint).toBe(`tsr_…${plaintext.slice(-4)}`);
  });

  it('should give a new token both abilities unless fewer are asked for', async () => {
    const user = await createUser(t.app);
    expect((await createToken(t.app, user)).token.abilities).toEqual(['user:read', 'team:read']);
    expect((await createToken(t.app, user, { abilities: ['team:read'] })).token.abilities).toEqual([
      'team:read',
    ]);
  });

  it('should set the expiry the given number of days ahead', async () => {
    const user = await createUser(t.app);
    const { token } = await createToken(t.app, user, { expiresInDays: 30 });
    const days = (token.expiresAt!.getTime() - clock.nowMs()) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('should give back a new token as the database stores it, without reading it back', async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    const tokens = t.dataSource.getRepository(PersonalAccessToken);
    const rows = [
      { name: 'no expiry', abilities: ['team:read' as const], expiresAt: null, lifetimeDays: null },
      {
        name: 'Überall ✓ a month ',
        abilities: ['user:read' as const, 'team:read' as const],
        expiresAt: new Date(clock.nowMs() + 30 * 86_400_000 + 123),
        lifetimeDays: 30,
        createdById: other.id,
      },
    ];
    for (const [i, row] of rows.entries()) {
      const made = await t.app.get(Transactions).run((m) =>
        t.app.get(TokensRepository).insert(m, {
          userId: user.id,
          tokenHash: createHash('sha256').update(`stored ${i}`).digest('hex'),
          lastFour: `abc${i}`,
          createdAt: clock.now(),
          ...row,
        }),
      );
      expect(made).toEqual(await tokens.findOneByOrFail({ id: made.id }));
    }
  });

  it('should never show the token again after creation', async () => {
    const user = await createUser(t.app);
    const { plaintext } = await createToken(t.app, user);
    const listed = await t.app.get(TokensService).listActive(Actors.operator(user.id));
    expect(JSON.stringify(listed)).not.toContain(plaintext.slice(4, -4));
  });

  it('should cost one query per authenticated request, write last_used_at at most once a minute and its usage only when flushed', async () => {
    const user = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, user);
    const usage = t.app.get(TokenUsageRecorder);
    // Earlier uses out of the way; the flush timer first fires a minute after the first use.
    await usage.flush();
    t.queries.clear();

    // Stored with its milliseconds, on every database.
    const firstUse = clock.nowMs();
    for (let i = 0; i < 100; i++) {
      expect((await profile(plaintext).set('User-Agent', 'curl/8.5.0')).status).toBe(200);
    }
    const lastUse = clock.nowMs();
    await waitFor(async () => t.queries.count('UPDATE') > 0);
    await sleep(100);

    expect(t.queries.count('SELECT')).toBe(100);
    expect(t.queries.count('UPDATE')).toBe(1);
    expect(t.queries.count('INSERT') + t.queries.count('DELETE')).toBe(0);
    if (t.config.database.target.type !== 'sqlite') {
      // A single statement in autocommit: no BEGIN and COMMIT round trips around it.
      expect(t.queries.count('START TRANSACTION') + t.queries.count('COMMIT')).toBe(0);
    }
    const stored = await t.dataSource
      .getRepository(PersonalAccessToken)
      .findOneByOrFail({ id: token.id });
    expect(stored.lastUsedAt).not.toBeNull();
    expect(stored.lastUsedAt!.getTime()).toBeGreaterThanOrEqual(firstUse);
    expect(stored.lastUsedAt!.getTime()).toBeLessThanOrEqual(lastUse);

    // The requests' usage, gathered in memory, is written by the flush in a few statements.
    t.queries.clear();
    await usage.flush();
    // The day's count, the address (added alone first: it is new), and all addresses' last use;
    // the security log's entry of the new address.
    expect(t.queries.count('INSERT')).toBe(4);
    expect(t.queries.count('DELETE')).toBe(2);
    // One read of the token's recorded addresses, to find the first use from a new one; this
    // first use is one: the token's name and team, the webhook endpoints it may go to, and the
    // audit streams its entry goes to (none).
    expect(t.queries.count('SELECT')).toBe(4);
    expect(t.queries.count('UPDATE')).toBe(0);
    const today = clock.now().toISOString().slice(0, 10);
    expect(await t.dataSource.getRepository(TokenDailyUsage).findBy({ tokenId: token.id })).toEqual(
      [expect.objectContaining({ day: today, requests: 100 })],
    );
    expect(await t.dataSource.getRepository(TokenAddress).findBy({ tokenId: token.id })).toEqual([
      expect.objectContaining({ ip: '127.0.0.1', userAgent: 'curl/8.5.0' }),
    ]);
  });

  it('should drop the usage of a token deleted since its use and write the others at once, then go on writing', async () => {
    const usage = t.app.get(TokenUsageRecorder);
    await usage.flush();
    const kept = await createToken(t.app, await createUser(t.app));
    const gone = await createToken(t.app, await createUser(t.app));
    expect((await profile(kept.plaintext)).status).toBe(200);
    expect((await profile(gone.plaintext)).status).toBe(200);
    // Deleted with its account (or its service account, or its team) before the minute's write.
    await t.dataSource.getRepository(PersonalAccessToken).delete({ id: gone.token.id });

    await usage.flush();
    const days = t.dataSource.getRepository(TokenDailyUsage);
    const requestsOf = async (tokenId: number) =>
      (await days.findBy({ tokenId })).reduce((n, d) => n + d.requests, 0);
    expect(await requestsOf(kept.token.id)).toBe(1);
    expect(await requestsOf(gone.token.id)).toBe(0);
    // The next minute's uses are written too: nothing of the deleted token is left to fail them.
    expect((await profile(kept.plaintext)).status).toBe(200);
    await usage.flush();
    expect(await requestsOf(kept.token.id)).toBe(2);
    expect(
      await t.dataSource.getRepository(TokenAddress).findBy({ tokenId: kept.token.id }),
    ).toHaveLength(1);
  });

  /** Uses the token once and waits until its last use is stored; returns the time stored. */
  async function usedOnce(plaintext: string, id: number): Promise<Date> {
    expect((await profile(plaintext)).status).toBe(200);
    const repo = t.dataSource.getRepository(PersonalAccessToken);
    let stored: Date | null = null;
    await waitFor(async () => (stored = (await repo.findOneByOrFail({ id })).lastUsedAt) !== null);
    return stored!;
  }

  it('should not write last_used_at again while the stored value is under a minute old', async () => {
    const user = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, user);
    await usedOnce(plaintext, token.id);
    // Half a minute later.
    clock.advance(30_000);
    t.queries.clear();

    expect((await profile(plaintext)).status).toBe(200);
    await sleep(100);

    expect(t.queries.count('UPDATE')).toBe(0);
  });

  it('should write last_used_at again once the stored value is over a minute old', async () => {
    const user = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, user);
    const old = await usedOnce(plaintext, token.id);
    // Five minutes later.
    clock.advance(5 * 60_000);

    expect((await profile(plaintext)).status).toBe(200);

    const repo = t.dataSource.getRepository(PersonalAccessToken);
    await waitFor(
      async () =>
        (await repo.findOneByOrFail({ id: token.id })).lastUsedAt!.getTime() > old.getTime(),
    );
  });

  it('should write the last uses of several tokens in one statement, each its own time, and leave a fresher one another instance wrote', async () => {
    const user = await createUser(t.app);
    const [unused, fresh, stale] = await Promise.all(
      [1, 2, 3].map(async () => (await createToken(t.app, user)).token.id),
    );
    const repo = t.dataSource.getRepository(PersonalAccessToken);
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const freshlyWritten = new Date(at.getTime() - 30_000);
    await repo.update({ id: fresh }, { lastUsedAt: freshlyWritten });
    await repo.update({ id: stale }, { lastUsedAt: new Date(at.getTime() - 5 * 60_000) });
    t.queries.clear();

    await t.app.get(Transactions).runStatement((m) =>
      t.app.get(TokensRepository).touchLastUsed(
        m,
        [
          { tokenId: unused, at },
          { tokenId: fresh, at },
          { tokenId: stale, at: new Date(at.getTime() + 1_000) },
        ],
        60_000,
      ),
    );

    expect(t.queries.count('UPDATE')).toBe(1);
    const stored = async (id: number) => (await repo.findOneByOrFail({ id })).lastUsedAt?.getTime();
    expect(await stored(unused)).toBe(at.getTime());
    expect(await stored(fresh)).toBe(freshlyWritten.getTime());
    expect(await stored(stale)).toBe(at.getTime() + 1_000);
  });

  it("should refuse to revoke another user's token and leave it working", async () => {
    const owner = await createUser(t.app);
    const intruder = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, owner);

    await expect(
      t.app.get(TokensService).revoke(Actors.operator(intruder.id), token.id),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await profile(plaintext)).status).toBe(200);
  });

  it('should keep the first revocation time when a token is revoked twice', async () => {
    const user = await createUser(t.app);
    const { token } = await createToken(t.app, user);
    const tokens = t.app.get(TokensService);
    const first = await tokens.revoke(Actors.operator(user.id), token.id);
    const second = await tokens.revoke(Actors.operator(user.id), token.id);
    expect(first.alreadyRevoked).toBe(false);
    expect(second.alreadyRevoked).toBe(true);
    expect(second.token.revokedAt!.getTime()).toBe(first.token.revokedAt!.getTime());
    expect(await tokens.listActive(Actors.operator(user.id))).toEqual([]);
  });
});
