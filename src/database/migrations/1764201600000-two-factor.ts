import {
  Table,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
  type TableColumnOptions,
} from 'typeorm';

/** Two-factor sign-in: each person's authenticator (its secret encrypted) and recovery codes. */
export class TwoFactor1764201600000 implements MigrationInterface {
  name = 'TwoFactor1764201600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const now = sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)';
    const createdAt = (name: string): TableColumnOptions => ({
      name,
      type: 'datetime',
      precision: 6,
      default: now,
    });
    const userForeignKey = (table: string) =>
      new TableForeignKey({
        name: `FK_${table}_user`,
        columnNames: ['user_id'],
        referencedTableName: 'users',
        referencedColumnNames: ['id'],
        onDelete: 'CASCADE',
        onUpdate: 'NO ACTION',
      });

    await queryRunner.createTable(
      new Table({
        name: 'two_factor_credentials',
        columns: [
          { name: 'user_id', type: 'integer', isPrimary: true },
          { name: 'secret', type: 'varchar', length: '255' },
          { name: 'last_used_step', type: 'integer', isNullable: true },
          createdAt('enabled_at'),
        ],
        foreignKeys: [userForeignKey('two_factor_credentials')],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'two_factor_recovery_codes',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer' },
          { name: 'code_hash', type: 'varchar', length: '64' },
          { name: 'used_at', type: 'datetime', precision: 6, isNullable: true },
          createdAt('created_at'),
        ],
        indices: [
          new TableIndex({
            name: 'UQ_two_factor_recovery_codes_user_hash',
            columnNames: ['user_id', 'code_hash'],
            isUnique: true,
          }),
        ],
        foreignKeys: [userForeignKey('two_factor_recovery_codes')],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('two_factor_recovery_codes');
    await queryRunner.dropTable('two_factor_credentials');
  }
}
