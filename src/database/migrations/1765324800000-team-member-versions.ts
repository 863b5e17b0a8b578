import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A version on each membership, counted up by a change whose decision rests on that member's
 * role without changing it (an admin's own role when they change another's). On a Galera
 * cluster or in a Group Replication group only written rows are compared at commit, and a write
 * that leaves a row as it was is no write: the count makes it one, so a concurrent change of
 * that role on another node conflicts with the decision instead of passing beside it.
 */
export class TeamMemberVersions1765324800000 implements MigrationInterface {
  name = 'TeamMemberVersions1765324800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // TypeORM adds a column on SQLite by copying the table: SQLite adds it in place.
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query(
        'ALTER TABLE "team_members" ADD COLUMN "version" integer NOT NULL DEFAULT (0)',
      );
      return;
    }
    await queryRunner.addColumn(
      'team_members',
      new TableColumn({ name: 'version', type: 'integer', default: 0 }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "team_members" DROP COLUMN "version"');
      return;
    }
    await queryRunner.dropColumn('team_members', 'version');
  }
}
