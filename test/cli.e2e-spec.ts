import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { dataSourceFor } from '../src/entities.js';
import { MIGRATIONS } from '../src/database/migrations/index.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { runCli } from '../src/cli/run-cli.js';
import { PasswordHasher } from '../src/auth/password-hasher.js';
import { runBuilt, type RunResult } from './support/run-built.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

describe('operator command line', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  const env = () => ({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    APP_URL: 'http://localhost:3000',
  });
  /** The command run in this process, as `npm run cli` runs it, with `stdin` as its input. */
  const cliWithInput = async (stdin: string, ...args: string[]): Promise<RunResult> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, {
      env: env(),
      stdin: async () => stdin,
      out: (line) => out.push(`${line}\n`),
      err: (line) => err.push(`${line}\n`),
    });
    return { code, stdout: out.join(''), stderr: err.join('') };
  };
  const cli = (...args: string[]): Promise<RunResult> => cliWithInput('', ...args);
  /** The built command line in a process of its own. */
  const cliProcess = (...args: string[]): Promise<RunResult> => runBuilt('cli.js', args, env());
  const lastLine = (r: RunResult) => r.stdout.trimEnd().split('\n').at(-1)!;
  const count = async (table: string) =>
    Number((await dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);

  beforeAll(async () => {
    db = await createTestDatabase({ file: true });
    const created = await cli(
      'user:create',
      '--name',
      'Ada Lovelace',
      '--email',
      'ada@example.com',
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    dataSource = await dataSourceFor(loadConfig({ DATABASE_URL: db.url }).database).initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db.drop();
  });

  it('should create a user with a personal team and print its id, address and team on labelled lines', async () => {
    const r = await cli(
      'user:create',
      '--name',
      'Grace Hopper',
      '--email',
      'Grace@Example.com',
      '--password',
      'correct horse',
    );
    // Taken, with a warning that names the option, never its value.
    expect(r).toMatchObject({
      code: 0,
      stderr:
        "warning: --password given on the command line shows in the process list and the shell's history; give --password - and its value on standard input instead.\n",
    });
    const id = Number(/^user id: (\d+)$/m.exec(r.stdout)![1]);
    expect(r.stdout).toBe(`user id: ${id}\nemail: grace@example.com\npersonal team: graces-team\n`);
    const [user] = await dataSource.query('SELECT * FROM users WHERE id = ?', [id]);
    expect(user.email).toBe('grace@example.com');
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    const [team] = await dataSource.query('SELECT * FROM teams WHERE id = ?', [
      user.current_team_id,
    ]);
    expect(team).toMatchObject({ owner_id: id, slug: 'graces-team' });
    const members = await dataSource.query(
      'SELECT role FROM team_members WHERE team_id = ? AND user_id = ?',
      [team.id, id],
    );
    expect(members).toEqual([{ role: 'owner' }]);
  });

  it('should read the password from standard input when given as -, in process and built', async () => {
    const withInput = async (input: string, ...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(args, {
        env: env(),
        out: (line) => out.push(line),
        err: (line) => err.push(line),
        stdin: async () => input,
      });
      return { code, out, err };
    };
    const hasher = new PasswordHasher();
    const passwordOf = async (email: string) =>
      (await dataSource.query('SELECT password_hash FROM users WHERE email = ?', [email]))[0]
        ?.password_hash as string | null | undefined;

    const piped = await withInput(
      'a piped passphrase\nsecond line\n',
      'user:create',
      '--name',
      'Piped',
      '--email',
      'piped@example.com',
      '--password',
      '-',
    );
    expect(piped).toMatchObject({ code: 0, err: [] });
    expect(piped.out.join('\n')).not.toContain('reset-password');
    expect(
      await hasher.verify((await passwordOf('piped@example.com'))!, 'a piped passphrase'),
    ).toBe(true);

    // Nothing on standard input: refused, and no account made.
    const empty = await withInput(
      '',
      'user:create',
      '--name',
      'E',
      '--email',
      'empty@example.com',
      '--password',
      '-',
    );
    expect(empty).toMatchObject({
      code: 1,
      err: ['error: --password - reads its value from standard input, which gave none'],
    });
    expect(await passwordOf('empty@example.com')).toBeUndefined();

    // The built command line reads its own standard input.
    const built = await runBuilt(
      'cli.js',
      ['user:create', '--name', 'Built', '--email', 'built@example.com', '--password', '-'],
      env(),
      [],
      'a built passphrase\n',
    );
    expect(built).toMatchObject({ code: 0, stderr: '' });
    expect(
      await hasher.verify((await passwordOf('built@example.com'))!, 'a built passphrase'),
    ).toBe(true);
  });

  it('should make accounts whose address counts as confirmed, and print a link to set a missing password', async () => {
    const r = await cli(
      'user:create',
      '--name',
      'Linkless Lovelace',
      '--email',
      'linkless@example.com',
    );
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [idLine, emailLine, teamLine, intro, link] = r.stdout.trimEnd().split('\n');
    const id = idLine.replace(/^user id: /, '');
    expect([emailLine, teamLine]).toEqual([
      'email: linkless@example.com',
      'personal team: linklesss-team',
    ]);
    expect(intro).toBe(
      'linkless@example.com sets a password at this link, once, within 60 minutes:',
    );
    expect(link).toMatch(/^http:\/\/localhost:3000\/reset-password\/[A-Za-z0-9_-]{43}$/);
    const [user] = await dataSource.query('SELECT * FROM users WHERE id = ?', [Number(id)]);
    expect(user.password_hash).toBeNull();
    expect(user.email_verified_at).not.toBeNull();
    const token = link.split('/').at(-1)!;
    const tokens = await dataSource.query('SELECT * FROM account_tokens WHERE user_id = ?', [
      Number(id),
    ]);
    expect(tokens).toHaveLength(1);
    expect(tokens[0].purpose).toBe('reset_password');
    expect(JSON.stringify(tokens)).not.toContain(token);

    // A new link replaces the first; nothing is mailed from the command line.
    const again = await cli('user:password-link', '--email', 'LINKLESS@example.com');
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(lastLine(again)).not.toBe(link);
    const after = await dataSource.query('SELECT id FROM account_tokens WHERE user_id = ?', [
      Number(id),
    ]);
    expect(after).toHaveLength(1);
    expect(await count('mail_outbox')).toBe(0);
    expect((await cli('user:password-link', '--email', 'nobody@example.com')).stderr).toMatch(
      /No such user/,
    );
  });

  it('should show a command its own help with --help or -h, and run nothing', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await cli('user:create', flag);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(
        /^Usage: npm run cli -- user:create --name NAME --email EMAIL \[--password PASSWORD\|-\]\n\nCreates an account/,
      );
      expect(r.stdout).toContain('Without --password');
    }
    const help = await cli('token:create', '--email', 'x@example.com', '-h');
    expect(help.stdout).toMatch(/^Usage: npm run cli -- token:create /);
    // The abilities --abilities may name: the deployment's catalog, defaults marked.
    expect(help.stdout).toContain('Abilities this deployment offers');
    expect(help.stdout).toContain('\n  user:read (default)  Read your profile');
    expect(help.stdout).toContain('\n  members:write  Invite people');
    const lines: string[] = [];
    await runCli(['token:create', '--help'], {
      env: {
        ...env(),
        ABILITIES_FILE: join(import.meta.dirname, 'fixtures/invoices/abilities.json'),
      },
      out: (line) => lines.push(line),
      err: (line) => lines.push(line),
    });
    expect(lines.join('\n')).toContain('\n  invoices:write  Create invoices');
    expect((await cli('help', 'user:password-link')).stdout).toMatch(
      /^Usage: npm run cli -- user:password-link --email EMAIL\n\nPrints a one-time link/,
    );
    const all = await cli('--help');
    expect(all.stdout).toContain('user:password-link --email EMAIL');
    // Each command with one line of what it does.
    expect(all.stdout).toContain(
      "  token:revoke --email EMAIL (--name NAME | --id ID)\n      Revokes one of the account's tokens, by name or by id.\n",
    );
    expect(all.stdout).toContain(
      '\n      Creates a personal access token for the account and prints it, alone on the last line, this once.\n',
    );
    expect(all.stdout).toContain(
      '"npm run cli -- <command> --help" says what a command does; "npm run cli -- --version" which Tessera this is.',
    );
  });

  it('should print the new token alone on the last line and store only its hash', async () => {
    const r = await cli(
      'token:create',
      '--email',
      'ada@example.com',
      '--name',
      'laptop',
      '--abilities',
      'team:read',
      '--expires-in-days',
      '7',
    );
    expect(r.code).toBe(0);
    const token = lastLine(r);
    expect(token).toMatch(/^tsr_[0-9A-Za-z]{36}$/);
    const rows = await dataSource.query(
      "SELECT abilities, expires_at FROM personal_access_tokens WHERE name = 'laptop'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].abilities).toBe('team:read');
    expect(rows[0].expires_at).not.toBeNull();
    const dump = JSON.stringify(await dataSource.query('SELECT * FROM personal_access_tokens'));
    expect(dump).not.toContain(token.slice(4));
  });

  it("should pin a token to one of the account's teams with --team, and refuse a team that is none", async () => {
    expect(
      (await cli('team:create', '--owner', 'ada@example.com', '--name', 'Pin Point')).code,
    ).toBe(0);
    const r = await cli(
      'token:create',
      '--email',
      'ada@example.com',
      '--name',
      'pinned by cli',
      '--team',
      'pin-point',
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('acts in: pin-point only');
    const [pin] = await dataSource.query(
      `SELECT p.team_id, tm.slug FROM personal_access_token_pins p
         JOIN personal_access_tokens t ON t.id = p.token_id
         JOIN teams tm ON tm.id = p.team_id
        WHERE t.name = 'pinned by cli'`,
    );
    expect(pin.slug).toBe('pin-point');
    const missing = await cli(
      'token:create',
      '--email',
      'ada@example.com',
      '--name',
      'nowhere',
      '--team',
      'no-such-team',
    );
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/No such team/);
  });

  it('should make a token that expires in 30 days unless told otherwise, as the page does', async () => {
    const before = Date.now();
    expect((await cli('token:create', '--email', 'ada@example.com', '--name', 'month')).code).toBe(
      0,
    );
    expect(
      (
        await cli(
          'token:create',
          '--email',
          'ada@example.com',
          '--name',
          'forever',
          '--expires',
          'never',
        )
      ).code,
    ).toBe(0);
    const rows = await dataSource.query(
      "SELECT name, expires_at FROM personal_access_tokens WHERE name IN ('month', 'forever')",
    );
    const expiry = Object.fromEntries(
      rows.map((r: { name: string; expires_at: string | Date | null }) => [
        r.name,
        r.expires_at === null ? null : new Date(r.expires_at).getTime(),
      ]),
    );
    expect(expiry.forever).toBeNull();
    const days = (expiry.month - before) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30.01);
    for (const args of [
      ['--expires', 'soon'],
      ['--expires', 'never', '--expires-in-days', '7'],
    ]) {
      const r = await cli('token:create', '--email', 'ada@example.com', '--name', 'bad', ...args);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/--expires/);
    }
  });

  it('should refuse a lifetime the team a token acts in does not allow, and default to what it does', async () => {
    expect(
      (await cli('team:create', '--owner', 'ada@example.com', '--name', 'Short Lived')).code,
    ).toBe(0);
    await dataSource.query(
      "UPDATE teams SET token_max_lifetime_days = 7 WHERE slug = 'short-lived'",
    );
    try {
      // Short Lived is Ada's current team now: a token following it, or pinned to it.
      for (const args of [
        ['--expires-in-days', '30'],
        ['--expires', 'never'],
        ['--team', 'short-lived', '--expires-in-days', '8'],
      ]) {
        const r = await cli(
          'token:create',
          '--email',
          'ada@example.com',
          '--name',
          'long',
          ...args,
        );
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/^error: Short Lived allows tokens of at most 7 days/);
      }
      expect(
        await dataSource.query("SELECT id FROM personal_access_tokens WHERE name = 'long'"),
      ).toEqual([]);

      const before = Date.now();
      const week = await cli('token:create', '--email', 'ada@example.com', '--name', 'week');
      expect(week.code).toBe(0);
      const [row] = await dataSource.query(
        "SELECT expires_at FROM personal_access_tokens WHERE name = 'week'",
      );
      const days = (new Date(row.expires_at).getTime() - before) / 86_400_000;
      expect(days).toBeGreaterThan(6.9);
      expect(days).toBeLessThanOrEqual(7.01);
    } finally {
      await dataSource.query(
        "UPDATE teams SET token_max_lifetime_days = NULL WHERE slug = 'short-lived'",
      );
    }
  });

  it('should revoke a token by name and by id', async () => {
    await cli('token:create', '--email', 'ada@example.com', '--name', 'ci');
    const byName = await cli('token:revoke', '--email', 'ada@example.com', '--name', 'ci');
    expect(byName.code).toBe(0);
    const [ci] = await dataSource.query(
      "SELECT id, revoked_at FROM personal_access_tokens WHERE name = 'ci'",
    );
    expect(ci.revoked_at).not.toBeNull();

    await cli('token:create', '--email', 'ada@example.com', '--name', 'script');
    const [script] = await dataSource.query(
      "SELECT id FROM personal_access_tokens WHERE name = 'script'",
    );
    expect(
      (await cli('token:revoke', '--email', 'ada@example.com', '--id', String(script.id))).code,
    ).toBe(0);
    const [after] = await dataSource.query(
      'SELECT revoked_at FROM personal_access_tokens WHERE id = ?',
      [script.id],
    );
    expect(after.revoked_at).not.toBeNull();
  });

  it('should create teams with unique slugs, add members and switch the current team', async () => {
    const first = await cli(
      'team:create',
      '--owner',
      'ada@example.com',
      '--name',
      'Analytical Engines',
    );
    const second = await cli(
      'team:create',
      '--owner',
      'ada@example.com',
      '--name',
      'Analytical Engines',
    );
    expect(first.stdout).toMatch(
      /^team id: \d+\nslug: analytical-engines\nname: Analytical Engines\nowner: ada@example\.com\n$/,
    );
    expect(second.stdout).toMatch(/^team id: \d+\nslug: analytical-engines-2\n/);

    await cli('user:create', '--name', 'Charles Babbage', '--email', 'charles@example.com');
    const added = await cli(
      'team:add-member',
      '--team',
      'analytical-engines',
      '--email',
      'charles@example.com',
      '--role',
      'admin',
    );
    expect(added.code).toBe(0);
    const switched = await cli(
      'team:switch',
      '--email',
      'charles@example.com',
      '--team',
      'analytical-engines',
    );
    expect(switched.code).toBe(0);
    const [charles] = await dataSource.query(
      "SELECT t.slug FROM users u JOIN teams t ON t.id = u.current_team_id WHERE u.email = 'charles@example.com'",
    );
    expect(charles.slug).toBe('analytical-engines');
  });

  it.each([
    ['an unknown command', ['frobnicate'], /Unknown command "frobnicate"/],
    ['help for an unknown command', ['help', 'frobnicate'], /Unknown command "frobnicate"/],
    [
      'an unknown option',
      ['user:create', '--name', 'X', '--email', 'x@example.com', '--admin', 'yes'],
      /Unknown option '--admin'/,
    ],
    ['a missing option', ['token:create', '--email', 'ada@example.com'], /Missing --name/],
    [
      'an option given twice',
      ['token:create', '--email', 'ada@example.com', '--name', 'one', '--name', 'two'],
      /--name was given twice/,
    ],
    ['a bad email', ['user:create', '--name', 'X', '--email', 'not-an-email'], /valid email/],
    [
      'a duplicate email in another case',
      ['user:create', '--name', 'X', '--email', 'ADA@example.com'],
      /already exists/,
    ],
    [
      'a short password',
      ['user:create', '--name', 'X', '--email', 'x2@example.com', '--password', 'short'],
      /Password must be/,
    ],
    [
      'a short password read from standard input',
      ['user:create', '--name', 'X', '--email', 'x2@example.com', '--password', '-'],
      /Password must be/,
      'short\n',
    ],
    [
      'an unknown ability',
      ['token:create', '--email', 'ada@example.com', '--name', 'n', '--abilities', 'admin'],
      /Each ability is named resource:action/,
    ],
    [
      'an ability the catalog does not offer',
      [
        'token:create',
        '--email',
        'ada@example.com',
        '--name',
        'n',
        '--abilities',
        'invoices:write',
      ],
      /offers no ability "invoices:write"; it offers user:read, team:read/,
    ],
    [
      'a bad expiry',
      ['token:create', '--email', 'ada@example.com', '--name', 'n', '--expires-in-days', 'soon'],
      /whole number of days/,
    ],
    [
      'an unknown user',
      ['token:create', '--email', 'nobody@example.com', '--name', 'n'],
      /No such user/,
    ],
    [
      'both --name and --id',
      ['token:revoke', '--email', 'ada@example.com', '--name', 'a', '--id', '1'],
      /either --name or --id/,
    ],
    [
      'a bad id',
      ['token:revoke', '--email', 'ada@example.com', '--id', '1;DROP TABLE users'],
      /positive whole number/,
    ],
    [
      'an unknown team',
      ['team:switch', '--email', 'ada@example.com', '--team', 'no-such-team'],
      /No such team/,
    ],
    [
      'a bad role',
      [
        'team:add-member',
        '--team',
        'analytical-engines',
        '--email',
        'ada@example.com',
        '--role',
        'owner',
      ],
      /Role must be/,
    ],
  ])(
    'should refuse %s with one line on stderr and change nothing',
    async (_case, args, message, input = '') => {
      const before = await Promise.all(
        ['users', 'teams', 'team_members', 'personal_access_tokens'].map(count),
      );
      const r = await cliWithInput(input, ...args);
      expect(r.code).not.toBe(0);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\s+at /);
      const after = await Promise.all(
        ['users', 'teams', 'team_members', 'personal_access_tokens'].map(count),
      );
      expect(after).toEqual(before);
    },
    30_000,
  );

  it('should serve several CLI processes writing at once to the same database', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        cliProcess('team:create', '--owner', 'ada@example.com', '--name', 'Parallel'),
      ),
    );
    expect(results.map((r) => r.stderr)).toEqual(Array(6).fill(''));
    const slugs = results.map((r) => /^slug: (.+)$/m.exec(r.stdout)![1]);
    expect(new Set(slugs).size).toBe(6);
    expect(slugs).toContain('parallel');
  });

  it('should say when a token was already revoked', async () => {
    await cli('token:create', '--email', 'ada@example.com', '--name', 'twice');
    expect(
      (await cli('token:revoke', '--email', 'ada@example.com', '--name', 'twice')).stdout,
    ).toMatch(/^Revoked: token \d+ "twice"/);
    const [row] = await dataSource.query(
      "SELECT id FROM personal_access_tokens WHERE name = 'twice'",
    );
    const again = await cli('token:revoke', '--email', 'ada@example.com', '--id', String(row.id));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Already revoked: token \d+ "twice"/);
  });

  it('should refuse to switch to a team the user does not belong to', async () => {
    await cli('user:create', '--name', 'Outsider', '--email', 'outsider@example.com');
    const [before] = await dataSource.query(
      "SELECT current_team_id FROM users WHERE email = 'outsider@example.com'",
    );
    const r = await cli(
      'team:switch',
      '--email',
      'outsider@example.com',
      '--team',
      'analytical-engines',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/outsider@example.com is not a member of analytical-engines/);
    const [after] = await dataSource.query(
      "SELECT current_team_id FROM users WHERE email = 'outsider@example.com'",
    );
    expect(after.current_team_id).toBe(before.current_team_id);
  });

  it('should refuse members in a personal team', async () => {
    const r = await cli('team:add-member', '--team', 'adas-team', '--email', 'charles@example.com');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/personal team/);
  });

  it('should prune tokens revoked or expired more than N days ago, in batches, and say how many', async () => {
    const tokens = dataSource.getRepository(PersonalAccessToken);
    const [ada] = await dataSource.query("SELECT id FROM users WHERE email = 'ada@example.com'");
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);
    const row = (name: string, dates: { revokedAt?: Date; expiresAt?: Date }) => ({
      userId: Number(ada.id),
      name,
      tokenHash: randomBytes(32).toString('hex'),
      lastFour: 'abcd',
      abilities: ['user:read' as const],
      ...dates,
    });
    await tokens.insert([
      row('prune: in use', {}),
      row('prune: expires later', { expiresAt: daysAgo(-5) }),
      row('prune: revoked lately', { revokedAt: daysAgo(29) }),
      row('prune: expired lately', { expiresAt: daysAgo(29) }),
    ]);
    // More than one batch of dead tokens.
    for (let batch = 0; batch < 5; batch++) {
      await tokens.insert(
        Array.from({ length: 500 }, (_, i) =>
          row(
            `prune: dead ${batch}-${i}`,
            i % 2 ? { revokedAt: daysAgo(31) } : { expiresAt: daysAgo(40) },
          ),
        ),
      );
    }
    const before = await tokens.count();
    const refused = await Promise.all([
      cli('tokens:prune', '--older-than-days=-1'),
      cli('tokens:prune', '--older-than-days', 'thirty'),
      cli('tokens:prune'),
    ]);
    for (const r of refused) expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(refused[0].stderr).toMatch(
      /--older-than-days must be a whole number of days from 0 to 999999/,
    );
    expect(refused[2].stderr).toMatch(/Missing --older-than-days/);
    expect(await tokens.count()).toBe(before);

    const r = await cli('tokens:prune', '--older-than-days', '30');

    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^Deleted 2500 tokens revoked or expired before \d{4}-\d\d-\d\dT/);
    const left = (await tokens.find({ where: { userId: Number(ada.id) } }))
      .map((t) => t.name)
      .filter((n) => n.startsWith('prune: '))
      .sort();
    expect(left).toEqual([
      'prune: expired lately',
      'prune: expires later',
      'prune: in use',
      'prune: revoked lately',
    ]);
    expect((await cli('tokens:prune', '--older-than-days', '30')).stdout).toMatch(
      /^Deleted 0 tokens/,
    );
  });

  it('should apply and revert migrations, saying which, and name a bad database in one line', async () => {
    expect(await cli('db:migrate')).toEqual({
      code: 0,
      stdout: 'No migrations pending\n',
      stderr: '',
    });
    const last = MIGRATIONS.at(-1)!.name;
    expect((await cli('db:rollback')).stdout).toBe(`Reverted ${last}\n`);
    expect((await cli('db:migrate')).stdout).toBe(`Applied ${last}\n`);

    const unreachable = await runCli(['db:migrate'], {
      env: { ...env(), DATABASE_URL: 'mysql://root@127.0.0.1:1/tessera' },
      out: () => {},
      err: (line) =>
        expect(line).toMatch(
          /^error: cannot use the database at DATABASE_URL \(connect ECONNREFUSED/,
        ),
    });
    expect(unreachable).toBe(1);
    const malformed = await cli('db:migrate', '--all');
    expect(malformed.stderr).toMatch(/^error: Unknown option '--all'/);
  });

  it('should run as its own process: npm run migration:run says what it applied, with no SQL', async () => {
    const fresh = await createTestDatabase({ file: true });
    try {
      const r = await runBuilt('cli.js', ['db:migrate'], {
        DATABASE_URL: fresh.url,
        LOG_LEVEL: 'log',
      });
      expect(r).toEqual({
        code: 0,
        stdout: `Applied ${MIGRATIONS.map((m) => m.name).join(', ')}\n`,
        stderr: '',
      });
      const bad = await runBuilt('cli.js', ['db:migrate'], { DATABASE_URL: 'postgres://x' });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toBe('');
      expect(bad.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/^error: Invalid configuration: - DATABASE_URL="postgres:\/\/x"/),
      ]);
    } finally {
      await fresh.drop();
    }
  });
  it('should say which Tessera it is with --version', async () => {
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8'),
    ) as { version: string };
    for (const flag of ['--version', '-v']) {
      expect(await cli(flag)).toEqual({
        code: 0,
        stdout: `tessera ${version} (node ${process.versions.node})\n`,
        stderr: '',
      });
    }
    expect((await cliProcess('--version')).stdout).toBe(
      `tessera ${version} (node ${process.versions.node})\n`,
    );
    expect((await cli('--help')).stdout).toContain('"npm run cli -- --version"');
  });

  it('should list every account, tab-separated under a header, disabled ones saying since when', async () => {
    await cli('user:create', '--name', 'Listed Person', '--email', 'listed@example.com');
    const r = await cli('user:list');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    expect(header).toBe('id\temail\tname\tconfirmed\tdisabled\tcreated');
    const users = await dataSource.query('SELECT id, email FROM users ORDER BY id');
    expect(rows.map((row) => row.split('\t').slice(0, 2))).toEqual(
      users.map((u: { id: number; email: string }) => [String(u.id), u.email]),
    );
    const listed = rows.find((row) => row.includes('listed@example.com'))!.split('\t');
    expect(listed).toHaveLength(6);
    expect(listed[2]).toBe('Listed Person');
    expect(listed[3]).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(listed[4]).toBe('never');

    await cli('user:disable', '--email', 'listed@example.com');
    const after = (await cli('user:list')).stdout
      .split('\n')
      .find((row) => row.includes('listed@'));
    expect(after!.split('\t')[4]).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it("should list every team with its owner and member count, and a person's tokens without their values", async () => {
    await cli('user:create', '--name', 'Team Lister', '--email', 'lister@example.com');
    await cli('team:create', '--owner', 'lister@example.com', '--name', 'Listed Team');
    await cli('team:add-member', '--team', 'listed-team', '--email', 'ada@example.com');
    const teams = await cli('team:list');
    expect(teams).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = teams.stdout.trimEnd().split('\n');
    expect(header).toBe('id\tslug\tname\towner\tmembers\tpersonal');
    expect(rows.map((row) => row.split('\t').slice(1))).toContainEqual([
      'listed-team',
      'Listed Team',
      'lister@example.com',
      '2',
      'no',
    ]);
    // Their personal team, made with the account.
    expect(rows.map((row) => row.split('\t').slice(3))).toContainEqual([
      'lister@example.com',
      '1',
      'yes',
    ]);
    const [{ n }] = await dataSource.query('SELECT COUNT(*) AS n FROM teams');
    expect(rows).toHaveLength(Number(n));

    const created = await cli('token:create', '--email', 'lister@example.com', '--name', 'ci');
    await cli(
      'token:create',
      '--email',
      'lister@example.com',
      '--name',
      'old',
      '--team',
      'listed-team',
    );
    await cli('token:revoke', '--email', 'lister@example.com', '--name', 'old');
    const tokens = await cli('token:list', '--email', 'lister@example.com');
    expect(tokens).toMatchObject({ code: 0, stderr: '' });
    const lines = tokens.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('id\tname\tstatus\tabilities\texpires\tlast used\tacts in');
    expect(lines.slice(1).map((l) => l.split('\t').slice(1, 4))).toEqual([
      ['ci', 'active', 'user:read,team:read'],
      ['old', 'revoked', 'user:read,team:read'],
    ]);
    expect(lines[1].split('\t').slice(5)).toEqual(['never', 'Listed Team']);
    expect(lines[2].split('\t')[6]).toBe('Listed Team only');
    // A token pinned to a team since deleted acts nowhere, and says why, as its page does.
    await cli(
      'token:create',
      '--email',
      'lister@example.com',
      '--name',
      'gone',
      '--team',
      'listed-team',
    );
    // Deleted as its owner deletes it from its page: its pins then name no team.
    await dataSource.query('DELETE FROM teams WHERE slug = ?', ['listed-team']);
    const after = (await cli('token:list', '--email', 'lister@example.com')).stdout;
    expect(
      after
        .trimEnd()
        .split('\n')
        .find((l) => l.split('\t')[1] === 'gone')
        ?.split('\t')[6],
    ).toBe('no team (refused: It is pinned to a team you are no longer in: the API refuses it.)');
    expect(tokens.stdout).not.toContain(lastLine(created));
    expect((await cli('token:list', '--email', 'nobody@example.com')).stderr).toBe(
      'error: No such user.\n',
    );
  });

  it('should end each command of the list with a sentence, never a dangling colon', async () => {
    const all = (await cli('help')).stdout;
    expect(all).toContain(
      '  audit:export --since DATE [--user EMAIL|ID] [--team SLUG|ID]\n      Writes the security log since DATE (YYYY-MM-DD, or a full ISO 8601 time) as JSON lines, oldest first.\n',
    );
    const summaries = all.split('\n').filter((line) => line.startsWith('      '));
    expect(summaries.length).toBeGreaterThan(15);
    for (const line of summaries) expect(line).toMatch(/\.$/);
  });

  it('should warn on stderr when APP_URL is unset outside development, before printing a link', async () => {
    const run = async (extra: Record<string, string | undefined>) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(['user:password-link', '--email', 'ada@example.com'], {
        env: { ...env(), APP_URL: undefined, ...extra },
        out: (line) => out.push(line),
        err: (line) => err.push(line),
      });
      return { code, out, err };
    };
    const warned = await run({ PORT: '4000' });
    expect(warned.code).toBe(0);
    expect(warned.err).toEqual([
      "warning: APP_URL is not set: links in mail and those the command line prints say http://localhost:4000 (from this process's PORT); set APP_URL to where people reach this deployment.",
    ]);
    expect(warned.out.at(-1)).toMatch(/^http:\/\/localhost:4000\/reset-password\//);
    expect((await run({ NODE_ENV: 'development' })).err).toEqual([]);
    expect((await run({ APP_URL: 'https://tessera.example.com' })).err).toEqual([]);
    // Commands that print no link say nothing of it.
    expect((await cli('team:list')).stderr).toBe('');
    const withPassword = await runCli(
      ['user:create', '--name', 'No Link', '--email', 'nolink@example.com', '--password', '-'],
      {
        env: { ...env(), APP_URL: undefined },
        stdin: async () => 'correct horse',
        out: () => {},
        err: (line) => warned.err.push(line),
      },
    );
    expect(withPassword).toBe(0);
    expect(warned.err).toHaveLength(1);

    const process = await runBuilt('cli.js', ['user:password-link', '--email', 'ada@example.com'], {
      DATABASE_URL: db.url,
      NODE_ENV: 'production',
      SESSION_SECRET: 'a production secret with enough entropy: 7f3kQ9zX2mWv',
      EMAIL_VERIFICATION: 'off',
    });
    expect(process.code).toBe(0);
    expect(process.stderr).toBe(
      "warning: APP_URL is not set: links in mail and those the command line prints say http://localhost:3000 (from this process's PORT); set APP_URL to where people reach this deployment.\n",
    );
  });
});
