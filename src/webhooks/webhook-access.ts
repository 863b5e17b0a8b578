import type { Actor } from '../common/actor.js';
import type { TeamRole } from '../teams/team-member.entity.js';
import type { Team } from '../teams/team.entity.js';
import type { TeamsService } from '../teams/teams.service.js';
import { WebhookEndpointNotFoundError } from './webhooks.errors.js';

/**
 * The team whose endpoints `actor` may manage: its owners and admins, and the operator; with no
 * team (null), the operator's own endpoints, which no one else has. Anything else is not found.
 */
export async function manageableBy(
  teams: TeamsService,
  actor: Actor,
  teamId: number | null,
): Promise<{ team: Team | null; role: TeamRole | null }> {
  if (teamId === null) {
    if (actor.kind !== 'operator') throw new WebhookEndpointNotFoundError();
    return { team: null, role: null };
  }
  if (actor.kind === 'operator') {
    return { team: await teams.getManageableTeam(actor, teamId), role: null };
  }
  return teams.getForManager(actor, teamId);
}
