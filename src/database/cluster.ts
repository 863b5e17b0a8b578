import mysql from 'mysql2';
import type { Pool, PoolConnection, PoolOptions } from 'mysql2';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { createDataSource } from './millisecond-times.js';

/**
 * What kind of MySQL-family server the app talks to: a node of a Galera cluster (MariaDB
 * Galera Cluster, Percona XtraDB Cluster), a member of a MySQL Group Replication group (InnoDB
 * Cluster), or a server of its own (or SQLite).
 */
export type ClusterKind = 'galera' | 'group-replication' | 'none';

/**
 * Run once on every pooled connection as it opens, so that every read sees what any node had
 * committed when the read began: a node of these clusters otherwise answers from what it has
 * applied so far, which may lag another node's commit (a token revoked there, still accepted
 * here). The cost is one wait for the cluster's position per read; docs/operations.md says more.
 */
export const CAUSAL_READS: Record<Exclude<ClusterKind, 'none'>, string> = {
  galera: 'SET SESSION wsrep_sync_wait = 1',
  'group-replication': "SET SESSION group_replication_consistency = 'BEFORE'",
};

/** Reads a server's variables: what tells a Galera node or a Group Replication member. */
export const CLUSTER_VARIABLES_SQL =
  "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'group_replication_group_name')";

/** The kind of server whose `SHOW GLOBAL VARIABLES` answered `rows`. */
export function clusterKindOf(rows: { Variable_name: string; Value: string }[]): ClusterKind {
  const value = (name: string) => rows.find((r) => r.Variable_name === name)?.Value ?? '';
  if (value('wsrep_on').toUpperCase() === 'ON') return 'galera';
  if (value('group_replication_group_name') !== '') return 'group-replication';
  return 'none';
}

type MysqlOptions = Extract<DataSourceOptions, { type: 'mysql' | 'mariadb' }>;

/** Asks the server what it is, on a connection of its own that is closed straight after. */
export async function probeCluster(options: DataSourceOptions): Promise<ClusterKind> {
  if (options.type !== 'mysql' && options.type !== 'mariadb') return 'none';
  const o = options as MysqlOptions;
  const connection = mysql.createConnection({
    host: o.host,
    port: o.port,
    user: o.username,
    password: o.password,
    database: o.database,
    connectTimeout: o.connectTimeout,
  });
  try {
    const [rows] = await connection
      .promise()
      .query(CLUSTER_VARIABLES_SQL)
      .catch((error: unknown) => {
        connection.destroy();
        throw error;
      });
    return clusterKindOf(rows as { Variable_name: string; Value: string }[]);
  } finally {
    await connection
      .promise()
      .end()
      .catch(() => undefined);
  }
}

/**
 * mysql2 with pools whose every new connection first runs `statement`: the connection is
 * handed out only after the statement is queued on it, and queries on a connection run in
 * order, so nothing reads before it. A connection that cannot take the setting is closed
 * rather than used without it.
 */
export function driverWithSessionSetting(
  statement: string,
  onFailure: (error: Error) => void,
  base: Pick<typeof mysql, 'createPool'> = mysql,
): typeof mysql {
  const createPool = (config: PoolOptions): Pool => {
    const pool = base.createPool(config);
    pool.on('connection', (connection: PoolConnection) => {
      connection.query(statement, (error) => {
        if (!error) return;
        onFailure(error);
        connection.destroy();
      });
    });
    return pool;
  };
  return { ...mysql, ...base, createPool } as typeof mysql;
}

/**
 * The data source, after a look at what kind of server it is: on a cluster node every pooled
 * connection gets the causal-read setting before its first query.
 */
export async function connectToCluster(
  options: DataSourceOptions,
  onFailure: (error: Error) => void,
): Promise<{ dataSource: DataSource; kind: ClusterKind }> {
  const kind = await probeCluster(options);
  if (kind === 'none') return { dataSource: createDataSource(options), kind };
  // Over the driver the options name (the pool guard's), so both apply to every connection.
  const base = (options as MysqlOptions).driver as Pick<typeof mysql, 'createPool'> | undefined;
  const driver = driverWithSessionSetting(CAUSAL_READS[kind], onFailure, base);
  return { dataSource: createDataSource({ ...options, driver } as DataSourceOptions), kind };
}
