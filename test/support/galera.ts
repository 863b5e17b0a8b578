import mysql, { type Connection } from 'mysql2/promise';
import { randomBytes } from 'node:crypto';
import type { TestDatabase } from './test-database.js';
import { waitFor } from './wait-for.js';

/**
 * The nodes of a Galera cluster the cluster specs run on: TEST_GALERA_URLS, one mysql:// or
 * mariadb:// URL a node (scripts/galera-cluster.sh starts three on 127.0.0.1 and prints them).
 */
export const GALERA_URLS = (process.env.TEST_GALERA_URLS ?? '')
  .split(',')
  .map((url) => url.trim())
  .filter(Boolean);

/** A node's wsrep status, by variable name. */
export type NodeStatus = Record<string, string>;

/** One node of the cluster, reached on its own connection. */
export class GaleraNode {
  constructor(readonly url: string) {}

  /**
   * A connection to this node (to `database`, if named), closed by the caller. Its reads wait
   * for the cluster, as the app's do: what a spec checks is what the cluster committed.
   */
  async connect(database?: string): Promise<Connection> {
    const u = new URL(this.url);
    const connection = await mysql.createConnection({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database,
      connectTimeout: 10_000,
    });
    await connection.query('SET SESSION wsrep_sync_wait = 1');
    return connection;
  }

  async run<T = unknown>(sql: string, values: unknown[] = [], database?: string): Promise<T> {
    const c = await this.connect(database);
    try {
      const [rows] = await c.query(sql, values);
      return rows as T;
    } finally {
      await c.end();
    }
  }

  async status(): Promise<NodeStatus> {
    const rows = await this.run<{ Variable_name: string; Value: string }[]>(
      `SHOW GLOBAL STATUS WHERE Variable_name IN
        ('wsrep_ready', 'wsrep_cluster_size', 'wsrep_cluster_status', 'wsrep_local_state_comment')`,
    );
    return Object.fromEntries(rows.map((r) => [r.Variable_name, r.Value]));
  }

  async synced(size: number): Promise<boolean> {
    const s = await this.status().catch(() => ({}) as NodeStatus);
    return (
      s.wsrep_ready === 'ON' &&
      s.wsrep_local_state_comment === 'Synced' &&
      s.wsrep_cluster_status === 'Primary' &&
      s.wsrep_cluster_size === String(size)
    );
  }

  /** Galera's provider options, as `SET GLOBAL wsrep_provider_options` takes them. */
  setProviderOption(option: string): Promise<unknown> {
    return this.run(`SET GLOBAL wsrep_provider_options = ?`, [option]);
  }

  /**
   * Cuts the node off from the others (its replication traffic stops both ways): once they
   * give up on it, it is alone and outside the primary component.
   */
  isolate(): Promise<unknown> {
    return this.setProviderOption('gmcast.isolate=1');
  }

  /** Lets the node talk to the cluster again; it rejoins and catches up by itself. */
  rejoin(): Promise<unknown> {
    return this.setProviderOption('gmcast.isolate=0');
  }
}

export const galeraNodes = (): GaleraNode[] => GALERA_URLS.map((url) => new GaleraNode(url));

/** Waits until every node says it is synced in a cluster of all of them. */
export async function waitForCluster(nodes: GaleraNode[] = galeraNodes()): Promise<void> {
  await waitFor(
    async () => (await Promise.all(nodes.map((n) => n.synced(nodes.length)))).every(Boolean),
    { timeoutMs: 120_000, intervalMs: 250, message: 'the cluster did not come back together' },
  );
}

/** One fresh database of the cluster, as each node's URL names it. */
export interface ClusterDatabase {
  name: string;
  /** The database on each node, for an app: dropped with the cluster database, not by the app. */
  onNode: TestDatabase[];
  drop(): Promise<void>;
}

/** Creates a database with a unique name (Galera copies it to every node). */
export async function createClusterDatabase(): Promise<ClusterDatabase> {
  const nodes = galeraNodes();
  if (nodes.length < 3) throw new Error('TEST_GALERA_URLS must name three nodes');
  const name = `tessera_galera_${randomBytes(5).toString('hex')}`;
  await nodes[0].run(
    `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
  );
  // Every node has it before an app on any of them connects.
  await waitFor(
    async () => {
      const seen = await Promise.all(
        nodes.map((n) => n.run<unknown[]>('SHOW DATABASES LIKE ?', [name])),
      );
      return seen.every((rows) => rows.length === 1);
    },
    { intervalMs: 50 },
  );
  const onNode = nodes.map((node) => {
    const url = new URL(node.url);
    url.pathname = `/${name}`;
    return { url: url.toString(), kind: 'mysql' as const, drop: async () => {} };
  });
  return {
    name,
    onNode,
    drop: async () => {
      // A node cut off by a failed spec would refuse the statement: drop on any that serves.
      for (const node of nodes) {
        if (
          await node.run(`DROP DATABASE IF EXISTS \`${name}\``).then(
            () => true,
            () => false,
          )
        ) {
          return;
        }
      }
    },
  };
}

/** Each write of the load: enough rows that applying it takes another node a moment. */
const ROWS_PER_WRITE = 100;

/**
 * Writes going on across the cluster while a spec runs: connections to the `writers` nodes
 * insert rows into a table of the spec's database, one write after another, until stopped. The
 * other nodes then always have writes to apply, as they do in production.
 */
export async function startWriteLoad(
  database: ClusterDatabase,
  writers: number[] = [0, 2, 0, 2],
): Promise<{ written: () => number; stop(): Promise<void> }> {
  const nodes = galeraNodes();
  await nodes[0].run(
    'CREATE TABLE write_load (id BIGINT AUTO_INCREMENT PRIMARY KEY, payload VARCHAR(255) NOT NULL)',
    [],
    database.name,
  );
  let stopped = false;
  let written = 0;
  const loops = writers.map(async (node) => {
    const c = await nodes[node].connect(database.name);
    try {
      while (!stopped) {
        const rows = Array.from({ length: ROWS_PER_WRITE }, () => [
          randomBytes(100).toString('hex'),
        ]);
        await c.query('INSERT INTO write_load (payload) VALUES ?', [rows]);
        written++;
      }
    } finally {
      await c.end();
    }
  });
  return {
    written: () => written,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
