import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { setTimeout } from 'node:timers/promises';
import { foreignKeyViolation, isDeadlock } from '../common/errors/database-errors.js';
import { ReferenceNotFoundError, StillReferencedError } from '../common/errors/domain.error.js';
import { inImmediateTransaction } from './sqlite-immediate.js';

const DEADLOCK_ATTEMPTS = 5;

/** What was run again after a conflict: a transaction, or one statement in autocommit. */
export type RetriedWork = 'transaction' | 'statement';

/**
 * Every write goes through here, and a foreign key's refusal of one becomes a domain error (see
 * `rethrow`). On MySQL/MariaDB each unit of work gets its own pooled
 * connection and transaction. TypeORM's SQLite drivers share one connection for everything
 * (typeorm/typeorm#1884), so there a second transaction would nest inside the first and a
 * rollback could take someone else's write with it: units of work are queued, run one at a
 * time, each holding the file's write lock from its start.
 */
@Injectable()
export class Transactions {
  private readonly serial: boolean;
  private tail: Promise<unknown> = Promise.resolve();
  private readonly hooks = new WeakMap<EntityManager, (() => void)[]>();
  private readonly finalSteps = new WeakMap<
    EntityManager,
    ((m: EntityManager) => Promise<void>)[]
  >();
  private readonly logger = new Logger('Database');
  private readonly retryListeners: ((work: RetriedWork) => void)[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.serial = dataSource.options.type === 'better-sqlite3';
  }

  /**
   * Runs `work` in one transaction. On MySQL/MariaDB a transaction rolled back as a deadlock's
   * victim (concurrent inserts into one unique index take gap locks) runs again, up to five
   * times in all, after a short random pause growing with each attempt: `work` must therefore do nothing outside the database.
   *
   * `isolation: 'READ COMMITTED'` (MySQL/MariaDB; SQLite's transactions are serial): locking
   * reads lock the rows they take and not the gaps between them, and each read sees what was
   * committed before it. For a claim on a queue's due rows, where every change that queues a row
   * (a mail, a delivery) inserts at the same time and would otherwise wait on the claim and
   * deadlock with it; and for work that reads, after taking a row's lock, what the request that
   * held it before committed (an invitation renewed by a burst).
   */
  async run<T>(
    work: (manager: EntityManager) => Promise<T>,
    { isolation }: { isolation?: 'READ COMMITTED' } = {},
  ): Promise<T> {
    let hooks: (() => void)[] = [];
    // Each attempt starts with no hooks: those of an attempt rolled back must not run.
    const tracked = async (manager: EntityManager): Promise<T> => {
      hooks = [];
      this.hooks.set(manager, hooks);
      const steps: ((m: EntityManager) => Promise<void>)[] = [];
      this.finalSteps.set(manager, steps);
      const result = await work(manager);
      // Steps may add steps of their own; each runs once, in the order they were asked for.
      for (let i = 0; i < steps.length; i++) await steps[i](manager);
      return result;
    };
    const result = await this.runOnce(tracked, isolation).catch(rethrow);
    for (const hook of hooks) hook();
    return result;
  }

  /**
   * Runs `hook` once the transaction `manager` belongs to has committed, and not at all if it
   * rolls back: for what must not happen before the change is visible to others (waking the
   * mail sender, say). A hook must not throw.
   */
  afterCommit(manager: EntityManager, hook: () => void): void {
    const hooks = this.hooks.get(manager);
    if (!hooks) throw new Error('afterCommit needs the manager of a Transactions.run');
    hooks.push(hook);
  }

  /**
   * Runs `step` in the transaction `manager` belongs to, once its work is done and before it
   * commits: what it writes commits or rolls back with the change (the webhook outbox's rows for
   * the security log's entries, say). A step that throws rolls the change back.
   */
  beforeCommit(manager: EntityManager, step: (m: EntityManager) => Promise<void>): void {
    const steps = this.finalSteps.get(manager);
    if (!steps) throw new Error('beforeCommit needs the manager of a Transactions.run');
    steps.push(step);
  }

  /** Told of every run again after a conflict (the metrics count them). */
  onRetry(listener: (work: RetriedWork) => void): void {
    this.retryListeners.push(listener);
  }

  private async runOnce<T>(
    work: (manager: EntityManager) => Promise<T>,
    isolation?: 'READ COMMITTED',
  ): Promise<T> {
    if (!this.serial) {
      return this.retryingConflicts('transaction', () =>
        isolation
          ? this.dataSource.transaction(isolation, work)
          : this.dataSource.transaction(work),
      );
    }
    const result = this.tail.then(() => inImmediateTransaction(this.dataSource, work));
    this.tail = result.catch(() => undefined);
    return result;
  }

  /**
   * One statement that needs no transaction around it: on MySQL/MariaDB it runs on its own in
   * autocommit, which makes a single statement atomic, in one round trip instead of three
   * (BEGIN, the statement, COMMIT); on SQLite it is queued like every other write. A statement
   * rolled back by a conflict runs again, as a transaction does: `statement` must be that one
   * statement and nothing outside the database (a conditional update stays a no-op the second
   * time when the first try's change had been made by someone else), or several such statements
   * that need not commit together (then each is atomic alone, and SQLite runs them in one
   * transaction).
   */
  runStatement<T>(statement: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.serial) return this.run(statement);
    return this.retryingConflicts('statement', () => statement(this.dataSource.manager)).catch(
      rethrow,
    );
  }

  /**
   * Runs `attempt` again, after a short random pause growing each time, while the database rolls
   * it back as a deadlock's victim or a cluster's certification conflict (another node's write to
   * the same rows came first): nothing of a rolled-back try was kept, so trying again is safe.
   */
  private async retryingConflicts<T>(work: RetriedWork, attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isDeadlock(error) || tries >= DEADLOCK_ATTEMPTS) throw error;
        this.logger.debug(
          `A ${work} was rolled back by a conflict (${String((error as Error).message)}); running it again (${tries + 1} of ${DEADLOCK_ATTEMPTS})`,
        );
        for (const listener of this.retryListeners) listener(work);
        await setTimeout(5 + Math.random() * 20 * tries);
      }
    }
  }
}

/**
 * A foreign key's refusal, in every write, as the domain error a person can be told (404 or
 * 422) instead of an unexpected failure; anything else as it was.
 */
function rethrow(error: unknown): never {
  const violation = foreignKeyViolation(error);
  if (violation === 'missing') throw new ReferenceNotFoundError();
  if (violation === 'referenced') throw new StillReferencedError();
  throw error;
}
