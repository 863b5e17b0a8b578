import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentTeam } from './api-authentication.js';
import { success, type SuccessEnvelope } from '../../common/http/envelope.js';
import { toTeamSummary, type TeamSummary } from '../../teams/team.view.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { TeamEnvelope } from './openapi/schemas.js';

@ApiTags('API v1')
@Controller('api/v1/team')
export class TeamController {
  /** The team that is current for the token's user at the moment of the request. */
  @Get()
  @ApiEndpoint({
    ability: 'team:read',
    summary: "The token owner's current team",
    description:
      "The team that is current for the token's user at the moment of the request: switching teams in the web application changes the answer of the very next request.",
    envelope: TeamEnvelope,
    notFound: "The token's user has no current team.",
  })
  current(@CurrentTeam() team: TeamSummary): SuccessEnvelope<TeamSummary> {
    return success(toTeamSummary(team));
  }
}
