import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The security log (`audit_events`), and how far each token's expiry has been told to its
 * owner (`expiry_notices`: 0 nothing yet, 1 the reminder a week before, 2 the one on the day,
 * 3 the expiry recorded in the log), so each is done once whatever the number of instances.
 */
export class AuditLog1764892800000 implements MigrationInterface {
  name = 'AuditLog1764892800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const id = (name: string) => ({ name, type: 'integer', isNullable: true });
    const text = (name: string, length: number, isNullable = true) => ({
      name,
      type: 'varchar',
      length: String(length),
      isNullable,
      ...charset,
    });

    await queryRunner.createTable(
      new Table({
        name: 'audit_events',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'occurred_at', type: 'datetime', precision: 6 },
          text('event', 64, false),
          id('actor_user_id'),
          text('actor_kind', 16, false),
          id('user_id'),
          id('team_id'),
          id('token_id'),
          text('session_handle', 43),
          text('target_type', 16),
          id('target_id'),
          text('detail', 1000),
          text('ip', 45),
          text('user_agent', 255),
        ],
        indices: [
          new TableIndex({ name: 'IDX_audit_events_user', columnNames: ['user_id', 'id'] }),
          new TableIndex({ name: 'IDX_audit_events_actor', columnNames: ['actor_user_id', 'id'] }),
          new TableIndex({ name: 'IDX_audit_events_team', columnNames: ['team_id', 'id'] }),
          new TableIndex({ name: 'IDX_audit_events_occurred', columnNames: ['occurred_at'] }),
        ],
      }),
    );

    // TypeORM adds a column on SQLite by copying the table, which inside BEGIN IMMEDIATE would
    // cascade through the foreign keys: SQLite adds it in place.
    if (sqlite) {
      await queryRunner.query(
        'ALTER TABLE "personal_access_tokens" ADD COLUMN "expiry_notices" integer NOT NULL DEFAULT 0',
      );
    } else {
      await queryRunner.addColumn(
        'personal_access_tokens',
        new TableColumn({ name: 'expiry_notices', type: 'integer', default: 0 }),
      );
    }
    await queryRunner.createIndex(
      'personal_access_tokens',
      new TableIndex({
        name: 'IDX_personal_access_tokens_expiry',
        columnNames: ['expiry_notices', 'expires_at'],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    await queryRunner.dropIndex('personal_access_tokens', 'IDX_personal_access_tokens_expiry');
    if (sqlite) {
      await queryRunner.query('ALTER TABLE "personal_access_tokens" DROP COLUMN "expiry_notices"');
    } else {
      await queryRunner.dropColumn('personal_access_tokens', 'expiry_notices');
    }
    await queryRunner.dropTable('audit_events');
  }
}
