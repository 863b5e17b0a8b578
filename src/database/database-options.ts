import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from '../config/database.config.js';
import { UpdateDatesWithMilliseconds } from './millisecond-times.js';
import { DatabaseHealth } from './database-health.js';
import { DatabaseLog } from './database-log.js';
import { MIGRATIONS } from './migrations/index.js';
import { guardedMysql2 } from './pool-guard.js';

/**
 * The one place TypeORM's options are built: the app, the CLI and ormconfig.ts all call it, with
 * the entities of the features (`src/entities.ts`), which this folder knows nothing of. Make the
 * data source with `createDataSource` (millisecond-times.ts), never `new DataSource`.
 */
export function buildDataSourceOptions(
  config: DatabaseConfig,
  entities: NonNullable<DataSourceOptions['entities']>,
  health = new DatabaseHealth(),
): DataSourceOptions {
  const common = {
    entities,
    subscribers: [UpdateDatesWithMilliseconds],
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    logging: false,
    logger: new DatabaseLog(),
  };
  const target = config.target;
  if (target.type === 'sqlite') {
    // TypeORM creates the file's folder and turns foreign keys on. A locked file is waited on
    // (synchronously: the busy timeout) no longer than any query may take.
    return {
      ...common,
      type: 'better-sqlite3',
      database: target.database,
      enableWAL: target.database !== ':memory:',
      timeout: config.queryTimeoutMs,
    };
  }
  return {
    ...common,
    type: target.type,
    host: target.host,
    port: target.port,
    username: target.username,
    password: target.password,
    database: target.database,
    charset: 'utf8mb4_bin',
    timezone: 'Z',
    poolSize: config.poolSize,
    // A database that stops answering fails requests fast (503) instead of hanging them: the
    // client's timeouts, and the server's own limits with a pool that heals (pool-guard.ts).
    connectTimeout: config.queryTimeoutMs,
    maxQueryExecutionTime: config.queryTimeoutMs,
    enableQueryTimeout: true,
    driver: guardedMysql2(config.queryTimeoutMs, health),
    extra: {
      enableKeepAlive: true,
      // Only the authentication query is prepared (tokens/token-authenticator.ts): mysql2's
      // default cache of 16,000 statements a connection preallocates ~0.5 MB of arrays on each
      // (docs/PERFORMANCE.md).
      maxPreparedStatements: 64,
      // mysql2 captures a stack trace at every query (`trace`, on by default) so that a failed
      // query's error shows its caller: a few per cent of a page view's CPU, spent on every query
      // for the rare one that fails, whose statement TypeORM's error names anyway.
      trace: false,
    },
  };
}
