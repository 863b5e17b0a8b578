import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { inImmediateTransaction } from './sqlite-immediate.js';

/**
 * Every write goes through here. On MySQL/MariaDB each unit of work gets its own pooled
 * connection and transaction. TypeORM's SQLite drivers share one connection for everything
 * (typeorm/typeorm#1884), so there a second transaction would nest inside the first and a
 * rollback could take someone else's write with it: units of work are queued, run one at a
 * time, each holding the file's write lock from its start.
 */
@Injectable()
export class Transactions {
  private readonly serial: boolean;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.serial = dataSource.options.type === 'better-sqlite3';
  }

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (!this.serial) return this.dataSource.transaction(work);
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
    return this.serial ? this.run(statement) : statement(this.dataSource.manager);
  }
}
