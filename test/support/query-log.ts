import type { DataSource, Logger } from 'typeorm';

/** Records every query TypeORM sends, so tests can count what a request costs. */
export class QueryLog implements Logger {
  queries: string[] = [];

  static attach(dataSource: DataSource): QueryLog {
    const log = new QueryLog();
    Object.defineProperty(dataSource, 'logger', { value: log, configurable: true, writable: true });
    return log;
  }

  clear(): void {
    this.queries = [];
  }

  count(
    verb: 'SELECT' | 'UPDATE' | 'INSERT' | 'DELETE' | 'START TRANSACTION' | 'BEGIN' | 'COMMIT',
  ): number {
    return this.queries.filter((q) => q.trimStart().toUpperCase().startsWith(verb)).length;
  }

  logQuery(query: string): void {
    this.queries.push(query);
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}
