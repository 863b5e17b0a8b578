import type { DataSource, Logger } from 'typeorm';

/** Records every query TypeORM sends, so tests can count what a request costs. */
export class QueryLog implements Logger {
  queries: string[] = [];
  /** The query runner that sent each query, in the same order. */
  runners: unknown[] = [];

  static attach(dataSource: DataSource): QueryLog {
    const log = new QueryLog();
    Object.defineProperty(dataSource, 'logger', { value: log, configurable: true, writable: true });
    return log;
  }

  clear(): void {
    this.queries = [];
    this.runners = [];
  }

  /**
   * The queries of a request that wrote in one transaction, without the transactions the work
   * it left for afterwards ran (the mail sender's claims, the security log's writes of what was
   * no change): those begin after its commit, each on a query runner of its own. A change's own
   * security log entry is written in its transaction, and counted.
   */
  requestQueries(): string[] {
    let committed = false;
    const background = new Set<unknown>();
    return this.queries.filter((query, i) => {
      const runner = this.runners[i];
      const verb = query.trimStart().toUpperCase();
      // A transaction with its own isolation level (a queue's claim) sets it first.
      const begins =
        verb.startsWith('BEGIN') ||
        verb.startsWith('START TRANSACTION') ||
        verb.startsWith('SET TRANSACTION');
      if (committed && begins) {
        background.add(runner);
      }
      const mine = !background.has(runner);
      if (verb.startsWith('COMMIT')) {
        if (mine) committed = true;
        else background.delete(runner);
      }
      return mine;
    });
  }

  count(
    verb: 'SELECT' | 'UPDATE' | 'INSERT' | 'DELETE' | 'START TRANSACTION' | 'BEGIN' | 'COMMIT',
  ): number {
    return this.queries.filter((q) => q.trimStart().toUpperCase().startsWith(verb)).length;
  }

  logQuery(query: string, _parameters?: unknown[], queryRunner?: unknown): void {
    this.queries.push(query);
    this.runners.push(queryRunner);
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}
