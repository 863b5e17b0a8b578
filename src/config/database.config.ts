import { boolean, EnvReader, integer, redactUrl } from './env-reader.js';
import { parseDatabaseUrl, type DatabaseTarget } from './database-url.js';

export const DEFAULT_DATABASE_URL = 'sqlite:data/tessera.sqlite';

export interface DatabaseConfig {
  target: DatabaseTarget;
  migrate: boolean;
  poolSize: number;
  /**
   * A query, a connection attempt or a wait for a free connection slower than this fails (503),
   * so requests never hang; the server is told to give up on statements and lock waits then too.
   */
  queryTimeoutMs: number;
  /** How long the database may leave every query unanswered before /health/live fails. */
  livenessStallMs: number;
}

const databaseUrl = (raw: string): DatabaseTarget | { error: string } => {
  const target = parseDatabaseUrl(raw);
  return typeof target === 'string'
    ? {
        error: `${target}; allowed: sqlite:<path>, sqlite::memory:, mysql://user:pass@host:port/db, mariadb://user:pass@host:port/db`,
      }
    : target;
};

export function readDatabaseConfig(r: EnvReader): DatabaseConfig {
  return {
    target: r.read('DATABASE_URL', DEFAULT_DATABASE_URL, databaseUrl, redactUrl),
    migrate: r.read('DB_MIGRATE', 'true', boolean),
    poolSize: r.read('DB_POOL_SIZE', '10', integer(1, 1000)),
    queryTimeoutMs: r.read('DB_QUERY_TIMEOUT_MS', '1500', integer(100, 600_000)),
    livenessStallMs: r.read('DB_LIVENESS_STALL_MS', '30000', integer(1000, 3_600_000)),
  };
}
