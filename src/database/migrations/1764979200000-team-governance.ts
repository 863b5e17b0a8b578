import { Table, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Teams govern the tokens that act in them: a team's policy (two-factor sign-in required, a
 * maximum token lifetime), and tokens pinned to one team. A pin is a row of its own, so a
 * deleted team leaves its pinned tokens pinned to nothing (refused) rather than following
 * their person's current team.
 */
export class TeamGovernance1764979200000 implements MigrationInterface {
  name = 'TeamGovernance1764979200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    // TypeORM adds a column on SQLite by copying the table, which inside BEGIN IMMEDIATE would
    // cascade through the foreign keys pointing at teams: SQLite adds them in place.
    if (sqlite) {
      await queryRunner.query(
        'ALTER TABLE "teams" ADD COLUMN "require_two_factor" boolean NOT NULL DEFAULT (0)',
      );
      await queryRunner.query('ALTER TABLE "teams" ADD COLUMN "token_max_lifetime_days" integer');
    } else {
      await queryRunner.addColumns('teams', [
        new TableColumn({ name: 'require_two_factor', type: 'boolean', default: false }),
        new TableColumn({ name: 'token_max_lifetime_days', type: 'integer', isNullable: true }),
      ]);
    }

    await queryRunner.createTable(
      new Table({
        name: 'personal_access_token_pins',
        columns: [
          { name: 'token_id', type: 'integer', isPrimary: true },
          { name: 'team_id', type: 'integer', isNullable: true },
        ],
        indices: [{ name: 'IDX_personal_access_token_pins_team', columnNames: ['team_id'] }],
        foreignKeys: [
          {
            name: 'FK_personal_access_token_pins_token',
            columnNames: ['token_id'],
            referencedTableName: 'personal_access_tokens',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          },
          {
            name: 'FK_personal_access_token_pins_team',
            columnNames: ['team_id'],
            referencedTableName: 'teams',
            referencedColumnNames: ['id'],
            onDelete: 'SET NULL',
            onUpdate: 'NO ACTION',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    await queryRunner.dropTable('personal_access_token_pins');
    if (sqlite) {
      await queryRunner.query('ALTER TABLE "teams" DROP COLUMN "token_max_lifetime_days"');
      await queryRunner.query('ALTER TABLE "teams" DROP COLUMN "require_two_factor"');
    } else {
      await queryRunner.dropColumns('teams', ['token_max_lifetime_days', 'require_two_factor']);
    }
  }
}
