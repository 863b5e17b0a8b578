import {
  Table,
  TableColumn,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';

/**
 * Regenerating a token (the value it replaced, accepted until a grace period ends) and its
 * usage: requests per UTC day and the addresses it was last used from, both deleted with the
 * token.
 */
export class TokenLifecycle1764720000000 implements MigrationInterface {
  name = 'TokenLifecycle1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const datetime = (name: string, isNullable = true) =>
      new TableColumn({ name, type: 'datetime', precision: 6, isNullable });

    await queryRunner.addColumns('personal_access_tokens', [
      new TableColumn({
        name: 'previous_token_hash',
        type: 'varchar',
        length: '64',
        isNullable: true,
      }),
      datetime('previous_valid_until'),
      new TableColumn({ name: 'previous_requests', type: 'integer', default: 0 }),
      datetime('previous_last_used_at'),
      datetime('regenerated_at'),
    ]);
    await queryRunner.createIndex(
      'personal_access_tokens',
      new TableIndex({
        name: 'UQ_personal_access_tokens_previous_hash',
        columnNames: ['previous_token_hash'],
        isUnique: true,
      }),
    );

    const token = (name: string) =>
      new TableForeignKey({
        name,
        columnNames: ['token_id'],
        referencedTableName: 'personal_access_tokens',
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
        onUpdate: 'NO ACTION',
      });

    await queryRunner.createTable(
      new Table({
        name: 'personal_access_token_daily_usage',
        columns: [
          { name: 'token_id', type: 'integer', isPrimary: true },
          { name: 'day', type: 'date', isPrimary: true },
          { name: 'requests', type: 'integer', default: 0 },
        ],
        foreignKeys: [token('FK_token_daily_usage_token')],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'personal_access_token_addresses',
        columns: [
          { name: 'token_id', type: 'integer', isPrimary: true },
          { name: 'ip', type: 'varchar', length: '45', isPrimary: true, ...charset },
          { name: 'last_used_at', type: 'datetime', precision: 6 },
          { name: 'user_agent', type: 'varchar', length: '255', isNullable: true, ...charset },
        ],
        foreignKeys: [token('FK_token_addresses_token')],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('personal_access_token_addresses');
    await queryRunner.dropTable('personal_access_token_daily_usage');
    await queryRunner.dropIndex(
      'personal_access_tokens',
      'UQ_personal_access_tokens_previous_hash',
    );
    await queryRunner.dropColumns('personal_access_tokens', [
      'regenerated_at',
      'previous_last_used_at',
      'previous_requests',
      'previous_valid_until',
      'previous_token_hash',
    ]);
  }
}
