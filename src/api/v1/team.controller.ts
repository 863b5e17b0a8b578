import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { CurrentTeam } from './api-authentication.js';
import { success, type SuccessEnvelope } from '../../common/http/envelope.js';
import { toTeamSummary, type TeamSummary } from '../../teams/team.view.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { TeamSchema } from './openapi/schemas.js';

@ApiTags('Team')
@Controller('api/v1/team')
export class TeamController {
  constructor(private readonly clock: Clock) {}

  /** The team the token acts in: its user's current team, or the team it is pinned to. */
  @ApiEndpoint({
    method: 'GET',
    operationId: 'getTeam',
    ability: 'team:read',
    summary: 'The team the token acts in',
    description:
      "The team that is current for the token's user at the moment of the request: switching teams in the web application changes the answer of the very next request. A token pinned to a team answers that team, whatever its user's current team, for as long as its user is a member of it.",
    data: TeamSchema,
    errors: ['not_found'],
  })
  current(@CurrentTeam() team: TeamSummary): SuccessEnvelope<TeamSummary> {
    return success(this.clock, toTeamSummary(team));
  }
}
