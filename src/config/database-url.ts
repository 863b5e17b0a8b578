export type DatabaseTarget =
  | { type: 'sqlite'; database: string }
  | {
      type: 'mysql' | 'mariadb';
      host: string;
      port: number;
      username: string;
      password: string;
      database: string;
    };

/**
 * Parses DATABASE_URL: `sqlite:<path>`, `sqlite::memory:`, `mysql://user:pass@host:port/db`
 * or `mariadb://…`. Returns an error message instead of throwing so config validation can
 * report every bad variable at once.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget | string {
  if (url.startsWith('sqlite:')) {
    const database = url.slice('sqlite:'.length);
    return database ? { type: 'sqlite', database } : 'sqlite: needs a file path or :memory:';
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  const type = parsed.protocol.slice(0, -1);
  if (type !== 'mysql' && type !== 'mariadb') {
    return `unsupported scheme "${type}:"`;
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!parsed.hostname || !database) {
    return `${type}:// needs a host and a database name`;
  }
  return {
    type,
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 3306,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database,
  };
}
