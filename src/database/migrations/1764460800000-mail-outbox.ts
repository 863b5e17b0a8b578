import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Messages waiting to be sent, written in the transaction of the change that calls for them. */
export class MailOutbox1764460800000 implements MigrationInterface {
  name = 'MailOutbox1764460800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const datetime = (name: string, isNullable = true) => ({
      name,
      type: 'datetime',
      precision: 6,
      isNullable,
    });
    await queryRunner.createTable(
      new Table({
        name: 'mail_outbox',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'kind', type: 'varchar', length: '40' },
          { name: 'recipient', type: 'varchar', length: '255', ...charset },
          { name: 'params', type: 'text', ...charset },
          { name: 'status', type: 'varchar', length: '10', default: "'pending'" },
          { name: 'attempts', type: 'integer', default: 0 },
          datetime('next_attempt_at', false),
          datetime('claimed_until'),
          { name: 'claimed_by', type: 'varchar', length: '36', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true, ...charset },
          datetime('sent_at'),
          {
            name: 'created_at',
            type: 'datetime',
            precision: 6,
            default: sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)',
          },
        ],
        indices: [
          new TableIndex({
            name: 'IDX_mail_outbox_due',
            columnNames: ['status', 'next_attempt_at'],
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('mail_outbox');
  }
}
