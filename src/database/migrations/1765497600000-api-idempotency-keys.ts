import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The API's Idempotency-Key: one row per account and key (digests of the key and of the
 * request), claimed by the first request and then holding its answer for 24 hours.
 */
export class ApiIdempotencyKeys1765497600000 implements MigrationInterface {
  name = 'ApiIdempotencyKeys1765497600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    await queryRunner.createTable(
      new Table({
        name: 'api_idempotency_keys',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer' },
          { name: 'key_hash', type: 'varchar', length: '64', ...charset },
          { name: 'request_hash', type: 'varchar', length: '64', ...charset },
          { name: 'status_code', type: 'integer', isNullable: true },
          { name: 'answer', type: 'text', isNullable: true, ...charset },
          { name: 'locked_until', type: 'datetime', precision: 3, isNullable: true },
          { name: 'created_at', type: 'datetime', precision: 3 },
        ],
        indices: [
          {
            name: 'UQ_api_idempotency_keys_user_key',
            columnNames: ['user_id', 'key_hash'],
            isUnique: true,
          },
          { name: 'IDX_api_idempotency_keys_created', columnNames: ['created_at'] },
        ],
        foreignKeys: [
          {
            name: 'FK_api_idempotency_keys_user',
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_idempotency_keys');
  }
}
