import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { success, type PageEnvelope, type SuccessEnvelope } from '../../common/http/envelope.js';
import type { TeamSummary } from '../../teams/team.view.js';
import { TeamMembersService } from '../../teams/team-members.service.js';
import { TeamsService } from '../../teams/teams.service.js';
import { toUserProfile, type UserProfile } from '../../users/user.view.js';
import { CurrentTeam } from './api-authentication.js';
import { JsonBody, JsonQuery } from './conventions/api-input.js';
import { keysetOf, pageOf, PageQuery } from './conventions/pagination.js';
import { UpdateMemberBody } from './dto/team-api.dto.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { UserProfileSchema } from './openapi/schemas.js';
import { MemberSchema } from './openapi/team-schemas.js';
import { toMember } from './team-api.views.js';

/** The members of the team the token acts in, through the same rules as the team's page. */
@ApiTags('Team')
@Controller('api/v1/team/members')
export class TeamMembersController {
  constructor(
    private readonly teams: TeamsService,
    private readonly members: TeamMembersService,
    private readonly clock: Clock,
  ) {}

  @ApiEndpoint({
    method: 'GET',
    operationId: 'listMembers',
    ability: 'members:read',
    summary: "The team's members",
    description:
      "The members of the team the token acts in, with their roles, by user id; any member may read them. A service account's token is refused (403): the account is not a member of its team.",
    data: [MemberSchema],
    query: PageQuery,
    errors: ['forbidden', 'not_found'],
  })
  async list(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @JsonQuery() query: PageQuery,
  ): Promise<PageEnvelope<ReturnType<typeof toMember>>> {
    const rows = await this.teams.membersPage(actor, team.id, keysetOf('members', query));
    return pageOf(this.clock, 'members', rows, query, (member) => member.userId, toMember);
  }

  @ApiEndpoint({
    method: 'PATCH',
    path: ':id',
    operationId: 'updateMemberRole',
    ability: 'members:write',
    summary: "Change a member's role",
    description:
      "Makes a member an admin or a member, as on the team's page: the owner changes anyone's role but their own, an admin only members'. The member is told by mail; the team's audit log records it as done with this token.",
    data: UserProfileSchema,
    body: UpdateMemberBody,
    errors: ['forbidden', 'not_found', 'owner_role'],
  })
  async updateRole(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @IdParam() id: number,
    @JsonBody() body: UpdateMemberBody,
  ): Promise<SuccessEnvelope<UserProfile>> {
    return success(
      this.clock,
      toUserProfile(await this.members.changeRole(actor, team.id, id, body.role)),
    );
  }

  @ApiEndpoint({
    method: 'DELETE',
    path: ':id',
    operationId: 'removeMember',
    ability: 'members:write',
    summary: 'Remove a member',
    description:
      "Removes a member from the team, as on the team's page: the owner removes anyone but themselves, an admin only members; naming yourself leaves the team. The member is told by mail, and goes back to their personal team if they worked in this one.",
    errors: ['forbidden', 'not_found', 'owner_cannot_leave', 'personal_team'],
  })
  async remove(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @IdParam() id: number,
  ): Promise<void> {
    await this.members.removeMember(actor, team.id, id);
  }
}
