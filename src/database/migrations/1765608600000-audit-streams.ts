import { Table, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Audit streams: a webhook endpoint of kind `audit_stream` gets every entry of its team's audit
 * log (or, with no team, of the instance's), in order and in batches. Its entries wait in
 * `audit_stream_entries` (written in the transaction that writes them to the log) until the
 * sender takes them, oldest first, into one delivery, once the stream's previous delivery is
 * delivered. The endpoint may carry an Authorization header value for its collector, encrypted
 * as its signing secret is; `kind` grows to hold `audit_stream`.
 */
export class AuditStreams1765608600000 implements MigrationInterface {
  name = 'AuditStreams1765608600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    await queryRunner.changeColumn(
      'webhook_endpoints',
      'kind',
      new TableColumn({ name: 'kind', type: 'varchar', length: '16', default: "'events'" }),
    );
    await queryRunner.addColumn(
      'webhook_endpoints',
      new TableColumn({
        name: 'authorization_header',
        type: 'varchar',
        length: '1200',
        isNullable: true,
        ...charset,
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'audit_stream_entries',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'endpoint_id', type: 'integer' },
          { name: 'audit_event_id', type: 'integer' },
        ],
        indices: [
          { name: 'IDX_audit_stream_entries_endpoint', columnNames: ['endpoint_id', 'id'] },
        ],
        foreignKeys: [
          {
            name: 'FK_audit_stream_entries_endpoint',
            columnNames: ['endpoint_id'],
            referencedTableName: 'webhook_endpoints',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('audit_stream_entries');
    await queryRunner.query("DELETE FROM webhook_endpoints WHERE kind = 'audit_stream'");
    await queryRunner.dropColumn('webhook_endpoints', 'authorization_header');
    await queryRunner.changeColumn(
      'webhook_endpoints',
      'kind',
      new TableColumn({ name: 'kind', type: 'varchar', length: '10', default: "'events'" }),
    );
  }
}
