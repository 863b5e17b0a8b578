import { Injectable } from '@nestjs/common';
import { accountOf, type Actor } from '../common/actor.js';
import type { KeysetPage } from '../common/keyset-page.js';
import { OwnerOnlyError } from '../teams/teams.errors.js';
import type { Team } from '../teams/team.entity.js';
import type { TeamRole } from '../teams/team-member.entity.js';
import { managedRoles, mayManage, TeamsService } from '../teams/teams.service.js';
import type { GoverningTeam } from '../tokens/tokens.repository.js';
import { TokensService, type TeamTokenView } from '../tokens/tokens.service.js';

/** A token of the inventory, with whether the viewer may revoke it. */
export interface InventoryToken extends TeamTokenView {
  revocable: boolean;
}

export interface TeamInventory {
  team: Team;
  role: TeamRole;
  tokens: InventoryToken[];
}

const governing = (team: Team): GoverningTeam => ({
  id: team.id,
  name: team.name,
  policy: {
    requireTwoFactor: Boolean(team.requireTwoFactor),
    tokenMaxLifetimeDays: team.tokenMaxLifetimeDays,
    allowedAbilities: team.allowedAbilities,
  },
});

/**
 * A team's token inventory (teams decides who may see it, tokens what acts in the team): owners
 * and admins see every active token that acts in it now. The owner revokes any of them; an
 * admin, their own and the members' (as an admin manages members, not other admins).
 */
@Injectable()
export class TeamTokensService {
  constructor(
    private readonly teams: TeamsService,
    private readonly tokens: TokensService,
  ) {}

  /** The inventory, or a page of it by token id (one beyond it) when `page` says which. */
  async inventory(actor: Actor, teamId: number, page?: KeysetPage): Promise<TeamInventory> {
    const { team, role } = await this.teams.getForManager(actor, teamId);
    const viewerId = accountOf(actor);
    const tokens = (await this.tokens.listActingIn(governing(team), page)).map((token) => ({
      ...token,
      revocable: mayRevoke(role, token, viewerId),
    }));
    return { team, role, tokens };
  }

  async revoke(actor: Actor, teamId: number, tokenId: number): Promise<TeamTokenView> {
    const { team, role } = await this.teams.getForManager(actor, teamId);
    const token = await this.tokens.getActingIn(governing(team), tokenId);
    if (!mayRevoke(role, token, accountOf(actor))) {
      throw new OwnerOnlyError("revoke the owner's or another admin's tokens");
    }
    // What was read here says why a refusal is refused; the revocation checks it all again.
    return this.tokens.revokeInTeam(actor, governing(team), token, {
      role,
      manages: managedRoles(role),
    });
  }
}

function mayRevoke(role: TeamRole, token: TeamTokenView, viewerId: number): boolean {
  return token.person.id === viewerId || mayManage(role, token.person.role);
}
