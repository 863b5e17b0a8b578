import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import type { PageEnvelope } from '../../common/http/envelope.js';
import { TeamTokensService } from '../../team-tokens/team-tokens.service.js';
import type { TeamSummary } from '../../teams/team.view.js';
import { CurrentTeam } from './api-authentication.js';
import { JsonQuery } from './conventions/api-input.js';
import { keysetOf, pageOf, PageQuery } from './conventions/pagination.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { TeamTokenSchema } from './openapi/team-schemas.js';
import { toTeamToken } from './team-api.views.js';

/** The token inventory of the team the token acts in, for its owner and admins. */
@ApiTags('Team')
@Controller('api/v1/team/tokens')
export class TeamTokensController {
  constructor(
    private readonly inventory: TeamTokensService,
    private readonly clock: Clock,
  ) {}

  @ApiEndpoint({
    method: 'GET',
    operationId: 'listTeamTokens',
    ability: 'tokens:read',
    summary: "The team's token inventory",
    description:
      "The active tokens that can act in the team (its members' tokens that are not pinned elsewhere), by id, as the inventory page lists them to the owner and admins: names and metadata, never a value or a hash.",
    data: [TeamTokenSchema],
    query: PageQuery,
    errors: ['forbidden', 'not_found'],
  })
  async list(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @JsonQuery() query: PageQuery,
  ): Promise<PageEnvelope<ReturnType<typeof toTeamToken>>> {
    const { tokens } = await this.inventory.inventory(actor, team.id, keysetOf('tokens', query));
    return pageOf(this.clock, 'tokens', tokens, query, (token) => token.id, toTeamToken);
  }
}
