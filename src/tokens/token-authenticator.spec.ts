import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ManualClock } from '../clock/clock.js';
import type { Config } from '../config/config.js';
import { TokenAuthenticator } from './token-authenticator.js';
import { generateToken, hashToken } from './token-format.js';
import type { LastUsedRecorder, TokenUsageRecorder } from './token-usage-recorder.js';

const clock = new ManualClock(Date.parse('2026-11-24T12:00:00Z'));

/** The authentication query's row, as the database returns it. */
function row(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    token_id: 7,
    token_name: 'laptop',
    created_at: new Date('2026-11-01T09:00:00Z'),
    regenerated_at: null,
    abilities: 'user:read,team:read',
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    token_hash: 'the current hash',
    previous_valid_until: null,
    user_id: 1,
    user_name: 'Ada',
    user_email: 'ada@example.com',
    user_disabled_at: null,
    two_factor: null,
    service_account_team_id: null,
    pinned: null,
    pinned_team_id: null,
    team_id: 2,
    team_name: "Ada's Team",
    team_slug: 'adas-team',
    require_two_factor: 0,
    token_max_lifetime_days: null,
    member_role: 'owner',
    ...overrides,
  };
}

describe('TokenAuthenticator', () => {
  const get = jest.fn<(hash: string, previousHash: string) => unknown>();
  const record = jest.fn<LastUsedRecorder['record']>();
  let authenticator: TokenAuthenticator;

  beforeEach(() => {
    get.mockReset();
    record.mockReset();
    // The embedded database's driver as TypeORM holds it: one prepared statement.
    const dataSource = {
      options: { type: 'better-sqlite3' },
      logger: { logQuery: jest.fn() },
      driver: { databaseConnection: { prepare: () => ({ get }) } },
    } as unknown as DataSource;
    authenticator = new TokenAuthenticator(
      dataSource,
      { database: { queryTimeoutMs: 5_000 } } as Config,
      clock,
      { record } as unknown as LastUsedRecorder,
      { record: jest.fn() } as unknown as TokenUsageRecorder,
    );
  });

  /** The row for a presented value: as its current value, unless the row says otherwise. */
  const answer = (plaintext: string, overrides: Record<string, unknown> = {}) =>
    get.mockReturnValueOnce(row({ token_hash: hashToken(plaintext), ...overrides }));

  it('should refuse a malformed token without a query', async () => {
    await expect(authenticator.authenticate('tsr_short')).rejects.toMatchObject({
      code: 'invalid_token',
    });
    const bad = generateToken().plaintext.slice(0, -1) + '!';
    await expect(authenticator.authenticate(bad)).rejects.toMatchObject({
      code: 'invalid_token',
    });
    expect(get).not.toHaveBeenCalled();
  });

  it('should look the token up by its SHA-256, as either value, and read the row', async () => {
    const { plaintext } = generateToken();
    answer(plaintext);
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({
      tokenId: 7,
      abilities: ['user:read', 'team:read'],
      previousValue: false,
      user: { id: 1, name: 'Ada', email: 'ada@example.com', twoFactor: false },
      binding: 'current',
      team: { id: 2, slug: 'adas-team', role: 'owner', policy: { requireTwoFactor: false } },
      teamRefusal: null,
    });
    expect(get).toHaveBeenCalledWith(hashToken(plaintext), hashToken(plaintext));
    expect(record).toHaveBeenCalledWith(7, null, clock.nowMs());
  });

  it('should refuse unknown, revoked and expired tokens with their own codes', async () => {
    const { plaintext } = generateToken();
    get.mockReturnValueOnce(undefined);
    await expect(authenticator.authenticate(plaintext)).rejects.toMatchObject({
      code: 'invalid_token',
    });
    answer(plaintext, { revoked_at: new Date() });
    await expect(authenticator.authenticate(plaintext)).rejects.toMatchObject({
      code: 'token_revoked',
    });
    answer(plaintext, { expires_at: new Date(clock.nowMs() - 1) });
    await expect(authenticator.authenticate(plaintext)).rejects.toMatchObject({
      code: 'token_expired',
    });
    // Its person's account disabled by an operator: refused, naming the token for the log.
    answer(plaintext, { user_disabled_at: new Date() });
    await expect(authenticator.authenticate(plaintext)).rejects.toMatchObject({
      code: 'account_disabled',
      refused: { tokenId: 7, userId: expect.any(Number) },
    });
    expect(record).not.toHaveBeenCalled();
  });

  it('should accept the value a regeneration replaced until its grace period ends', async () => {
    const { plaintext } = generateToken();
    const replaced = { token_hash: 'the new value’s hash' };
    get.mockReturnValueOnce(
      row({ ...replaced, previous_valid_until: new Date(clock.nowMs() + 60_000) }),
    );
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({
      previousValue: true,
    });
    get.mockReturnValueOnce(
      row({ ...replaced, previous_valid_until: new Date(clock.nowMs() - 1) }),
    );
    await expect(authenticator.authenticate(plaintext)).rejects.toMatchObject({
      code: 'token_revoked',
    });
  });

  it("should accept the current value whatever the previous one's grace period", async () => {
    const { plaintext } = generateToken();
    answer(plaintext, { previous_valid_until: new Date(clock.nowMs() - 60_000) });
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({ tokenId: 7 });
  });

  it('should report revocation before expiry when a token is both', async () => {
    const { plaintext } = generateToken();
    answer(plaintext, { revoked_at: new Date(), expires_at: new Date(clock.nowMs() - 1) });
    await expect(authenticator.authenticate(plaintext)).rejects.toMatchObject({
      code: 'token_revoked',
    });
  });

  it("should carry its team's refusal, and a pinned token's lost team, on the principal", async () => {
    const { plaintext } = generateToken();
    answer(plaintext, { require_two_factor: 1 });
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({
      teamRefusal: { code: 'two_factor_required' },
    });
    answer(plaintext, { pinned: 7, pinned_team_id: 3, team_id: 3, member_role: null });
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({
      binding: 'pinned',
      team: null,
      pinnedTeamId: 3,
      teamRefusal: { code: 'team_access_lost' },
    });
  });

  it("should let a service account's token act in the team that owns it, which asks no second factor of it", async () => {
    const { plaintext } = generateToken();
    const account = {
      user_id: 40,
      user_name: 'deploy-bot',
      service_account_team_id: 3,
      pinned: 7,
      pinned_team_id: 3,
      team_id: 3,
      team_name: 'Acme',
      // Never a member of it, and no two-factor sign-in: the team requires it of people.
      member_role: null,
      require_two_factor: 1,
    };
    answer(plaintext, account);
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({
      user: { id: 40, serviceAccount: true },
      team: { id: 3, name: 'Acme' },
      teamRefusal: null,
    });
    // Not a member, and not this team's service account: no team at all.
    answer(plaintext, { ...account, service_account_team_id: 4 });
    await expect(authenticator.authenticate(plaintext)).resolves.toMatchObject({
      team: null,
      teamRefusal: { code: 'team_access_lost' },
    });
  });
});
