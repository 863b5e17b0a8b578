import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { Transactions, type RetriedWork } from '../database/transactions.js';

/** mysql2's pool keeps its connections in queues with a length; fields of its own, read defensively. */
interface MysqlPoolState {
  config?: { connectionLimit?: number };
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

/** `error` is anything unexpected (the database down, a bug): the answer is 5xx. */
const AUTH_OUTCOMES = [
  'success',
  'missing_token',
  'invalid_token',
  'token_revoked',
  'token_expired',
  'account_disabled',
  'insufficient_scope',
  'ability_not_allowed_by_team',
  'two_factor_required',
  'token_lifetime_exceeds_policy',
  'team_access_lost',
  'rate_limited',
  'error',
] as const;

/** What became of a try at sending a message from the outbox. */
const MAIL_OUTCOMES = ['sent', 'retried', 'failed', 'dropped'] as const;

const RETRIED_WORK: RetriedWork[] = ['transaction', 'statement'];
export type MailOutcome = (typeof MAIL_OUTCOMES)[number];

/** Seconds: from a cheap rejection (well under a millisecond) to the query timeout and beyond. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The Prometheus metrics of one app, in a registry of its own: request durations by route,
 * bearer authentications by outcome, the database pool, and Node's process metrics.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  private readonly authentications: Counter<'outcome'>;
  private readonly mailMessages: Counter<'outcome'>;
  private readonly uncountedHits: Counter<'kind' | 'outcome'>;

  constructor(@InjectDataSource() dataSource: DataSource, transactions: Transactions) {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to closing its response, by route pattern, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: BUCKETS,
      registers,
    });
    this.authentications = new Counter({
      name: 'tessera_api_authentications_total',
      help: 'API bearer authentications by outcome: success, or the error code of the refusal',
      labelNames: ['outcome'],
      registers,
    });
    // Every outcome has a series from the start, so a rate() alert works before the first one.
    for (const outcome of AUTH_OUTCOMES) this.authentications.inc({ outcome }, 0);
    this.mailMessages = new Counter({
      name: 'tessera_mail_messages_total',
      help: 'Outbox deliveries by outcome: sent; retried (a try failed, another is scheduled); failed (given up after MAIL_MAX_ATTEMPTS); dropped (nothing left to send)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of MAIL_OUTCOMES) this.mailMessages.inc({ outcome }, 0);
    const retries = new Counter({
      name: 'tessera_db_conflict_retries_total',
      help: 'Transactions and autocommit statements run again after the database rolled them back as a deadlock victim or a cluster certification conflict (another node wrote the same rows first)',
      labelNames: ['work'],
      registers,
    });
    for (const work of RETRIED_WORK) retries.inc({ work }, 0);
    transactions.onRetry((work) => retries.inc({ work }));
    this.uncountedHits = new Counter({
      name: 'tessera_rate_limit_uncounted_total',
      help: 'Rate-limit counters a hit could not reach (Redis unreachable, or a full in-process security pool), by limit and outcome: refused (503, or 429 for a full pool) or allowed (let through uncounted). One request may miss several counters: a sign-in has three',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    // SQLite has one connection and no pool to watch.
    if (dataSource.options.type !== 'better-sqlite3') this.watchPool(dataSource, registers);
  }

  private watchPool(dataSource: DataSource, registers: Registry[]): void {
    const pool = () => (dataSource.driver as unknown as { pool?: MysqlPoolState }).pool;
    const gauge = (name: string, help: string, read: (p: MysqlPoolState) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const p = pool();
          const value = p && read(p);
          if (typeof value === 'number') this.set(value);
        },
      });
    gauge(
      'tessera_db_pool_connections_in_use',
      'Database connections running a query',
      (p) =>
        p._allConnections &&
        p._freeConnections &&
        p._allConnections.length - p._freeConnections.length,
    );
    gauge(
      'tessera_db_pool_connections_idle',
      'Open database connections at rest',
      (p) => p._freeConnections?.length,
    );
    gauge(
      'tessera_db_pool_waiting',
      'Queries waiting for a free database connection',
      (p) => p._connectionQueue?.length,
    );
    gauge(
      'tessera_db_pool_connections_max',
      'The pool size (DB_POOL_SIZE)',
      (p) => p.config?.connectionLimit,
    );
  }

  /** One bearer authentication: `success`, or the code it was refused with. */
  authentication(outcome: string): void {
    this.authentications.inc({ outcome });
  }

  /**
   * A rate-limit hit that could not be counted: `refused` or `allowed` through uncounted. The
   * rate-limit module declares every limit with `by` 0 at start, so each series exists.
   */
  uncountedHit(kind: string, outcome: 'refused' | 'allowed', by = 1): void {
    this.uncountedHits.inc({ kind, outcome }, by);
  }

  /** One try at sending a message from the outbox. */
  mail(outcome: MailOutcome): void {
    this.mailMessages.inc({ outcome });
  }

  /** Every request, from its first middleware to the close of its response (observeRequests). */
  readonly watch = (outcome: {
    method: string;
    route: string | null;
    status: number;
    durationMs: number;
  }): void => {
    const { method, route, status, durationMs } = outcome;
    this.duration.observe(
      { method, route: route ?? '(unmatched)', status: String(status) },
      durationMs / 1000,
    );
  };
}
