import { afterEach, describe, expect, it } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import { ReferenceNotFoundError } from '../src/common/errors/domain.error.js';
import { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { dataSourceOptions } from '../src/entities.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { runMigrations } from '../src/database/migrator.js';
import { Transactions } from '../src/database/transactions.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { createToken, createUser } from './factories/index.js';
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
    dataSource = new DataSource(dataSourceOptions(loadConfig({ DATABASE_URL: db.url }).database));
    return dataSource.initialize();
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
      await ds.undoLastMigration({ transaction: 'each' });
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
      await ds.undoLastMigration({ transaction: 'each' });
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
    for (let i = 0; i < undo; i++) await ds.undoLastMigration({ transaction: 'each' });

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
    for (let i = 0; i < undo; i++) await ds.undoLastMigration({ transaction: 'each' });

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
    // The passkeys' and team governance migrations first, then the security log's.
    for (let i = 0; i < 3; i++) await ds.undoLastMigration({ transaction: 'each' });

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
    expect(await runMigrations(ds)).toHaveLength(3);
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
    // The passkeys' migration first, then team governance's.
    await ds.undoLastMigration({ transaction: 'each' });
    await ds.undoLastMigration({ transaction: 'each' });

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
    expect(await runMigrations(ds)).toHaveLength(2);
  });

  it('should migrate once when two servers and a CLI start together on an empty database', async () => {
    db = await createTestDatabase({ file: true });
    const env = { DATABASE_URL: db.url };
    const [a, b, cli] = await Promise.all([
      startBuiltServer(env),
      startBuiltServer(env),
      runBuilt(
        'cli.js',
        ['user:create', '--name', 'Early Bird', '--email', 'early@example.com'],
        env,
      ),
    ]);
    try {
      expect(cli).toMatchObject({ code: 0, stderr: '' });
      for (const server of [a, b]) {
        const res = await fetch(`${server.url}/api/v1/user/profile`);
        expect(res.status).toBe(401);
      }
      dataSource = await new DataSource(dataSourceOptions(loadConfig(env).database)).initialize();
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
      await expect(refused).rejects.toMatchObject({ code: 'not_found', status: 404 });
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
