import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * How many webhook endpoints and audit streams each team has (`teams.webhook_endpoint_count`),
 * counted up and down by the conditional updates that keep WEBHOOK_ENDPOINTS_PER_TEAM; the
 * endpoints a team has already are counted in. A team that has more than the limit keeps them,
 * and registers no more until it has fewer.
 */
export class WebhookEndpointsPerTeam1765620000000 implements MigrationInterface {
  name = 'WebhookEndpointsPerTeam1765620000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      await queryRunner.query(
        'ALTER TABLE "teams" ADD COLUMN "webhook_endpoint_count" integer NOT NULL DEFAULT (0)',
      );
    } else {
      await queryRunner.addColumn(
        'teams',
        new TableColumn({ name: 'webhook_endpoint_count', type: 'integer', default: 0 }),
      );
    }
    await queryRunner.query(
      'UPDATE teams SET webhook_endpoint_count = ' +
        '(SELECT COUNT(*) FROM webhook_endpoints e WHERE e.team_id = teams.id)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      await queryRunner.query('ALTER TABLE "teams" DROP COLUMN "webhook_endpoint_count"');
      return;
    }
    await queryRunner.dropColumn('teams', 'webhook_endpoint_count');
  }
}

const isSqlite = (queryRunner: QueryRunner): boolean =>
  queryRunner.connection.driver.options.type === 'better-sqlite3';
