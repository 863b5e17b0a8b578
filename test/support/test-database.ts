import mysql from 'mysql2/promise';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDatabaseUrl } from '../../src/config/database-url.js';

export interface TestDatabase {
  url: string;
  kind: 'sqlite' | 'mysql';
  drop(): Promise<void>;
}

/** The server the e2e suite runs on: TEST_DATABASE_URL (MySQL/MariaDB), or SQLite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || '';

/**
 * A fresh, empty database for one app: its own database on the MySQL server (created with a
 * unique name, dropped afterwards), or SQLite (in memory, or a temporary file when other
 * processes must open it too).
 */
export async function createTestDatabase(options: { file?: boolean } = {}): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    if (!options.file) return { url: 'sqlite::memory:', kind: 'sqlite', drop: async () => {} };
    const dir = mkdtempSync(join(tmpdir(), 'tessera-test-'));
    return {
      url: `sqlite:${join(dir, 'tessera.sqlite')}`,
      kind: 'sqlite',
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const target = parseDatabaseUrl(TEST_DATABASE_URL);
  if (typeof target === 'string' || target.type === 'sqlite') {
    throw new Error(`TEST_DATABASE_URL must be a mysql:// or mariadb:// URL (${String(target)})`);
  }
  const name = `${target.database}_${randomBytes(5).toString('hex')}`;
  const server = {
    host: target.host,
    port: target.port,
    user: target.username,
    password: target.password,
  };
  const admin = await mysql.createConnection(server);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    kind: 'mysql',
    drop: async () => {
      const conn = await mysql.createConnection(server);
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    },
  };
}
