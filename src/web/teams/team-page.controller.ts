import { Controller, Get, Render } from '@nestjs/common';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../page-context.js';
import { AbilityCatalog } from '../../config/abilities.config.js';
import { InvitationsService } from '../../invitations/invitations.service.js';
import { ServiceAccountsService } from '../../service-accounts/service-accounts.service.js';
import { ASSIGNABLE_ROLES } from '../../teams/dto/add-member.dto.js';
import { TeamsService } from '../../teams/teams.service.js';
import type { User } from '../../users/user.entity.js';

/**
 * A team's page: its members (teams), its service accounts among them, labelled
 * (service-accounts), and the invitations waiting for an answer (invitations).
 */
@Controller('teams')
@SignedIn()
export class TeamPageController {
  constructor(
    private readonly teams: TeamsService,
    private readonly invitations: InvitationsService,
    private readonly catalog: AbilityCatalog,
    private readonly serviceAccounts: ServiceAccountsService,
  ) {}

  @Get(':id')
  @Render('teams/show')
  async show(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @IdParam() id: number,
  ): Promise<object> {
    const details = await this.teams.getForMember(actor, id);
    const invitations = await this.invitations.forTeam(details.team.id);
    const serviceAccounts = await this.serviceAccounts.shownToMembers(details.team);
    return {
      title: details.team.name,
      ...details,
      invitations,
      serviceAccounts,
      roles: ASSIGNABLE_ROLES,
      // The policy's abilities: each the catalog offers, ticked when tokens here may use it.
      abilities: this.catalog.entries.map((a) => ({
        ...a,
        allowed: !details.team.allowedAbilities || details.team.allowedAbilities.includes(a.name),
      })),
      viewerId: user.id,
    };
  }
}
