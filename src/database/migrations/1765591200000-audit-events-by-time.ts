import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The logs are read newest first by when things happened (occurred_at, then id), not by when
 * they were written: an event the minute's usage flush writes late sorts where it happened.
 * Each log's index leads with its owner and goes on with that order, so a page is still a range
 * of one index, read backwards, with no sort.
 */
const INDEXES = [
  ['user', 'user_id'],
  ['actor', 'actor_user_id'],
  ['team', 'team_id'],
] as const;

export class AuditEventsByTime1765591200000 implements MigrationInterface {
  name = 'AuditEventsByTime1765591200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const [name, column] of INDEXES) {
      await queryRunner.createIndex(
        'audit_events',
        new TableIndex({
          name: `IDX_audit_events_${name}_time`,
          columnNames: [column, 'occurred_at', 'id'],
        }),
      );
      await queryRunner.dropIndex('audit_events', `IDX_audit_events_${name}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const [name, column] of INDEXES) {
      await queryRunner.createIndex(
        'audit_events',
        new TableIndex({ name: `IDX_audit_events_${name}`, columnNames: [column, 'id'] }),
      );
      await queryRunner.dropIndex('audit_events', `IDX_audit_events_${name}_time`);
    }
  }
}
