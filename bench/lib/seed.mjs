// Seeds a benchmark database through Tessera's own migrations: users with personal teams, a
// team of the first 200 users (their current team), and tokens, of which the first `known` are
// written to a file with their plaintexts.
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { loadConfig } from '../../dist/src/config/config.js';
import { dataSourceFor } from '../../dist/src/entities.js';
import { runMigrations } from '../../dist/src/database/migrator.js';
import { generateToken } from '../../dist/src/tokens/token-format.js';

const BATCH = 5000;
/** The people of the team whose members the bench lists. */
export const TEAM_SIZE = 200;
const ABILITIES = 'user:read,team:read,members:read';
const INTROSPECTOR_ABILITIES = 'team:read,tokens:introspect';
const WRITER_ABILITIES = 'team:read,members:read,members:write';

/** Creates the database afresh on the server of `url` (mysql:// or mariadb://). */
export async function recreateMysqlDatabase(url) {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  });
  await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  await conn.end();
}

/**
 * @returns {{ valid: string[], members: string[], revoked: string, invalid: string, introspector: string, writer: string, teamId: number }}
 *   plaintexts to load with (`members`: tokens of the team's members; `introspector`: the
 *   team's owner's token that may introspect them; `writer`: the owner's token that may change
 *   the members' roles) and the team's id
 */
export async function seed(url, { users, tokens, known = 1000, log = () => {} }) {
  const dataSource = await dataSourceFor(loadConfig({ DATABASE_URL: url }).database).initialize();
  await runMigrations(dataSource);
  const runner = dataSource.createQueryRunner();
  const insert = async (table, columns, rows) => {
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      const marks = batch.map(() => `(${columns.map(() => '?').join(',')})`).join(',');
      await runner.query(
        `INSERT INTO ${table} (${columns.join(',')}) VALUES ${marks}`,
        batch.flat(),
      );
    }
  };
  const started = Date.now();
  await runner.startTransaction();
  // Ids given, not generated: a Galera node hands out every third one (auto_increment_increment).
  const userRows = Array.from({ length: users }, (_, i) => [
    i + 1,
    `Bench User ${i + 1}`,
    `user${i + 1}@bench.test`,
  ]);
  await insert('users', ['id', 'name', 'email'], userRows);
  await insert(
    'teams',
    ['id', 'name', 'slug', 'owner_id', 'personal'],
    userRows.map((_, i) => [i + 1, `Team ${i + 1}`, `team-${i + 1}`, i + 1, 1]),
  );
  await insert(
    'team_members',
    ['team_id', 'user_id', 'role'],
    userRows.map((_, i) => [i + 1, i + 1, 'owner']),
  );
  await runner.query('UPDATE users SET current_team_id = id');
  // A team of TEAM_SIZE people, the current team of each (GET /api/v1/team/members).
  const big = users + 1;
  const members = Math.min(TEAM_SIZE, users);
  await insert(
    'teams',
    ['id', 'name', 'slug', 'owner_id', 'personal'],
    [[big, 'Bench Team', 'bench-team', 1, 0]],
  );
  await insert(
    'team_members',
    ['team_id', 'user_id', 'role'],
    Array.from({ length: members }, (_, i) => [big, i + 1, i === 0 ? 'owner' : 'member']),
  );
  await runner.query('UPDATE users SET current_team_id = ? WHERE id <= ?', [big, members]);
  await runner.commitTransaction();

  const valid = [];
  const revoked = generateToken();
  // A token of the team's owner that checks the members' tokens (POST /api/v1/introspect).
  const introspector = generateToken();
  // A token of the team's owner that changes the members' roles (PATCH /api/v1/team/members/:id).
  const writer = generateToken();
  const now = new Date().toISOString().replace('T', ' ').slice(0, 19);
  const all = [
    [1, 'revoked', revoked.hash, revoked.lastFour, ABILITIES, now],
    [1, 'introspector', introspector.hash, introspector.lastFour, INTROSPECTOR_ABILITIES, null],
    [1, 'writer', writer.hash, writer.lastFour, WRITER_ABILITIES, null],
  ];
  for (let i = 0; i < tokens - 3; i++) {
    const userId = (i % users) + 1;
    let hash;
    let lastFour;
    if (i < known) {
      const token = generateToken();
      valid.push(token.plaintext);
      ({ hash, lastFour } = token);
    } else {
      hash = randomBytes(32).toString('hex');
      lastFour = hash.slice(-4);
    }
    all.push([userId, `token ${i}`, hash, lastFour, ABILITIES, null]);
  }
  for (let i = 0; i < all.length; i += 100_000) {
    await runner.startTransaction();
    await insert(
      'personal_access_tokens',
      ['user_id', 'name', 'token_hash', 'last_four', 'abilities', 'revoked_at'],
      all.slice(i, i + 100_000),
    );
    await runner.commitTransaction();
    log(`  ${Math.min(i + 100_000, all.length)} / ${all.length} tokens`);
  }
  await runner.release();
  await dataSource.destroy();
  log(
    `  seeded ${users} users and ${tokens} tokens in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const invalid = valid[0].slice(0, -1) + (valid[0].at(-1) === 'a' ? 'b' : 'a');
  // The valid tokens' i-th belongs to user i + 1: the first TEAM_SIZE, to the team's members.
  return {
    valid,
    members: valid.slice(0, TEAM_SIZE),
    revoked: revoked.plaintext,
    invalid,
    introspector: introspector.plaintext,
    writer: writer.plaintext,
    teamId: big,
  };
}
