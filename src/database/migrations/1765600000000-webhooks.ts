import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Webhooks: the endpoints a team (or, with no team, the operator) sends its events to, each with
 * its signing secret encrypted at rest (and the one it replaced, still signing for a while after
 * a rotation), and the deliveries: the outbox of events to send, one row per event and endpoint,
 * written in the transaction of the change it reports, claimed with a lease by the instance
 * that sends it, and kept as the endpoint's delivery log.
 */
export class Webhooks1765600000000 implements MigrationInterface {
  name = 'Webhooks1765600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const id = {
      name: 'id',
      type: 'integer',
      isPrimary: true,
      isGenerated: true,
      generationStrategy: 'increment' as const,
    };
    await queryRunner.createTable(
      new Table({
        name: 'webhook_endpoints',
        columns: [
          id,
          { name: 'uid', type: 'varchar', length: '32', ...charset },
          { name: 'team_id', type: 'integer', isNullable: true },
          { name: 'kind', type: 'varchar', length: '10', default: "'events'" },
          { name: 'url', type: 'varchar', length: '2048', ...charset },
          { name: 'events', type: 'text', ...charset },
          { name: 'secret', type: 'varchar', length: '200', ...charset },
          { name: 'previous_secret', type: 'varchar', length: '200', isNullable: true, ...charset },
          { name: 'previous_secret_until', type: 'datetime', precision: 3, isNullable: true },
          { name: 'status', type: 'varchar', length: '10', default: "'active'" },
          { name: 'disabled_reason', type: 'varchar', length: '200', isNullable: true, ...charset },
          { name: 'failing_since', type: 'datetime', precision: 3, isNullable: true },
          { name: 'created_by_id', type: 'integer', isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
        indices: [
          { name: 'UQ_webhook_endpoints_uid', columnNames: ['uid'], isUnique: true },
          { name: 'IDX_webhook_endpoints_team', columnNames: ['team_id'] },
        ],
        foreignKeys: [
          {
            name: 'FK_webhook_endpoints_team',
            columnNames: ['team_id'],
            referencedTableName: 'teams',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_webhook_endpoints_created_by',
            columnNames: ['created_by_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'SET NULL',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          id,
          { name: 'endpoint_id', type: 'integer' },
          { name: 'message_id', type: 'varchar', length: '40', ...charset },
          { name: 'event_type', type: 'varchar', length: '60' },
          { name: 'payload', type: 'text', ...charset },
          { name: 'status', type: 'varchar', length: '10', default: "'pending'" },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: 'datetime', precision: 3 },
          { name: 'claimed_until', type: 'datetime', precision: 3, isNullable: true },
          { name: 'claimed_by', type: 'varchar', length: '36', isNullable: true },
          { name: 'response_code', type: 'integer', isNullable: true },
          { name: 'latency_ms', type: 'integer', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true, ...charset },
          {
            name: 'response_excerpt',
            type: 'varchar',
            length: '500',
            isNullable: true,
            ...charset,
          },
          { name: 'delivered_at', type: 'datetime', precision: 3, isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
        indices: [
          { name: 'IDX_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] },
          { name: 'IDX_webhook_deliveries_endpoint', columnNames: ['endpoint_id', 'id'] },
          { name: 'IDX_webhook_deliveries_created', columnNames: ['created_at'] },
        ],
        foreignKeys: [
          {
            name: 'FK_webhook_deliveries_endpoint',
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
    await queryRunner.dropTable('webhook_deliveries');
    await queryRunner.dropTable('webhook_endpoints');
  }
}
