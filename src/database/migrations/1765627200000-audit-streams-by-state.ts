import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The active audit streams that get a team's entries, by kind, state and team: every change
 * reads them in its own transaction to queue its security log entry for them. Through the
 * team's index that read went over every endpoint of the team, webhooks included; through this
 * one it finds the audit streams alone.
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
