import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A version on each browser session, counted up by every write of its data. A request writes
 * back only what it changed in the session it read: when another request of the same session
 * wrote meanwhile (the version moved), its changes are merged into the row as it now is,
 * instead of the whole session read earlier being put back over them.
 */
export class SessionVersions1765630800000 implements MigrationInterface {
  name = 'SessionVersions1765630800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // TypeORM adds a column on SQLite by copying the table: SQLite adds it in place.
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query(
        'ALTER TABLE "sessions" ADD COLUMN "version" integer NOT NULL DEFAULT (0)',
      );
      return;
    }
    await queryRunner.addColumn(
      'sessions',
      new TableColumn({ name: 'version', type: 'integer', default: 0 }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "sessions" DROP COLUMN "version"');
      return;
    }
    await queryRunner.dropColumn('sessions', 'version');
  }
}
