import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import { ReferenceNotFoundError } from '../src/common/errors/domain.error.js';
import { DataSource, type EntityTarget, type ObjectLiteral } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { dataSourceFor } from '../src/entities.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { AuditLog1764892800000 } from '../src/database/migrations/1764892800000-audit-log.js';
import { TeamGovernance1764979200000 } from '../src/database/migrations/1764979200000-team-governance.js';
import { TeamAllowedAbilities1765411200000 } from '../src/database/migrations/1765411200000-team-allowed-abilities.js';
import { ServiceAccounts1765584000000 } from '../src/database/migrations/1765584000000-service-accounts.js';
import { AuditStreams1765608600000 } from '../src/database/migrations/1765608600000-audit-streams.js';
import { WebhookEndpointsPerTeam1765620000000 } from '../src/database/migrations/1765620000000-webhook-endpoints-per-team.js';
import { OneFormOfEachAddress1765612800000 } from '../src/database/migrations/1765612800000-one-form-of-each-address.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { OneTimeLink } from '../src/one-time-links/one-time-link.entity.js';
import { Logger } from '@nestjs/common';
import { revertLastMigration, runMigrations } from '../src/database/migrator.js';
import { apiErrorAnswers } from '../src/api/v1/api-errors.js';
import { Transactions } from '../src/database/transactions.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { TeamsRepository } from '../src/teams/teams.repository.js';
import { Session } from '../src/auth/session.entity.js';
import { TwoFactorCredential } from '../src/two-factor/two-factor-credential.entity.js';
import { TokenPin } from '../src/tokens/token-pin.entity.js';
import { TokensRepository } from '../src/tokens/tokens.repository.js';
import { User } from '../src/users/user.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { entityOf, selectColumns } from '../src/database/plain-rows.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import request from 'supertest';
import { AuditLog } from '../src/audit/audit-log.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import { addMember, createTeam, createToken, createUser } from './factories/index.js';
import { signedInPerson } from './support/people.js';
import { runBuilt, startBuiltServer } from './support/run-built.js';
import { createTestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const TABLES = [
  'account_tokens',
  'mail_outbox',
  'passkey_challenges',
  'passkey_user_handles',
  'passkeys',
  'personal_access_token_addresses',
  'personal_access_token_daily_usage',
  'personal_access_token_pins',
  'personal_access_tokens',
  'sessions',
  'team_members',
  'teams',
  'two_factor_credentials',
  'two_factor_recovery_codes',
  'users',
];
const MIGRATION_NAMES = MIGRATIONS.map((m) => m.name);

describe('database schema', () => {
  let db: TestDatabase | undefined;
  let dataSource: DataSource | undefined;

  afterEach(async () => {
    await dataSource?.destroy();
    await db?.drop();
    dataSource = db = undefined;
  });

  async function open(): Promise<DataSource> {
    db = await createTestDatabase({ file: true });
    dataSource = dataSourceFor(loadConfig({ DATABASE_URL: db.url }).database);
    return dataSource.initialize();
  }

  /** Reverts the migrations from the last down to `migration`, and says how many. */
  async function undoThrough(ds: DataSource, migration: new () => unknown): Promise<number> {
    const count = MIGRATIONS.length - MIGRATIONS.indexOf(migration as (typeof MIGRATIONS)[number]);
    for (let i = 0; i < count; i++) await revertLastMigration(ds);
    return count;
  }

  async function tableNames(ds: DataSource): Promise<string[]> {
    const runner = ds.createQueryRunner();
    try {
      const tables = await runner.getTables(TABLES);
      return tables.map((t) => t.name.split('.').at(-1)!).sort();
    } finally {
      await runner.release();
    }
  }

  it('should build exactly the schema the entities describe', async () => {
    const ds = await open();
    expect(await runMigrations(ds)).toHaveLength(MIGRATIONS.length);

    const pending = await ds.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('should be reversible: every down undoes its up, and up restores them all', async () => {
    const ds = await open();
    await runMigrations(ds);
    expect(await tableNames(ds)).toEqual(TABLES);

    for (let i = 0; i < MIGRATIONS.length; i++) {
      await revertLastMigration(ds);
    }
    expect(await tableNames(ds)).toEqual([]);

    expect(await runMigrations(ds)).toHaveLength(MIGRATIONS.length);
    expect(await tableNames(ds)).toEqual(TABLES);
    expect(await runMigrations(ds)).toEqual([]);
  });

  it('should mark the accounts that exist before e-mail verification verified, and keep everything they own', async () => {
    const ds = await open();
    const before = MIGRATIONS.findIndex((m) => m.name === 'EmailVerification1764547200000');
    await runMigrations(ds);
    for (let i = before; i < MIGRATIONS.length; i++) {
      await revertLastMigration(ds);
    }
    await ds.query(
      "INSERT INTO users (name, email, created_at) VALUES ('Early', 'early@example.com', '2025-01-02 03:04:05')",
    );
    const [{ id }] = await ds.query("SELECT id FROM users WHERE email = 'early@example.com'");
    await ds.query(
      "INSERT INTO teams (name, slug, owner_id, personal) VALUES ('Early Team', 'early-team', ?, 1)",
      [id],
    );
    const [team] = await ds.query("SELECT id FROM teams WHERE slug = 'early-team'");
    await ds.query("INSERT INTO team_members (team_id, user_id, role) VALUES (?, ?, 'owner')", [
      team.id,
      id,
    ]);

    expect(await runMigrations(ds)).toEqual(MIGRATION_NAMES.slice(before));

    const [user] = await ds.query('SELECT email_verified_at, created_at FROM users WHERE id = ?', [
      id,
    ]);
    expect(new Date(user.email_verified_at).getTime()).toBe(new Date(user.created_at).getTime());
    expect(await ds.query('SELECT role FROM team_members WHERE user_id = ?', [id])).toEqual([
      { role: 'owner' },
    ]);
  });

  it("should undo the token lifecycle's columns, index and tables, keeping the tokens", async () => {
    const ds = await open();
    await runMigrations(ds);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    await ds.query(
      `INSERT INTO personal_access_tokens (user_id, name, token_hash, last_four, abilities)
       VALUES (1, 'kept', '${'a'.repeat(64)}', 'aaaa', 'user:read')`,
    );
    // The migrations after it first, then the token lifecycle's own.
    const undo = MIGRATIONS.length - MIGRATION_NAMES.indexOf('TokenLifecycle1764720000000');
    for (let i = 0; i < undo; i++) await revertLastMigration(ds);

    const runner = ds.createQueryRunner();
    try {
      const table = (await runner.getTable('personal_access_tokens'))!;
      expect(table.columns.map((c) => c.name).sort()).toEqual([
        'abilities',
        'created_at',
        'expires_at',
        'id',
        'last_four',
        'last_used_at',
        'name',
        'revoked_at',
        'token_hash',
        'user_id',
      ]);
      expect(table.indices.map((i) => i.name).sort()).toEqual([
        'IDX_personal_access_tokens_user',
        'UQ_personal_access_tokens_hash',
      ]);
      expect(table.foreignKeys.map((f) => f.name)).toEqual(['FK_personal_access_tokens_user']);
    } finally {
      await runner.release();
    }
    expect(await tableNames(ds)).toEqual(
      TABLES.filter((t) => !t.startsWith('personal_access_token_') && !t.startsWith('passkey')),
    );
    const [kept] = await ds.query('SELECT name FROM personal_access_tokens');
    expect(kept.name).toBe('kept');
    expect(await runMigrations(ds)).toHaveLength(undo);
  });

  it("should undo the account settings' columns in place, keeping the sessions and account tokens", async () => {
    const ds = await open();
    await runMigrations(ds);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    await ds.query(
      `INSERT INTO sessions (id, user_id, data, expires_at, user_agent, ip, last_active_at)
       VALUES ('kept', 1, '{}', '2099-01-01 00:00:00', 'curl/8.5.0', '127.0.0.1', '2026-01-01 00:00:00')`,
    );
    await ds.query(
      `INSERT INTO account_tokens (user_id, purpose, token_hash, expires_at, email)
       VALUES (1, 'change_email', '${'b'.repeat(64)}', '2099-01-01 00:00:00', 'new@example.com')`,
    );
    const undo = MIGRATIONS.length - MIGRATION_NAMES.indexOf('AccountSettings1764806400000');
    for (let i = 0; i < undo; i++) await revertLastMigration(ds);

    const runner = ds.createQueryRunner();
    try {
      const sessions = (await runner.getTable('sessions'))!;
      expect(sessions.columns.map((c) => c.name).sort()).toEqual([
        'created_at',
        'data',
        'expires_at',
        'id',
        'user_id',
      ]);
      const tokens = (await runner.getTable('account_tokens'))!;
      expect(tokens.columns.map((c) => c.name)).not.toContain('email');
    } finally {
      await runner.release();
    }
    // Dropping the columns copied no table: the rows that refer to users are all still there.
    expect(await ds.query('SELECT id FROM sessions')).toEqual([{ id: 'kept' }]);
    expect(Number((await ds.query('SELECT COUNT(*) AS n FROM account_tokens'))[0].n)).toBe(1);
    expect(await runMigrations(ds)).toHaveLength(undo);
  });

  it("should undo the security log's migration in place, keeping the tokens and their usage", async () => {
    const ds = await open();
    await runMigrations(ds);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    await ds.query(
      `INSERT INTO personal_access_tokens (user_id, name, token_hash, last_four, abilities, expiry_notices)
       VALUES (1, 'kept', '${'c'.repeat(64)}', 'cccc', 'user:read', 2)`,
    );
    await ds.query(
      `INSERT INTO personal_access_token_daily_usage (token_id, day, requests) VALUES (1, '2026-11-01', 3)`,
    );
    await ds.query(
      `INSERT INTO audit_events (occurred_at, event, actor_kind, user_id) VALUES ('2026-11-01 00:00:00', 'token.created', 'user', 1)`,
    );
    // The later migrations first, then the security log's.
    const undone = await undoThrough(ds, AuditLog1764892800000);

    const runner = ds.createQueryRunner();
    try {
      const table = (await runner.getTable('personal_access_tokens'))!;
      expect(table.columns.map((c) => c.name)).not.toContain('expiry_notices');
      expect(table.indices.map((i) => i.name)).not.toContain('IDX_personal_access_tokens_expiry');
    } finally {
      await runner.release();
    }
    expect(await tableNames(ds)).not.toContain('audit_events');
    // Dropping the column copied no table: the usage that refers to the token is still there.
    expect(await ds.query('SELECT name FROM personal_access_tokens')).toEqual([{ name: 'kept' }]);
    const [usage] = await ds.query('SELECT requests FROM personal_access_token_daily_usage');
    expect(Number(usage.requests)).toBe(3);
    expect(await runMigrations(ds)).toHaveLength(undone);
  });

  it('should undo the team governance migration in place, keeping teams, members and tokens', async () => {
    const ds = await open();
    await runMigrations(ds);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    await ds.query(
      `INSERT INTO teams (name, slug, owner_id, require_two_factor, token_max_lifetime_days) VALUES ('Acme', 'acme', 1, 1, 90)`,
    );
    await ds.query(`INSERT INTO team_members (team_id, user_id, role) VALUES (1, 1, 'owner')`);
    await ds.query(
      `INSERT INTO personal_access_tokens (user_id, name, token_hash, last_four, abilities)
       VALUES (1, 'pinned', '${'d'.repeat(64)}', 'dddd', 'user:read')`,
    );
    await ds.query(`INSERT INTO personal_access_token_pins (token_id, team_id) VALUES (1, 1)`);
    // The later migrations first, then team governance's.
    const undone = await undoThrough(ds, TeamGovernance1764979200000);

    const runner = ds.createQueryRunner();
    try {
      const table = (await runner.getTable('teams'))!;
      expect(table.columns.map((c) => c.name)).not.toContain('require_two_factor');
      expect(table.columns.map((c) => c.name)).not.toContain('token_max_lifetime_days');
    } finally {
      await runner.release();
    }
    expect(await tableNames(ds)).not.toContain('personal_access_token_pins');
    // Dropping the columns copied no table: the members and tokens that refer to it remain.
    expect(await ds.query('SELECT name FROM teams')).toEqual([{ name: 'Acme' }]);
    expect(await ds.query('SELECT role FROM team_members')).toEqual([{ role: 'owner' }]);
    expect(await ds.query('SELECT name FROM personal_access_tokens')).toEqual([{ name: 'pinned' }]);
    expect(await runMigrations(ds)).toHaveLength(undone);
  });

  it('should say that a migration failed, not that it could not listen, when one fails at start', async () => {
    db = await createTestDatabase({ file: true });
    const env = { DATABASE_URL: db.url };
    // A table in the way of the first migration's, as a half-restored backup would leave.
    dataSource = await dataSourceFor(loadConfig(env).database).initialize();
    await dataSource.query('CREATE TABLE users (id INTEGER PRIMARY KEY)');

    const r = await runBuilt('main.js', [], { ...env, PORT: '0', HOST: '127.0.0.1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Tessera could not start: a database migration failed: .*users/m);
    expect(r.stderr).not.toContain('cannot listen');
    expect(r.stdout).not.toContain('Listening');
  });

  it('should move stored times to milliseconds and record the lifetime each token was given, keeping every row', async () => {
    const ds = await open();
    await runMigrations(ds);
    const undo = MIGRATIONS.length - MIGRATION_NAMES.indexOf('MillisecondTimes1765152000000');
    for (let i = 0; i < undo; i++) await revertLastMigration(ds);

    // As stored before: SQLite wrote a creation in whole seconds, the app an expiry with
    // milliseconds.
    await ds.query(
      `INSERT INTO users (name, email, created_at) VALUES ('Ada', 'ada@example.com', '2026-11-01 10:00:00')`,
    );
    await ds.query(`INSERT INTO teams (name, slug, owner_id) VALUES ('Acme', 'acme', 1)`);
    await ds.query(`INSERT INTO team_members (team_id, user_id, role) VALUES (1, 1, 'owner')`);
    const token = (name: string, times: Record<string, string>) =>
      ds.query(
        `INSERT INTO personal_access_tokens (user_id, name, token_hash, last_four, abilities, ${Object.keys(times).join(', ')})
         VALUES (1, ?, ?, 'abcd', 'user:read', ${Object.keys(times)
           .map(() => '?')
           .join(', ')})`,
        [name, name.padEnd(64, 'x'), ...Object.values(times)],
      );
    // "In 30 days", made on SQLite: 30 days and 0.4 s between the stored times.
    await token('thirty', {
      created_at: '2026-11-01 10:00:00',
      expires_at: '2026-12-01 10:00:00.400',
    });
    // "On a date", the form's last: 30 days from the day it was made.
    await token('dated', { created_at: '2026-11-01 10:00:00.250', expires_at: '2026-12-01' });
    await token('forever', { created_at: '2026-11-01 10:00:00' });
    await token('regenerated', {
      created_at: '2026-01-01 00:00:00',
      regenerated_at: '2026-11-01 10:00:00',
      expires_at: '2026-11-08 10:00:00.900',
    });
    await token('gone', { created_at: '2026-11-01 10:00:00' });
    await ds.query(`DELETE FROM personal_access_tokens WHERE name = 'gone'`);
    await ds.query(`INSERT INTO personal_access_token_pins (token_id, team_id) VALUES (1, 1)`);
    await ds.query(
      `INSERT INTO personal_access_token_daily_usage (token_id, day, requests) VALUES (1, '2026-11-02', 3)`,
    );
    await ds.query(
      `INSERT INTO personal_access_token_addresses (token_id, ip, last_used_at) VALUES (1, '192.0.2.1', '2026-11-02 10:00:00')`,
    );

    expect(await runMigrations(ds)).toEqual(MIGRATION_NAMES.slice(-undo));
    const lifetimes = await ds.query(
      'SELECT name, lifetime_days, CAST(created_at AS CHAR) AS created FROM personal_access_tokens ORDER BY id',
    );
    expect(
      lifetimes.map((r: { name: string; lifetime_days: number | null; created: string }) => [
        r.name,
        r.lifetime_days === null ? null : Number(r.lifetime_days),
        r.created,
      ]),
    ).toEqual([
      ['thirty', 30, '2026-11-01 10:00:00.000'],
      ['dated', 30, '2026-11-01 10:00:00.250'],
      ['forever', null, '2026-11-01 10:00:00.000'],
      ['regenerated', 7, '2026-01-01 00:00:00.000'],
    ]);
    // Rebuilding the tables dropped nothing that refers to them, and hands out no id twice.
    const counts = async () =>
      Promise.all(
        [
          'team_members',
          'personal_access_token_pins',
          'personal_access_token_daily_usage',
          'personal_access_token_addresses',
        ].map(async (table) => Number((await ds.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n)),
      );
    expect(await counts()).toEqual([1, 1, 1, 1]);
    await token('new', { created_at: '2026-11-03 10:00:00' });
    const [made] = await ds.query(`SELECT id FROM personal_access_tokens WHERE name = 'new'`);
    expect(Number(made.id)).toBe(6);

    for (let i = 0; i < undo; i++) await revertLastMigration(ds);
    expect(await counts()).toEqual([1, 1, 1, 1]);
    expect(await runMigrations(ds)).toHaveLength(undo);
  });

  it("should undo the allowed abilities' migration in place, keeping teams and their members", async () => {
    const ds = await open();
    await runMigrations(ds);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    await ds.query(
      `INSERT INTO teams (name, slug, owner_id, allowed_abilities) VALUES ('Acme', 'acme', 1, 'team:read')`,
    );
    await ds.query(`INSERT INTO team_members (team_id, user_id, role) VALUES (1, 1, 'owner')`);
    const undone = await undoThrough(ds, TeamAllowedAbilities1765411200000);

    const runner = ds.createQueryRunner();
    try {
      const table = (await runner.getTable('teams'))!;
      expect(table.columns.map((c) => c.name)).not.toContain('allowed_abilities');
    } finally {
      await runner.release();
    }
    expect(await tableNames(ds)).not.toContain('api_idempotency_keys');
    // Dropping the column copied no table: the members that refer to it remain.
    expect(await ds.query('SELECT role FROM team_members')).toEqual([{ role: 'owner' }]);
    expect(await runMigrations(ds)).toHaveLength(undone);
  });

  it("should undo the service accounts' migration, keeping users, tokens and what refers to them", async () => {
    const ds = await open();
    await runMigrations(ds);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    await ds.query(`INSERT INTO teams (name, slug, owner_id) VALUES ('Acme', 'acme', 1)`);
    await ds.query(`INSERT INTO team_members (team_id, user_id, role) VALUES (1, 1, 'owner')`);
    await ds.query(
      `INSERT INTO users (name, email, service_account_team_id, description) VALUES ('deploy-bot', 'deploy-bot-2@team-1.service-accounts.invalid', 1, 'CI')`,
    );
    await ds.query(
      `INSERT INTO personal_access_tokens (user_id, name, token_hash, last_four, abilities, created_by_id) VALUES (2, 'ci', 'h', 'abcd', 'team:read', 1)`,
    );
    await ds.query(`INSERT INTO personal_access_token_pins (token_id, team_id) VALUES (1, 1)`);
    const undone = await undoThrough(ds, ServiceAccounts1765584000000);

    const runner = ds.createQueryRunner();
    try {
      const columns = async (table: string) =>
        (await runner.getTable(table))!.columns.map((c) => c.name);
      expect(await columns('users')).not.toContain('service_account_team_id');
      expect(await columns('users')).not.toContain('description');
      expect(await columns('personal_access_tokens')).not.toContain('created_by_id');
      expect(await columns('teams')).not.toContain('service_account_count');
    } finally {
      await runner.release();
    }
    // Rebuilt on SQLite with foreign keys off: nothing that refers to the tables went with them.
    expect(Number((await ds.query('SELECT COUNT(*) AS n FROM users'))[0].n)).toBe(2);
    expect(await ds.query('SELECT name FROM personal_access_tokens')).toEqual([{ name: 'ci' }]);
    expect(
      Number((await ds.query('SELECT COUNT(*) AS n FROM personal_access_token_pins'))[0].n),
    ).toBe(1);
    expect(await ds.query('SELECT role FROM team_members')).toEqual([{ role: 'owner' }]);
    expect(await runMigrations(ds)).toHaveLength(undone);
    // Done again, a new account gets an id never handed out before.
    await ds.query(`INSERT INTO users (name, email) VALUES ('Bo', 'bo@example.com')`);
    expect(
      (await ds.query(`SELECT id FROM users WHERE name = 'Bo'`)).map((r: { id: unknown }) =>
        Number(r.id),
      ),
    ).toEqual([3]);
  });

  it("should undo the audit streams' migration with a stream that has sent, keeping the other endpoints and ids", async () => {
    const ds = await open();
    await runMigrations(ds);
    const endpoint = (uid: string, kind: string) =>
      ds.query(
        `INSERT INTO webhook_endpoints (uid, kind, url, events, secret, created_at) VALUES ('${uid}', '${kind}', 'https://hooks.example.com/${uid}', 'token.revoked', 's', '2026-01-01 00:00:00.000')`,
      );
    const delivery = (endpointId: number) =>
      ds.query(
        `INSERT INTO webhook_deliveries (endpoint_id, message_id, event_type, payload, status, next_attempt_at, created_at) VALUES (${endpointId}, 'msg_${endpointId}', 'token.revoked', '{}', 'delivered', '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000')`,
      );
    await endpoint('hooks', 'events');
    await endpoint('stream', 'audit_stream');
    await endpoint('gone', 'events');
    await delivery(1);
    await delivery(2);
    await ds.query(`DELETE FROM webhook_endpoints WHERE uid = 'gone'`);

    const undone = await undoThrough(ds, AuditStreams1765608600000);
    expect(await ds.query('SELECT uid, kind FROM webhook_endpoints')).toEqual([
      { uid: 'hooks', kind: 'events' },
    ]);
    expect(
      (await ds.query('SELECT endpoint_id FROM webhook_deliveries')).map(
        (r: { endpoint_id: unknown }) => Number(r.endpoint_id),
      ),
    ).toEqual([1]);
    expect(await runMigrations(ds)).toHaveLength(undone);
    // Done again, a new endpoint gets an id never handed out before.
    await endpoint('new', 'events');
    expect(
      (await ds.query(`SELECT id FROM webhook_endpoints WHERE uid = 'new'`)).map(
        (r: { id: unknown }) => Number(r.id),
      ),
    ).toEqual([4]);
  });

  it("should count each team's existing endpoints when it adds their limit, and undo that keeping them", async () => {
    const ds = await open();
    await runMigrations(ds);
    const undone = await undoThrough(ds, WebhookEndpointsPerTeam1765620000000);
    await ds.query(`INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')`);
    for (const slug of ['acme', 'quiet']) {
      await ds.query(`INSERT INTO teams (name, slug, owner_id) VALUES ('${slug}', '${slug}', 1)`);
    }
    const endpoint = (uid: string, teamId: number | null, kind = 'events') =>
      ds.query(
        `INSERT INTO webhook_endpoints (uid, team_id, kind, url, events, secret, created_at) VALUES ('${uid}', ${teamId ?? 'NULL'}, '${kind}', 'https://hooks.example.com/${uid}', 'token.revoked', 's', '2026-01-01 00:00:00.000')`,
      );
    await endpoint('a1', 1);
    await endpoint('a2', 1, 'audit_stream');
    await endpoint('a3', 1);
    await endpoint('operator', null);

    expect(await runMigrations(ds)).toHaveLength(undone);
    const counts = await ds.query(
      'SELECT slug, webhook_endpoint_count AS n FROM teams ORDER BY id',
    );
    expect(counts.map((r: { slug: string; n: unknown }) => [r.slug, Number(r.n)])).toEqual([
      ['acme', 3],
      ['quiet', 0],
    ]);

    const again = await undoThrough(ds, WebhookEndpointsPerTeam1765620000000);
    const runner = ds.createQueryRunner();
    try {
      const columns = (await runner.getTable('teams'))!.columns.map((c) => c.name);
      expect(columns).not.toContain('webhook_endpoint_count');
    } finally {
      await runner.release();
    }
    expect(Number((await ds.query('SELECT COUNT(*) AS n FROM webhook_endpoints'))[0].n)).toBe(4);
    expect(await runMigrations(ds)).toHaveLength(again);
  });

  it('should store each address in one form, keep one account per mailbox and say which moved, on every database', async () => {
    const ds = await open();
    await runMigrations(ds);
    const undone = await undoThrough(ds, OneFormOfEachAddress1765612800000);
    const redone = MIGRATION_NAMES.slice(-undone);
    const users = ds.getRepository(User);
    const person = async (email: string, confirmed: Date | null) =>
      (await users.save(users.create({ name: email, email, emailVerifiedAt: confirmed }))).id;
    // The same mailbox three times: the confirmed account keeps it, though younger.
    const unconfirmedUnicode = await person('ann@bücher.example', null);
    const confirmedAscii = await person('ann@xn--bcher-kva.example', new Date('2026-02-01'));
    const unconfirmedDecomposed = await person('ann@bu\u0308cher.example', null);
    // None confirmed: the oldest keeps it, in its one form.
    const olderWide = await person('dora@ｅｘａｍｐｌｅ.com', null);
    const youngerAscii = await person('dora@example.com', null);
    const alone = await person('zoë@exa\u0301mple.com', new Date('2026-03-01'));
    const plain = await person('plain@example.com', null);
    // Valid as typed (159 characters), but 289 once its domain is in ASCII: it stays as it is.
    const longForm = `${'a'.repeat(64)}@${Array(13).fill('中文中文中文').join('.')}.com`;
    const long = await person(longForm, null);

    // A plain statement: the entity has columns later migrations add.
    await ds.query(`INSERT INTO teams (name, slug, owner_id) VALUES ('Acme', 'acme', ${plain})`);
    const team = { id: Number((await ds.query(`SELECT id FROM teams WHERE slug = 'acme'`))[0].id) };
    const invitations = ds.getRepository(TeamInvitation);
    const invite = async (email: string, status: 'pending' | 'revoked' = 'pending') =>
      (
        await invitations.save(
          invitations.create({
            teamId: team.id,
            email,
            role: 'member',
            status,
            tokenHash: null,
            expiresAt: new Date('2030-01-01'),
          }),
        )
      ).id;
    await invite('ann@bücher.example');
    const latest = await invite('ann@xn--bcher-kva.example');
    const other = await invite('bo@bücher.example');
    // The one still waiting is kept, though a later one was withdrawn.
    const waiting = await invite('cy@bücher.example');
    await invite('cy@xn--bcher-kva.example', 'revoked');
    const links = ds.getRepository(OneTimeLink);
    const link = await links.save(
      links.create({
        userId: plain,
        purpose: 'change_email',
        tokenHash: 'a'.repeat(64),
        email: 'new@bücher.example',
        expiresAt: new Date('2030-01-01'),
      }),
    );

    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      expect(await runMigrations(ds)).toEqual(redone);
      expect(warnings.mock.calls.map(([message]) => message)).toEqual([
        `Account ${long} keeps ${longForm}: in its one form it is longer than 255`,
        `Account ${unconfirmedUnicode} (ann@bücher.example) shares a mailbox with account ${confirmedAscii}: its address is now duplicate-${unconfirmedUnicode}@accounts.invalid`,
        `Account ${unconfirmedDecomposed} (ann@bu\u0308cher.example) shares a mailbox with account ${confirmedAscii}: its address is now duplicate-${unconfirmedDecomposed}@accounts.invalid`,
        `Account ${youngerAscii} (dora@example.com) shares a mailbox with account ${olderWide}: its address is now duplicate-${youngerAscii}@accounts.invalid`,
      ]);
    } finally {
      warnings.mockRestore();
    }

    const stored = Object.fromEntries(
      (await users.find({ order: { id: 'ASC' } })).map((u) => [u.id, u.email]),
    );
    expect(stored).toEqual({
      [unconfirmedUnicode]: `duplicate-${unconfirmedUnicode}@accounts.invalid`,
      [confirmedAscii]: 'ann@xn--bcher-kva.example',
      [unconfirmedDecomposed]: `duplicate-${unconfirmedDecomposed}@accounts.invalid`,
      [olderWide]: 'dora@example.com',
      [youngerAscii]: `duplicate-${youngerAscii}@accounts.invalid`,
      [alone]: 'zoë@xn--exmple-qta.com',
      [plain]: 'plain@example.com',
      [long]: longForm,
    });
    expect((await invitations.find({ order: { id: 'ASC' } })).map((i) => [i.id, i.email])).toEqual([
      [latest, 'ann@xn--bcher-kva.example'],
      [other, 'bo@xn--bcher-kva.example'],
      [waiting, 'cy@xn--bcher-kva.example'],
    ]);
    expect((await links.findOneByOrFail({ id: link.id })).email).toBe('new@xn--bcher-kva.example');

    // Undone, nothing goes back; done again, it finds every address already in its form.
    expect(await undoThrough(ds, OneFormOfEachAddress1765612800000)).toBe(undone);
    expect(Object.values(stored)).toEqual(
      (await users.find({ order: { id: 'ASC' } })).map((u) => u.email),
    );
    expect(await runMigrations(ds)).toEqual(redone);
    expect(Object.values(stored)).toEqual(
      (await users.find({ order: { id: 'ASC' } })).map((u) => u.email),
    );
  });

  it('should migrate once when two servers and a CLI start together on an empty database', async () => {
    db = await createTestDatabase({ file: true });
    const env = { DATABASE_URL: db.url };
    const [a, b, cli] = await Promise.all([
      startBuiltServer(env),
      startBuiltServer(env),
      runBuilt('cli.js', ['user:create', '--name', 'Early Bird', '--email', 'early@example.com'], {
        ...env,
        APP_URL: 'http://localhost:3000',
      }),
    ]);
    try {
      expect(cli).toMatchObject({ code: 0, stderr: '' });
      for (const server of [a, b]) {
        const res = await fetch(`${server.url}/api/v1/user/profile`);
        expect(res.status).toBe(401);
      }
      dataSource = await dataSourceFor(loadConfig(env).database).initialize();
      const rows: { name: string }[] = await dataSource.query(
        'SELECT name FROM migrations ORDER BY id',
      );
      expect(rows.map((r) => r.name)).toEqual(MIGRATION_NAMES);
      const applied = [a, b].filter((s) => /Applied \d+ migration/.test(s.output())).length;
      expect(applied).toBeLessThanOrEqual(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

describe('stored times', () => {
  it('should declare every time with milliseconds, and store every time so, whoever writes it', async () => {
    const t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    try {
      // Rows the database stamps (creations) and times the app writes (an expiry, a last use,
      // a revocation, a session's expiry, mail to send), and an update of a person.
      const person = await signedInPerson(t);
      await createTeam(t.app, person.user, 'Stamped');
      const { plaintext, token } = await createToken(t.app, person.user, { expiresInDays: 30 });
      await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${plaintext}`);
      await t.app.get(TokenUsageRecorder).flush();
      await t.app.get(TokensService).revoke(Actors.person(person.user.id), token.id);
      await t.app.get(Scheduler).drain();
      await t.app.get(AuditLog).flush();

      const runner = t.dataSource.createQueryRunner();
      const tables = t.dataSource.entityMetadatas.map((entity) => entity.tableName);
      const columns = (await runner.getTables(tables).finally(() => runner.release())).flatMap(
        (table) =>
          table.columns
            .filter((c) => c.type === 'datetime')
            .map((c) => ({
              table: table.name.split('.').at(-1)!,
              column: c.name,
              precision: c.precision,
            })),
      );
      expect(columns.length).toBeGreaterThan(30);
      expect(columns.filter((c) => c.precision !== 3)).toEqual([]);

      const written: string[] = [];
      const wrong: string[] = [];
      for (const { table, column } of columns) {
        const values: { v: string }[] = await t.dataSource.query(
          `SELECT CAST(${column} AS CHAR) AS v FROM ${table} WHERE ${column} IS NOT NULL`,
        );
        if (values.length) written.push(`${table}.${column}`);
        for (const { v } of values) {
          if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/.test(v)) {
            wrong.push(`${table}.${column}: ${v}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      for (const column of [
        'users.created_at',
        'users.updated_at',
        'teams.created_at',
        'personal_access_tokens.created_at',
        'personal_access_tokens.expires_at',
        'personal_access_tokens.last_used_at',
        'personal_access_tokens.revoked_at',
        'sessions.expires_at',
        'mail_outbox.created_at',
        'audit_events.occurred_at',
      ]) {
        expect(written).toContain(column);
      }
    } finally {
      await t.close();
    }
  });
});

describe('plain statements', () => {
  it("should make the same entities of a plain statement's rows as TypeORM's own reads", async () => {
    const t = await createTestApp();
    try {
      // Times (set and unset), a boolean set, a list, a list left unset, numbers.
      const person = await createUser(t.app, { name: 'Plain', email: 'plain@example.com' });
      const team = await createTeam(t.app, person, 'Plainly');
      await t.dataSource.getRepository(Team).update(team.id, {
        requireTwoFactor: true,
        tokenMaxLifetimeDays: 30,
        allowedAbilities: ['user:read', 'team:read'],
      });
      const { token } = await createToken(t.app, person, { expiresInDays: 7 });
      await t.app.get(TokensService).revoke(Actors.person(person.id), token.id);

      const cases: [EntityTarget<ObjectLiteral>, string, number][] = [
        [User, 'users', person.id],
        [Team, 'teams', team.id],
        [PersonalAccessToken, 'personal_access_tokens', token.id],
      ];
      for (const [entity, table, id] of cases) {
        const [row] = await t.dataSource.query(
          `SELECT ${selectColumns(t.dataSource, entity, 'x')} FROM ${table} x WHERE x.id = ?`,
          [id],
        );
        const made = entityOf(t.dataSource, entity, row, 'x');
        const read = await t.dataSource.getRepository(entity).findOneByOrFail({ id });
        expect(made).toBeInstanceOf(entity as new () => unknown);
        expect(made).toStrictEqual(read);
      }
      expect(
        entityOf(t.dataSource, User, { x_id: null, x_name: null, x_email: null }, 'x'),
      ).toBeNull();
    } finally {
      await t.close();
    }
  });
});

describe('the reads every page makes', () => {
  it("should read a session's person, and a person's tokens with their pins, as TypeORM's own reads do", async () => {
    const t = await createTestApp();
    try {
      const ds = t.dataSource;
      const person = await createUser(t.app, { name: 'Read', email: 'read@example.com' });
      const other = await createUser(t.app, { name: 'Other', email: 'other-read@example.com' });
      // Names that sort differently by case and collation, and two alike (then by id).
      const teams = [];
      for (const name of ['zeta', 'Alpha', 'alpha', 'Alpha']) {
        const team = await createTeam(t.app, other, name);
        await addMember(t.app, team.id, person, 'admin');
        teams.push(team);
      }
      await ds.getRepository(Team).update(teams[1].id, {
        requireTwoFactor: true,
        allowedAbilities: ['user:read'],
      });
      await ds
        .getRepository(User)
        .update(person.id, { disabledAt: new Date(), currentTeamId: teams[2].id });
      await ds.getRepository(TwoFactorCredential).insert({ userId: person.id, secret: 'sealed' });
      const now = new Date();
      const later = new Date(now.getTime() + 3_600_000);
      await ds.getRepository(Session).insert([
        { id: 's-person', userId: person.id, data: '{"userId":1}', expiresAt: later },
        { id: 's-other', userId: other.id, data: '{}', expiresAt: later },
        { id: 's-visitor', userId: null, data: '{"x":1}', expiresAt: later, version: 3 },
        { id: 's-ended', userId: person.id, data: '{}', expiresAt: now },
      ]);

      /** The person as the query builder read them before the read was a plain statement. */
      const built = async (userId: number) => {
        const { entities, raw } = await ds
          .getRepository(User)
          .createQueryBuilder('u')
          .leftJoinAndMapMany('u.memberships', TeamMember, 'm', 'm.user_id = u.id')
          .leftJoinAndMapOne('m.team', Team, 't', 't.id = m.team_id')
          .addSelect(
            'CASE WHEN EXISTS (SELECT 1 FROM two_factor_credentials c WHERE c.user_id = u.id) THEN 1 ELSE 0 END',
            'two_factor',
          )
          .where('u.id = :userId', { userId })
          .orderBy('t.name', 'ASC')
          .addOrderBy('t.id', 'ASC')
          .getRawAndEntities<{ two_factor: number | string }>();
        const { memberships = [], ...user } = entities[0] as User & { memberships?: TeamMember[] };
        return {
          user: Object.assign(new User(), user),
          known: {
            email: user.email,
            emailVerifiedAt: user.emailVerifiedAt,
            currentTeamId: user.currentTeamId,
            memberships: memberships.map((m) => ({ team: m.team!, role: m.role })),
            twoFactor: Number(raw[0].two_factor) === 1,
          },
        };
      };
      const sessions = t.app.get(TeamsRepository);
      const read = await sessions.findLiveSession('s-person', now);
      expect(read).toStrictEqual({
        data: '{"userId":1}',
        version: 0,
        person: await built(person.id),
      });
      expect(read!.person!.known.memberships.map((m) => m.team.id)).toHaveLength(5);
      expect(read!.person!.known.twoFactor).toBe(true);
      expect((await sessions.findLiveSession('s-other', now))!.person).toStrictEqual(
        await built(other.id),
      );
      expect(await sessions.findLiveSession('s-visitor', now)).toStrictEqual({
        data: '{"x":1}',
        version: 3,
        person: null,
      });
      expect(await sessions.findLiveSession('s-ended', now)).toBeNull();
      expect(await sessions.findLiveSession('s-unknown', now)).toBeNull();

      // Tokens: one pinned to a team, one pinned to a team since deleted, one following.
      const pinned = (await createToken(t.app, person)).token;
      const orphaned = (await createToken(t.app, person)).token;
      await createToken(t.app, person);
      await ds.getRepository(TokenPin).insert([
        { tokenId: pinned.id, teamId: teams[3].id },
        { tokenId: orphaned.id, teamId: null },
      ]);
      const owned = await t.app.get(TokensRepository).findAllForOwnerWithPins(person.id);
      expect(owned.tokens).toStrictEqual(
        await ds
          .getRepository(PersonalAccessToken)
          .find({ where: { userId: person.id }, order: { createdAt: 'DESC', id: 'DESC' } }),
      );
      expect(
        owned.pins.map((p) => [Number(p.tokenId), p.teamId === null ? null : Number(p.teamId)]),
      ).toEqual(
        expect.arrayContaining([
          [pinned.id, teams[3].id],
          [orphaned.id, null],
        ]),
      );
      expect(owned.pins).toHaveLength(2);
    } finally {
      await t.close();
    }
  });
});

describe('text comparison', () => {
  it('should compare emails, slugs and token names exactly, as on every database', async () => {
    const t = await createTestApp();
    try {
      const accented = await createUser(t.app, { name: 'Zoë', email: 'zoë@example.com' });
      const plain = await createUser(t.app, { name: 'Zoe', email: 'zoe@example.com' });
      expect(plain.id).not.toBe(accented.id);

      const teams = t.app.get(TeamsService);
      const team = await teams.createTeam(Actors.operator(plain.id), { name: 'Acme' });
      await expect(teams.getBySlug(Actors.operator(), 'ACME')).rejects.toMatchObject({
        code: 'not_found',
      });
      expect((await teams.getBySlug(Actors.operator(), team.slug)).id).toBe(team.id);

      await createToken(t.app, plain, { name: 'Laptop' });
      await createToken(t.app, plain, { name: 'laptop' });
      const { token } = await t.app
        .get(TokensService)
        .revokeByName(Actors.operator(plain.id), 'laptop');
      expect(token.name).toBe('laptop');
    } finally {
      await t.close();
    }
  });
});

describe('foreign keys', () => {
  it("should answer a write that refers to a row that is not there with the domain's not-found error, on every database", async () => {
    const t = await createTestApp();
    try {
      const user = await createUser(t.app);
      const team = await t.app
        .get(TeamsService)
        .createTeam(Actors.operator(user.id), { name: 'Referenced' });
      const nobody = user.id + 1_000_000;
      const refused = t.app
        .get(Transactions)
        .run((m) =>
          m.getRepository(TeamMember).insert({ teamId: team.id, userId: nobody, role: 'member' }),
        );
      await expect(refused).rejects.toBeInstanceOf(ReferenceNotFoundError);
      const error = (await refused.catch((e: unknown) => e)) as ReferenceNotFoundError;
      expect(error.code).toBe('not_found');
      expect(apiErrorAnswers.statusOf(error)).toBe(404);
      const alone = t.app
        .get(Transactions)
        .runStatement((m) =>
          m.getRepository(TeamMember).insert({ teamId: team.id, userId: nobody, role: 'member' }),
        );
      await expect(alone).rejects.toBeInstanceOf(ReferenceNotFoundError);
      expect(await t.dataSource.getRepository(TeamMember).countBy({ teamId: team.id })).toBe(1);
    } finally {
      await t.close();
    }
  });
});
