import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { success, type PageEnvelope, type SuccessEnvelope } from '../../common/http/envelope.js';
import { InvitationsService } from '../../invitations/invitations.service.js';
import type { TeamSummary } from '../../teams/team.view.js';
import { CurrentTeam } from './api-authentication.js';
import { JsonBody, JsonQuery } from './conventions/api-input.js';
import { keysetOf, pageOf, PageQuery } from './conventions/pagination.js';
import { CreateInvitationBody } from './dto/team-api.dto.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { InvitationSchema } from './openapi/team-schemas.js';
import { toInvitation } from './team-api.views.js';

type InvitationView = ReturnType<typeof toInvitation>;

/** The invitations of the team the token acts in, for its owner and admins, as on its page. */
@ApiTags('Team')
@Controller('api/v1/team/invitations')
export class TeamInvitationsController {
  constructor(
    private readonly invitations: InvitationsService,
    private readonly clock: Clock,
  ) {}

  @ApiEndpoint({
    method: 'GET',
    operationId: 'listInvitations',
    ability: 'members:read',
    summary: "The team's invitations waiting for an answer",
    description:
      "The invitations of the team the token acts in that wait for an answer, by id: for its owner and admins, as the team's page shows them.",
    data: [InvitationSchema],
    query: PageQuery,
    errors: ['forbidden', 'not_found'],
  })
  async list(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @JsonQuery() query: PageQuery,
  ): Promise<PageEnvelope<InvitationView>> {
    const rows = await this.invitations.pageForTeam(actor, team.id, keysetOf('invitations', query));
    return pageOf(
      this.clock,
      'invitations',
      rows,
      query,
      (invitation) => invitation.id,
      toInvitation,
    );
  }

  @ApiEndpoint({
    method: 'POST',
    operationId: 'createInvitation',
    ability: 'members:write',
    summary: 'Invite someone to the team',
    description:
      "Invites an address to the team as a member or an admin, as the team's page does (owners and admins): the invitation is mailed, valid for TEAM_INVITATION_TTL_DAYS, and recorded in the team's audit log as done with this token. The answer is the same whether or not the address has an account. Whoever the token acts for sends at most RATE_LIMIT_TEAM_INVITES_PER_HOUR invitations an hour, counted with those sent from the team's pages: every request counts except the replay of an answered `Idempotency-Key`, and one past the limit is answered 429 with `Retry-After`.",
    data: InvitationSchema,
    body: CreateInvitationBody,
    errors: ['forbidden', 'not_found', 'already_member', 'already_invited', 'personal_team'],
    limit: 'team-invites',
  })
  async create(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @JsonBody() body: CreateInvitationBody,
  ): Promise<SuccessEnvelope<InvitationView>> {
    return success(this.clock, toInvitation(await this.invitations.invite(actor, team.id, body)));
  }

  @ApiEndpoint({
    method: 'DELETE',
    path: ':id',
    operationId: 'deleteInvitation',
    ability: 'members:write',
    summary: 'Withdraw an invitation',
    description:
      "Withdraws an invitation still waiting for an answer (owners and admins), as the team's page does: its link stops working.",
    errors: ['forbidden', 'not_found', 'link_used'],
  })
  async withdraw(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @IdParam() id: number,
  ): Promise<void> {
    await this.invitations.revoke(actor, team.id, id);
  }
}
