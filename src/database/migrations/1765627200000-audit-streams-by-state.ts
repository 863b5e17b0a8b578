import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The active audit streams that get a team's entries, by kind, state and team: every change
 * queues its security log entry for them in its own transaction (`INSERT … SELECT`), and on
 * MySQL/MariaDB that statement share-locks, until the change commits, what it reads. Read
 * through the team's index, that was every endpoint of the team, webhooks included, so a
 * delivery's bookkeeping on one of them (and a new endpoint) waited on each of the team's
 * changes under way; through this index, it is the audit streams that get the entry.
 */
export class AuditStreamsByState1765627200000 implements MigrationInterface {
  name = 'AuditStreamsByState1765627200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex(
      'webhook_endpoints',
      new TableIndex({
        name: 'IDX_webhook_endpoints_kind_status_team',
        columnNames: ['kind', 'status', 'team_id'],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('webhook_endpoints', 'IDX_webhook_endpoints_kind_status_team');
  }
}
