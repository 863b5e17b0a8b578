import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { success, type PageEnvelope, type SuccessEnvelope } from '../../common/http/envelope.js';
import { TeamsService } from '../../teams/teams.service.js';
import { toAccountProfile, type AccountProfile } from '../../users/user.view.js';
import type { TokenWithOwner } from '../../tokens/token-authenticator.js';
import { CurrentUser } from './api-authentication.js';
import { JsonQuery } from './conventions/api-input.js';
import { keysetOf, pageOf, PageQuery } from './conventions/pagination.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { AccountProfileSchema } from './openapi/schemas.js';
import { TeamMembershipSchema } from './openapi/team-schemas.js';
import { toMembership } from './team-api.views.js';

@ApiTags('User')
@Controller('api/v1/user')
export class UserController {
  constructor(
    private readonly teams: TeamsService,
    private readonly clock: Clock,
  ) {}

  /** The profile of the user who owns the presented token. */
  @ApiEndpoint({
    method: 'GET',
    path: 'profile',
    operationId: 'getProfile',
    ability: 'user:read',
    summary: "The token owner's profile",
    description:
      "The profile of the account that owns the presented token: id, name and email, and its type: a `person`, or a team's `service_account`, whose address is a non-deliverable one under `.invalid` that names its team.",
    data: AccountProfileSchema,
  })
  profile(@CurrentUser() user: TokenWithOwner['user']): SuccessEnvelope<AccountProfile> {
    return success(this.clock, toAccountProfile(user));
  }

  @ApiEndpoint({
    method: 'GET',
    path: 'teams',
    operationId: 'listTeams',
    ability: 'user:read',
    summary: "The token owner's teams",
    description:
      "Every team the token's person is in, with their role in each (`owner`, `admin` or `member`), by team id.",
    data: [TeamMembershipSchema],
    query: PageQuery,
  })
  async teamsOf(
    @CurrentActor() actor: Actor,
    @JsonQuery() query: PageQuery,
  ): Promise<PageEnvelope<ReturnType<typeof toMembership>>> {
    const rows = await this.teams.teamsPage(actor, keysetOf('teams', query));
    return pageOf(this.clock, 'teams', rows, query, (row) => row.team.id, toMembership);
  }
}
