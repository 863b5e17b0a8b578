import {
  Table,
  TableColumn,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';

/**
 * `users.email_verified_at`, and `account_tokens` for the links mailed to confirm an address or
 * reset a password (only their SHA-256 is stored).
 *
 * Everyone who has an account already is marked verified, as of their sign-up: they registered
 * before confirmation existed, and refusing them their API tokens now would break their work.
 */
export class EmailVerification1764547200000 implements MigrationInterface {
  name = 'EmailVerification1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    if (sqlite) {
      // TypeORM adds a column on SQLite by copying the table and dropping the old one. Migrations
      // run inside BEGIN IMMEDIATE, where foreign keys cannot be switched off, so dropping `users`
      // would cascade to every team, membership, token and session. SQLite adds a nullable
      // column in place.
      await queryRunner.query('ALTER TABLE "users" ADD COLUMN "email_verified_at" datetime(6)');
    } else {
      await queryRunner.addColumn(
        'users',
        new TableColumn({
          name: 'email_verified_at',
          type: 'datetime',
          precision: 6,
          isNullable: true,
        }),
      );
    }
    await queryRunner.query('UPDATE users SET email_verified_at = created_at');

    await queryRunner.createTable(
      new Table({
        name: 'account_tokens',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer' },
          { name: 'purpose', type: 'varchar', length: '20' },
          { name: 'token_hash', type: 'varchar', length: '64' },
          { name: 'expires_at', type: 'datetime', precision: 6 },
          { name: 'used_at', type: 'datetime', precision: 6, isNullable: true },
          {
            name: 'created_at',
            type: 'datetime',
            precision: 6,
            default: sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)',
          },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_account_tokens_hash',
            columnNames: ['token_hash'],
            isUnique: true,
          }),
          new TableIndex({
            name: 'IDX_account_tokens_user_purpose',
            columnNames: ['user_id', 'purpose'],
          }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_account_tokens_user',
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
    await queryRunner.dropTable('account_tokens');
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "users" DROP COLUMN "email_verified_at"');
    } else {
      await queryRunner.dropColumn('users', 'email_verified_at');
    }
  }
}
