import { Logger } from '@nestjs/common';
import { createPool, type Pool, type PoolConnection, type PoolOptions } from 'mysql2';
import type { DataSource } from 'typeorm';
import { DatabaseHealth } from './database-health.js';

/** The code of every failure that means the database gave no answer in time. */
export const NO_ANSWER_CODE = 'PROTOCOL_SEQUENCE_TIMEOUT';
/** A wait for a free connection that took longer than DB_QUERY_TIMEOUT_MS. */
export const POOL_WAIT_CODE = 'POOL_ACQUIRE_TIMEOUT';
/** Waiters kept at most; past it a request is refused at once, as if its wait had timed out. */
const MAX_WAITING = 1_000;

type Flavour = 'mariadb' | 'mysql';
type Acquired = (error: DriverFailure | null, connection?: PoolConnection) => void;

interface DriverFailure extends Error {
  code?: string;
  fatal?: boolean;
}

/** What mysql2 queues on a connection: a query, a prepared statement's execution, a ping. */
interface Command {
  onResult?: (error: DriverFailure | null, ...rest: unknown[]) => void;
  once(event: 'end', listener: () => void): unknown;
}

/** The parts of mysql2's connection it does not type: its command queue and its socket. */
interface WatchedConnection extends PoolConnection {
  addCommand(command: Command): Command;
  stream: { destroy(error?: Error): void };
}

const guards = new WeakMap<Pool, PoolGuard>();

/**
 * mysql2's pool, made to fail fast when the database stalls. mysql2's query timeout answers the
 * caller but neither cancels the statement nor frees the connection: the next command on it
 * (TypeORM's ROLLBACK) waits behind the stuck one, and a black-holed connection never answers.
 * So a connection whose query timed out is closed at once, failing whatever waits on it and
 * leaving the pool to open a fresh one; the wait for a free connection is bounded (mysql2 has no
 * acquire timeout); and each connection tells the server to give up on a statement or a lock
 * wait after the same time, so a lock held elsewhere ends in an error instead of a stall.
 */
export class PoolGuard {
  private readonly logger = new Logger('Database');
  private flavour: Promise<Flavour> | undefined;
  /** What each connection's session was last told: limits on (true) or lifted (false). */
  private readonly limited = new WeakMap<PoolConnection, boolean>();
  private readonly waiters = new WeakSet<Acquired>();
  private readonly closed = new WeakSet<PoolConnection>();
  private waiting = 0;
  /** Operations under way that need no limits (migrations). */
  private lifted = 0;

  constructor(
    readonly pool: Pool,
    private readonly timeoutMs: number,
    readonly health: DatabaseHealth,
  ) {
    guards.set(pool, this);
    pool.on('connection', (connection) => this.watch(connection as WatchedConnection));
    const acquire = pool.getConnection.bind(pool) as (callback: Acquired) => void;
    // pool.query/execute and TypeORM all ask through getConnection.
    pool.getConnection = ((callback: Acquired) => this.acquire(acquire, callback)) as never;
  }

  /** Lifts the limits on the connections handed out until the returned function is called. */
  lift(): () => void {
    this.lifted++;
    let restored = false;
    return () => {
      if (!restored) this.lifted--;
      restored = true;
    };
  }

  private acquire(acquire: (callback: Acquired) => void, callback: Acquired): void {
    // mysql2 gives a waiter whose connection it dropped back to getConnection: already timed.
    if (this.waiters.has(callback)) return acquire(callback);
    if (this.waiting >= MAX_WAITING) {
      this.health.stalled();
      process.nextTick(
        callback,
        failure(POOL_WAIT_CODE, 'Too many requests wait for a connection'),
      );
      return;
    }
    this.waiting++;
    let answered = false;
    const timer = setTimeout(() => {
      answered = true;
      this.health.stalled();
      callback(failure(POOL_WAIT_CODE, `No free connection within ${this.timeoutMs} ms`));
    }, this.timeoutMs).unref();
    const handed: Acquired = (error, connection) => {
      this.waiting--;
      // The caller gave up: the connection goes to the next waiter.
      if (answered) return connection?.release();
      answered = true;
      clearTimeout(timer);
      if (error) {
        if (error.code === 'ETIMEDOUT') this.health.stalled();
        return callback(error);
      }
      this.prepare(connection!, callback);
    };
    this.waiters.add(handed);
    acquire(handed);
  }

  /** Sets the session's limits before the connection's first use, and after a migration. */
  private prepare(connection: PoolConnection, callback: Acquired): void {
    const wanted = this.lifted === 0;
    if (this.limited.get(connection) === wanted) return callback(null, connection);
    this.serverFlavour(connection)
      .then((flavour) => this.run(connection, sessionLimits(flavour, wanted ? this.timeoutMs : 0)))
      .then(
        () => {
          this.limited.set(connection, wanted);
          callback(null, connection);
        },
        (error: DriverFailure) => {
          connection.destroy();
          callback(error);
        },
      );
  }

  /** MariaDB and MySQL name the statement limit differently; the first connection asks which. */
  private serverFlavour(connection: PoolConnection): Promise<Flavour> {
    this.flavour ??= this.run<{ version: string }[]>(connection, 'SELECT VERSION() AS version')
      .then(([row]) => (/mariadb/i.test(row.version) ? 'mariadb' : 'mysql'))
      .catch((error: unknown) => {
        this.flavour = undefined;
        throw error;
      });
    return this.flavour;
  }

  private run<T = unknown>(connection: PoolConnection, sql: string): Promise<T> {
    return new Promise((resolve, reject) =>
      connection.query({ sql, timeout: this.timeoutMs }, (error, rows) =>
        error ? reject(error) : resolve(rows as T),
      ),
    );
  }

  /** Sees every command on a new connection, to close the connection when one times out. */
  private watch(connection: WatchedConnection): void {
    const add = connection.addCommand.bind(connection);
    connection.addCommand = (command) => add(this.observed(connection, command));
  }

  /**
   * Answers a command's caller once, and closes its connection when it had no answer in time.
   * Timed from when it was queued: mysql2 times a query only from when it starts, and a prepare
   * not at all, so a command queued behind a stuck one would wait for ever. Not while the limits
   * are lifted (a migration may take its time).
   */
  private observed(connection: WatchedConnection, command: Command): Command {
    const onResult = command.onResult;
    if (!onResult) return command;
    let settled = false;
    const timer =
      this.limited.get(connection) === false
        ? undefined
        : setTimeout(() => this.close(connection), this.timeoutMs).unref();
    // A command can also end without an answer to give (an execute whose prepare failed).
    command.once('end', () => clearTimeout(timer));
    command.onResult = (error, ...rest) => {
      // mysql2 answers a timed-out command a second time when its connection closes.
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error?.code === NO_ANSWER_CODE) this.close(connection);
      else if (!error?.fatal) this.health.answered();
      onResult.call(command, error, ...rest);
    };
    return command;
  }

  /**
   * Destroys the socket (a graceful end would wait for a server that does not answer): mysql2
   * then fails the stuck command and every one queued behind it, and drops the connection.
   */
  private close(connection: WatchedConnection): void {
    if (this.closed.has(connection)) return;
    this.closed.add(connection);
    this.health.stalled();
    this.logger.warn(
      `Closed a database connection: a query had no answer within ${this.timeoutMs} ms`,
    );
    connection.stream.destroy(
      failure(NO_ANSWER_CODE, 'Connection closed: a query on it had no answer in time'),
    );
  }
}

/**
 * The server gives up a tenth before the client does, so that a lock wait or a slow statement
 * ends in the server's error on a connection that stays usable, rather than in a closed one.
 * The statement limit in the server's own terms (MariaDB: seconds; MySQL: milliseconds, SELECT
 * only) and InnoDB's lock wait (whole seconds, at least one); a timeout of 0 lifts both.
 */
export function sessionLimits(flavour: Flavour, timeoutMs: number): string {
  const serverMs = Math.floor(timeoutMs * 0.9);
  const lockWait = timeoutMs === 0 ? 'DEFAULT' : String(Math.max(1, Math.floor(serverMs / 1000)));
  const statement =
    flavour === 'mariadb'
      ? `max_statement_time = ${serverMs / 1000}`
      : `max_execution_time = ${serverMs}`;
  return `SET SESSION ${statement}, innodb_lock_wait_timeout = ${lockWait}`;
}

/** mysql2 for TypeORM's `driver` option: the same module, with its pools guarded. */
export function guardedMysql2(timeoutMs: number, health: DatabaseHealth) {
  return {
    createPool: (options: PoolOptions): Pool =>
      new PoolGuard(createPool(options), timeoutMs, health).pool,
  };
}

/**
 * Runs `work` without the statement limits and without mysql2's query timeout: waiting for the
 * migration lock, or a migration itself, may rightly outlast a request's query.
 */
export async function withoutQueryLimits<T>(
  dataSource: DataSource,
  work: () => Promise<T>,
): Promise<T> {
  const options = dataSource.driver.options as { enableQueryTimeout?: boolean };
  const timeouts = options.enableQueryTimeout;
  options.enableQueryTimeout = false;
  const restore = guardOf(dataSource)?.lift();
  try {
    return await work();
  } finally {
    restore?.();
    options.enableQueryTimeout = timeouts;
  }
}

/** The guard of a MySQL/MariaDB data source's pool; undefined on SQLite. */
export function guardOf(dataSource: DataSource): PoolGuard | undefined {
  const pool = (dataSource.driver as { pool?: Pool }).pool;
  return pool && guards.get(pool);
}

function failure(code: string, message: string): DriverFailure {
  return Object.assign(new Error(message), { code });
}
