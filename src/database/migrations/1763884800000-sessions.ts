import {
  Table,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';

export class Sessions1763884800000 implements MigrationInterface {
  name = 'Sessions1763884800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    await queryRunner.createTable(
      new Table({
        name: 'sessions',
        columns: [
          { name: 'id', type: 'varchar', length: '128', isPrimary: true },
          { name: 'user_id', type: 'integer', isNullable: true },
          {
            name: 'data',
            type: 'text',
            ...(sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' }),
          },
          { name: 'expires_at', type: 'datetime', precision: 6 },
          {
            name: 'created_at',
            type: 'datetime',
            precision: 6,
            default: sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)',
          },
        ],
        indices: [
          new TableIndex({ name: 'IDX_sessions_user', columnNames: ['user_id'] }),
          new TableIndex({ name: 'IDX_sessions_expires_at', columnNames: ['expires_at'] }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_sessions_user',
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('sessions');
  }
}
