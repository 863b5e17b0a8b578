import { Logger as NestLogger } from '@nestjs/common';
import type { Logger } from 'typeorm';

/**
 * What TypeORM says of its own, through the app's log: a statement slower than the query
 * timeout, at warn, without its parameters, which may be secrets (a session's id, a token's
 * digest). TypeORM's own console logger printed both, over several lines beside the JSON log,
 * and on the command line's standard output. Queries, their errors (the app answers and logs
 * those), schema building and migrations say nothing here.
 */
export class DatabaseLog implements Logger {
  private readonly logger = new NestLogger('Database');

  logQuerySlow(time: number, query: string, _parameters?: unknown[]): void {
    this.logger.warn(`A statement took ${time} ms: ${query.replace(/\s+/g, ' ').slice(0, 200)}`);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
  }

  logQuery(): void {}
  logQueryError(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
}
