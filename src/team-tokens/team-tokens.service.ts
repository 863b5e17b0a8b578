import { Injectable } from '@nestjs/common';
import { accountOf, type Actor } from '../common/actor.js';
import type { KeysetPage } from '../common/keyset-page.js';
import { MemberNotFoundError, NotTeamManagerError, OwnerOnlyError } from '../teams/teams.errors.js';
import type { Team } from '../teams/team.entity.js';
import type { TeamRole } from '../teams/team-member.entity.js';
import { TeamPoliciesService, type PolicyInput } from '../teams/team-policies.service.js';
import { managedRoles, mayManage } from '../teams/team-roles.js';
import { TeamsService } from '../teams/teams.service.js';
import { governing } from '../tokens/tokens.repository.js';
import { TokenNotFoundError } from '../tokens/tokens.errors.js';
import { TokensInTeamService, type TeamTokenView } from '../tokens/tokens-in-team.service.js';

/** A token of the inventory, with whether the viewer may revoke it. */
export interface InventoryToken extends TeamTokenView {
  revocable: boolean;
}

export interface TeamInventory {
  team: Team;
  role: TeamRole;
  tokens: InventoryToken[];
}

/**
 * A team's token inventory (teams decides who may see it, tokens what acts in the team): owners
 * and admins see every active token that acts in it now, its service accounts' included. The
 * owner revokes any of them; an admin, their own, the members' (as an admin manages members,
 * not other admins) and the service accounts'. What acts in the team is `TokensInTeamService`'s
 * (`tokens/`); this service decides who may see and revoke it.
 */
@Injectable()
export class TeamTokensService {
  constructor(
    private readonly teams: TeamsService,
    private readonly policies: TeamPoliciesService,
    private readonly tokens: TokensInTeamService,
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

  /**
   * The policy the owner asks for, checked as saving it would be, and what it would do to the
   * tokens acting in the team now: those it refuses or takes abilities from, their people.
   */
  async policyPreview(actor: Actor, teamId: number, input: PolicyInput) {
    const { team, policy } = await this.policies.proposePolicy(actor, teamId, input);
    const impact = await this.tokens.policyImpactIn(governing(team), policy);
    return { team, policy, impact };
  }

  /**
   * A member someone may remove, and their tokens that act in the team now: every one of them
   * stops acting there with the removal (pinned ones are refused, following ones follow them to
   * their personal team). A member the viewer may not remove is refused.
   */
  async removalPreview(actor: Actor, teamId: number, userId: number) {
    const details = await this.teams.getForMember(actor, teamId);
    const member = details.members.find((m) => m.user.id === userId);
    if (!member) throw new MemberNotFoundError();
    if (details.role === 'member') throw new NotTeamManagerError();
    if (!member.removable) throw new OwnerOnlyError('remove an admin');
    const tokens = await this.tokens.listOfAccountIn(governing(details.team), userId);
    return { team: details.team, member, tokens };
  }

  /** `ownerId`: only a token of that account (a service account's page revokes its own). */
  async revoke(
    actor: Actor,
    teamId: number,
    tokenId: number,
    ownerId?: number,
  ): Promise<TeamTokenView> {
    const { team, role } = await this.teams.getForManager(actor, teamId);
    const token = await this.tokens.getActingIn(governing(team), tokenId);
    if (ownerId !== undefined && token.person.id !== ownerId) throw new TokenNotFoundError();
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

/** Their own tokens; those of the roles they manage; and, for owners and admins, the service accounts'. */
function mayRevoke(role: TeamRole, token: TeamTokenView, viewerId: number): boolean {
  if (token.person.serviceAccount) return role !== 'member';
  return token.person.id === viewerId || mayManage(role, token.person.role!);
}
