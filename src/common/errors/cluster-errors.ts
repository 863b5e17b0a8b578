/**
 * Errors of a MySQL cluster node, by number: MariaDB and MySQL give some of these numbers
 * different names, so the numbers are what is compared.
 */
interface DriverError {
  errno?: number;
  driverError?: DriverError;
}

/**
 * The node cannot serve now, though it answers: the cluster will take requests again once the
 * node is back in its primary component or the group, or elsewhere behind the load balancer.
 */
const NODE_UNAVAILABLE_ERRNOS = new Set([
  // Galera: "WSREP has not yet prepared node for application use" (not in the primary
  // component, or still joining).
  1047,
  // Galera: a commit the node could not replicate (it lost the primary component meanwhile).
  1180,
  // Galera: a causal read (wsrep_sync_wait) that could not catch up with the cluster within
  // repl.causal_read_timeout, as on a node cut off from it. InnoDB gives the number to a row
  // lock waited for too long, which is as much a reason to try again shortly.
  1205,
  // Group Replication: a former primary, or a secondary, refuses writes (super_read_only).
  1290, 1836,
  // Group Replication: the member is not ONLINE (a replication hook refused the transaction).
  3100,
  // Group Replication: group_replication_consistency cannot be kept in the member's state.
  3796, 3797,
]);

/**
 * The transaction was rolled back because another one got there first: InnoDB's deadlock
 * victim (1213, also what Galera answers when another node's write was certified first), or
 * Group Replication's certification (3101). Nothing of it was kept; running it again is safe.
 */
const CONFLICT_ERRNOS = new Set([1213, 3101]);

function errnoOf(error: unknown): number | undefined {
  const e = error as DriverError | null;
  return e?.driverError?.errno ?? e?.errno;
}

export function isClusterNodeUnavailable(error: unknown): boolean {
  return NODE_UNAVAILABLE_ERRNOS.has(errnoOf(error) ?? 0);
}

export function isTransactionConflict(error: unknown): boolean {
  return CONFLICT_ERRNOS.has(errnoOf(error) ?? 0);
}
