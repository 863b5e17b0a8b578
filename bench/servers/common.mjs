// Shared by the comparison servers: the same query, the same JSON as Tessera's profile answer.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';

// The token's id from the hash index, then the rows by their keys: the form Tessera's own query
// takes. SQLite runs the plain join (`WHERE t.token_hash = ?`) about twice as slowly for the same
// row; MariaDB plans both as constant lookups.
export const PROFILE_SQL = `SELECT t.id AS token_id, t.abilities, t.expires_at, t.revoked_at,
       u.id AS user_id, u.name AS user_name, u.email AS user_email
  FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
 WHERE t.id = (SELECT id FROM personal_access_tokens WHERE token_hash = ?)`;

export const sha256 = (value) => createHash('sha256').update(value).digest('hex');

const origin = performance.timeOrigin;
export function timestamp() {
  const micros = Math.floor((origin + performance.now()) * 1000);
  return `${new Date(Math.floor(micros / 1000)).toISOString().slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

export function profileBody(row) {
  return JSON.stringify({
    success: true,
    data: { id: row.user_id, name: row.user_name, email: row.user_email },
    version: 'v1',
    timestamp: timestamp(),
  });
}

export function errorBody(code) {
  return JSON.stringify({
    success: false,
    error: { code, message: code },
    version: 'v1',
    timestamp: timestamp(),
  });
}

/** The row's verdict, as Tessera gives it: null when usable, else the error code. */
export function verdict(row) {
  if (!row) return 'invalid_token';
  if (row.revoked_at) return 'token_revoked';
  if (row.expires_at && new Date(row.expires_at) <= new Date()) return 'token_expired';
  if (!String(row.abilities).split(',').includes('user:read')) return 'insufficient_scope';
  return null;
}

export const port = Number(process.env.PORT ?? 4000);

/**
 * The token's row by its hash, from DATABASE_URL: mysql2's promise pool with a prepared
 * statement for MySQL/MariaDB (as people usually write it), better-sqlite3 for `sqlite:` URLs.
 * @returns {Promise<(hash: string) => Promise<object | undefined>>}
 */
export async function profileLookup(url = process.env.DATABASE_URL) {
  if (url.startsWith('sqlite:')) {
    const { default: Database } = await import('better-sqlite3');
    const statement = new Database(url.slice('sqlite:'.length), { readonly: true }).prepare(
      PROFILE_SQL,
    );
    return async (hash) => statement.get(hash);
  }
  const { default: mysql } = await import('mysql2/promise');
  const pool = mysql.createPool({
    uri: url,
    connectionLimit: 10,
    charset: 'utf8mb4_bin',
    timezone: 'Z',
  });
  return async (hash) => (await pool.execute(PROFILE_SQL, [hash]))[0][0];
}
