import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Audit streams: a webhook endpoint of kind `audit_stream` gets every entry of its team's audit
 * log (or, with no team, of the instance's), in order and in batches. Its entries wait in
 * `audit_stream_entries` (written in the transaction that writes them to the log) until the
 * sender takes them, oldest first, into one delivery, once the stream's previous delivery is
 * delivered. The endpoint may carry an Authorization header value for its collector, encrypted
 * as its signing secret is; `kind` grows to hold `audit_stream`. A stream's open batch is found
 * by its endpoint and status (`IDX_webhook_deliveries_endpoint_status`).
 */
export class AuditStreams1765608600000 implements MigrationInterface {
  name = 'AuditStreams1765608600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    await keepingSqliteCounter(queryRunner, 'webhook_endpoints', async () => {
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
    });
    await queryRunner.createIndex(
      'webhook_deliveries',
      new TableIndex({
        name: 'IDX_webhook_deliveries_endpoint_status',
        columnNames: ['endpoint_id', 'status'],
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
    await queryRunner.dropIndex('webhook_deliveries', 'IDX_webhook_deliveries_endpoint_status');
    // Foreign keys are off while migrating: the streams' deliveries go first, by hand.
    await queryRunner.query(
      "DELETE FROM webhook_deliveries WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE kind = 'audit_stream')",
    );
    await queryRunner.query("DELETE FROM webhook_endpoints WHERE kind = 'audit_stream'");
    await keepingSqliteCounter(queryRunner, 'webhook_endpoints', async () => {
      await queryRunner.dropColumn('webhook_endpoints', 'authorization_header');
      await queryRunner.changeColumn(
        'webhook_endpoints',
        'kind',
        new TableColumn({ name: 'kind', type: 'varchar', length: '10', default: "'events'" }),
      );
    });
  }
}

/**
 * Runs `change`, which TypeORM carries out on SQLite by rebuilding the table, and puts the
 * table's AUTOINCREMENT counter back as it was, so that no id of a deleted row is handed out
 * again (the rebuilt table's counter starts from its highest surviving id).
 */
async function keepingSqliteCounter(
  queryRunner: QueryRunner,
  table: string,
  change: () => Promise<void>,
): Promise<void> {
  if (queryRunner.connection.driver.options.type !== 'better-sqlite3') return change();
  const before: { seq: number }[] = await queryRunner.query(
    'SELECT seq FROM sqlite_sequence WHERE name = ?',
    [table],
  );
  await change();
  if (before.length === 0) return;
  await queryRunner.query('DELETE FROM sqlite_sequence WHERE name = ?', [table]);
  await queryRunner.query('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)', [
    table,
    before[0].seq,
  ]);
}
