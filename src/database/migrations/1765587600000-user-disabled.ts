import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An operator may disable an account (`user:disable`): until it is enabled again its sessions
 * and tokens are refused and it cannot sign in. `disabled_at` says since when; null is enabled.
 */
export class UserDisabled1765587600000 implements MigrationInterface {
  name = 'UserDisabled1765587600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // TypeORM adds a column on SQLite by copying the table, which inside BEGIN IMMEDIATE would
    // cascade through the foreign keys pointing at users: SQLite adds it in place.
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "users" ADD COLUMN "disabled_at" datetime(3)');
    } else {
      await queryRunner.addColumn(
        'users',
        new TableColumn({ name: 'disabled_at', type: 'datetime', precision: 3, isNullable: true }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "users" DROP COLUMN "disabled_at"');
    } else {
      await queryRunner.dropColumn('users', 'disabled_at');
    }
  }
}
