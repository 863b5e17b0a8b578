import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { setTimeout } from 'node:timers/promises';
import { foreignKeyViolation, isDeadlock } from '../common/errors/database-errors.js';
import { ReferenceNotFoundError, StillReferencedError } from '../common/errors/domain.error.js';
import { inImmediateTransaction } from './sqlite-immediate.js';

const DEADLOCK_ATTEMPTS = 5;

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

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.serial = dataSource.options.type === 'better-sqlite3';
  }

  /**
   * Runs `work` in one transaction. On MySQL/MariaDB a transaction rolled back as a deadlock's
   * victim (concurrent inserts into one unique index take gap locks) runs again, up to five
   * times in all, after a short random pause growing with each attempt: `work` must therefore do nothing outside the database.
   */
  async run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    let hooks: (() => void)[] = [];
    // Each attempt starts with no hooks: those of an attempt rolled back must not run.
    const tracked = (manager: EntityManager): Promise<T> => {
      hooks = [];
      this.hooks.set(manager, hooks);
      return work(manager);
    };
    const result = await this.runOnce(tracked).catch(rethrow);
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

  private async runOnce<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (!this.serial) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.dataSource.transaction(work);
        } catch (error) {
          if (!isDeadlock(error) || attempt >= DEADLOCK_ATTEMPTS) throw error;
          await setTimeout(5 + Math.random() * 20 * attempt);
        }
      }
    }
    const result = this.tail.then(() => inImmediateTransaction(this.dataSource, work));
    this.tail = result.catch(() => undefined);
    return result;
  }

  /**
   * One statement that needs no transaction around it: on MySQL/MariaDB it runs on its own in
   * autocommit, which makes a single statement atomic, in one round trip instead of three
   * (BEGIN, the statement, COMMIT); on SQLite it is queued like every other write.
   */
  runStatement<T>(statement: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.serial ? this.run(statement) : statement(this.dataSource.manager).catch(rethrow);
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
