import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

const INDEX = 'UQ_webhook_endpoints_config_key';

/**
 * The operator's endpoints listed in WEBHOOK_ENDPOINTS are rows like any other, marked by
 * `config_key` (a digest of the URL the list names them by): unique, so that instances booting
 * at once register each once. Null for the endpoints registered on the pages or the command line.
 */
export class WebhookConfiguredEndpoints1765605000000 implements MigrationInterface {
  name = 'WebhookConfiguredEndpoints1765605000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // TypeORM adds a column on SQLite by copying the table, which would cascade through the
    // deliveries' foreign key: SQLite adds it in place.
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query(
        'ALTER TABLE "webhook_endpoints" ADD COLUMN "config_key" varchar(64)',
      );
    } else {
      await queryRunner.addColumn(
        'webhook_endpoints',
        new TableColumn({ name: 'config_key', type: 'varchar', length: '64', isNullable: true }),
      );
    }
    await queryRunner.createIndex(
      'webhook_endpoints',
      new TableIndex({ name: INDEX, columnNames: ['config_key'], isUnique: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('webhook_endpoints', INDEX);
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "webhook_endpoints" DROP COLUMN "config_key"');
    } else {
      await queryRunner.dropColumn('webhook_endpoints', 'config_key');
    }
  }
}
