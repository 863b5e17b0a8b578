import { Controller, Get } from '@nestjs/common';
import { BearerAuth } from '../../auth/auth-policy.decorator.js';
import { CurrentTeam } from '../../common/decorators/principal.decorator.js';
import { success, type SuccessEnvelope } from '../../common/http/envelope.js';
import { toTeamSummary, type TeamSummary } from '../../teams/team.view.js';

@Controller('api/v1/team')
export class TeamController {
  /** The team that is current for the token's user at the moment of the request. */
  @Get()
  @BearerAuth('team:read')
  current(@CurrentTeam() team: TeamSummary): SuccessEnvelope<TeamSummary> {
    return success(toTeamSummary(team));
  }
}
