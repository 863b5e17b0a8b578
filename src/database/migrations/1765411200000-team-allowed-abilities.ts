import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A team's policy may limit the abilities tokens acting in it may use: the allowed names,
 * comma-separated, or null for every ability the deployment offers.
 */
export class TeamAllowedAbilities1765411200000 implements MigrationInterface {
  name = 'TeamAllowedAbilities1765411200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // TypeORM adds a column on SQLite by copying the table, which inside BEGIN IMMEDIATE would
    // cascade through the foreign keys pointing at teams: SQLite adds it in place.
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "teams" ADD COLUMN "allowed_abilities" text');
    } else {
      await queryRunner.addColumn(
        'teams',
        new TableColumn({
          name: 'allowed_abilities',
          type: 'text',
          isNullable: true,
          charset: 'utf8mb4',
          collation: 'utf8mb4_bin',
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "teams" DROP COLUMN "allowed_abilities"');
    } else {
      await queryRunner.dropColumn('teams', 'allowed_abilities');
    }
  }
}
