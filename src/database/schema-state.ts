import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DomainError } from '../common/errors/domain.error.js';
import { Clock } from '../clock/clock.js';

/** While behind, the schema is looked at again at most this often. */
const RECHECK_MS = 5_000;

/** Answered for every request but the health checks while migrations are pending. */
export class SchemaBehindError extends DomainError {
  readonly code = 'service_unavailable';
  override readonly retryAfterSeconds = RECHECK_MS / 1000;
  constructor() {
    super('The service is being upgraded; try again shortly.');
  }
}

/**
 * Which of the app's migrations the database has not had yet. With DB_MIGRATE=false an operator
 * applies them (`npm run migration:run`); until then the app says so instead of failing on
 * missing tables, and notices by itself when they have been applied.
 */
@Injectable()
export class SchemaState {
  private pending: string[] = [];
  private checkedAt = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  /** The names of the pending migrations, as of the last look. */
  get pendingMigrations(): readonly string[] {
    return this.pending;
  }

  async refresh(): Promise<readonly string[]> {
    this.checkedAt = this.clock.nowMs();
    const runner = this.dataSource.createQueryRunner();
    try {
      const table = this.dataSource.options.migrationsTableName ?? 'migrations';
      const applied = (await runner.hasTable(table))
        ? new Set(
            (await runner.query(`SELECT name FROM ${table}`)).map((r: { name: string }) => r.name),
          )
        : new Set<string>();
      this.pending = this.dataSource.migrations
        .map((m) => m.name ?? m.constructor.name)
        .filter((name) => !applied.has(name));
    } finally {
      await runner.release();
    }
    return this.pending;
  }

  /** Up to date, looking again when the last look found migrations pending and is old enough. */
  async upToDate(): Promise<boolean> {
    const stale = this.clock.nowMs() - this.checkedAt >= RECHECK_MS;
    if (this.pending.length > 0 && stale) await this.refresh();
    return this.pending.length === 0;
  }
}
