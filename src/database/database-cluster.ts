import { Logger } from '@nestjs/common';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { connectToCluster, type ClusterKind } from './cluster.js';

/** How a node of a cluster stands, for the readiness probe. */
export interface NodeState {
  /** Serving: part of the cluster's primary component and caught up with it. */
  ready: boolean;
  /** What the server said (Galera's wsrep_* status, a Group Replication member's state). */
  detail: Record<string, string>;
}

const GALERA_STATUS_SQL = `SHOW GLOBAL STATUS WHERE Variable_name IN
  ('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_status')`;

const GROUP_MEMBER_SQL = `SELECT MEMBER_STATE AS member_state
  FROM performance_schema.replication_group_members WHERE MEMBER_ID = @@server_uuid`;

/**
 * The kind of server the app's data source talks to (found once, when it connects) and, on a
 * cluster node, whether that node may serve: a Galera node cut off from the primary component,
 * or still catching up, refuses queries, and the load balancer should send requests elsewhere.
 */
export class DatabaseCluster {
  private readonly logger = new Logger('Database');
  kind: ClusterKind = 'none';
  private dataSource?: DataSource;

  /** The data source for `options`, its pooled connections set for causal reads on a cluster. */
  async connect(options: DataSourceOptions): Promise<DataSource> {
    const { dataSource, kind } = await connectToCluster(options, (error) =>
      this.logger.error(`A new database connection refused the causal-read setting: ${error}`),
    );
    this.kind = kind;
    this.dataSource = dataSource;
    if (kind === 'galera') {
      this.logger.log('Galera cluster node: reads wait for the cluster (wsrep_sync_wait=1)');
    } else if (kind === 'group-replication') {
      this.logger.log(
        "Group Replication member: reads wait for the group (group_replication_consistency='BEFORE')",
      );
    }
    return dataSource;
  }

  /**
   * Whether this node is synced with its cluster's primary component: one status query on a
   * cluster node, none elsewhere. A node that refuses even that query is not ready.
   */
  async nodeState(): Promise<NodeState> {
    if (this.kind === 'none' || !this.dataSource) return { ready: true, detail: {} };
    if (this.kind === 'galera') {
      const rows: { Variable_name: string; Value: string }[] =
        await this.dataSource.query(GALERA_STATUS_SQL);
      const detail = Object.fromEntries(rows.map((r) => [r.Variable_name, r.Value]));
      const ready =
        detail.wsrep_ready === 'ON' &&
        detail.wsrep_cluster_status === 'Primary' &&
        detail.wsrep_local_state_comment === 'Synced';
      return { ready, detail };
    }
    const [row] = await this.dataSource.query(GROUP_MEMBER_SQL);
    const state = String(row?.member_state ?? 'OFFLINE');
    return { ready: state === 'ONLINE', detail: { member_state: state } };
  }
}
