import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/**
 * Every write goes through here. On MySQL/MariaDB each unit of work gets its own pooled
 * connection and transaction. TypeORM's better-sqlite3 driver shares one connection for
 * everything, so there a second transaction would nest inside the first and a rollback could
 * take someone else's write with it: units of work are queued and run one at a time.
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
    const result = this.tail.then(() => this.dataSource.transaction(work));
    this.tail = result.catch(() => undefined);
    return result;
  }
}
