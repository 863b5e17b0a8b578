import type { EntityManager } from 'typeorm';
import { Team } from './team.entity.js';

/** What a team has a count of on its row, within a deployment's limit: its property and column. */
const COUNTS = {
  serviceAccounts: { property: 'serviceAccountCount', column: 'service_account_count' },
  webhookEndpoints: { property: 'webhookEndpointCount', column: 'webhook_endpoint_count' },
} as const;

export type TeamCount = keyof typeof COUNTS;

/**
 * Counts one more for the team, only while it has fewer than `limit`: one conditional UPDATE,
 * whose affected-row count decides (of creations sent at once, no more than the limit pass, on
 * any number of instances, and on a cluster's nodes, which certify a write as they do not a
 * lock). Run it in the creating transaction.
 */
export async function reserveTeamCount(
  manager: EntityManager,
  teamId: number,
  count: TeamCount,
  limit: number,
): Promise<boolean> {
  const { property, column } = COUNTS[count];
  const result = await manager
    .createQueryBuilder()
    .update(Team)
    .set({ [property]: () => `${column} + 1` })
    .where(`id = :teamId AND ${column} < :limit`, { teamId, limit })
    .execute();
  return result.affected === 1;
}

/** Counts one less for the team (one was deleted), never below none. */
export async function releaseTeamCount(
  manager: EntityManager,
  teamId: number,
  count: TeamCount,
): Promise<void> {
  const { property, column } = COUNTS[count];
  await manager
    .createQueryBuilder()
    .update(Team)
    .set({ [property]: () => `${column} - 1` })
    .where(`id = :teamId AND ${column} > 0`, { teamId })
    .execute();
}
