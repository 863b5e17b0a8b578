import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * When a failing webhook endpoint is tried again (`webhook_endpoints.backoff_until`): its other
 * deliveries, and new ones, wait until then. Null for every endpoint to begin with.
 */
export class WebhookEndpointBackoff1765623600000 implements MigrationInterface {
  name = 'WebhookEndpointBackoff1765623600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      await queryRunner.query(
        'ALTER TABLE "webhook_endpoints" ADD COLUMN "backoff_until" datetime(3)',
      );
      return;
    }
    await queryRunner.addColumn(
      'webhook_endpoints',
      new TableColumn({ name: 'backoff_until', type: 'datetime', precision: 3, isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "backoff_until"');
      return;
    }
    await queryRunner.dropColumn('webhook_endpoints', 'backoff_until');
  }
}

const isSqlite = (queryRunner: QueryRunner): boolean =>
  queryRunner.connection.driver.options.type === 'better-sqlite3';
