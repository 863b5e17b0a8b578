import { performance } from 'node:perf_hooks';

/**
 * Whether the database still answers: every query or connection that got no answer within
 * DB_QUERY_TIMEOUT_MS is a stall, and any answer (rows, or an error the server sent) ends it.
 * A refused connection is neither: the server is down, and a restart would not help. Measured
 * on the monotonic clock, as a timeout is, so a wall-clock step changes nothing.
 */
export class DatabaseHealth {
  private stalledSince: number | undefined;

  answered(): void {
    this.stalledSince = undefined;
  }

  stalled(): void {
    this.stalledSince ??= performance.now();
  }

  /** How long queries have waited on the database with no answer since; 0 while it answers. */
  stalledForMs(): number {
    return this.stalledSince === undefined ? 0 : performance.now() - this.stalledSince;
  }
}
