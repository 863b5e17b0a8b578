import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { CurrentToken } from './api-authentication.js';
import { success, type SuccessEnvelope } from '../../common/http/envelope.js';
import { AbilityCatalog } from '../../config/abilities.config.js';
import { toTokenInfo, type TokenInfo } from '../../tokens/token.view.js';
import type { TokenPrincipal } from '../../tokens/token-authenticator.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { TokenSchema } from './openapi/schemas.js';

@ApiTags('Token')
@Controller('api/v1/token')
export class TokenController {
  constructor(
    private readonly catalog: AbilityCatalog,
    private readonly clock: Clock,
  ) {}

  /** The presented token's own details, answered from the one authentication query. */
  @ApiEndpoint({
    method: 'GET',
    operationId: 'getToken',
    summary: 'The presented token',
    description:
      "The presented token itself: its id, name and abilities, when it was created, when it expires and when it was last used, the team it acts in (following its person's current team, or pinned to one) and why that team refuses it, if it does: so a script can check what it holds and when it runs out. It lists the deployment's ability catalog too. Any valid token may ask; no ability is needed, and a team's refusal does not apply here. The team is named only to a token with `team:read` that the team does not refuse; otherwise `team` is null and `team_refusal` says why a refused token is refused. A value that a regeneration replaced, still accepted during its grace period, says so and until when (`replaced_value_valid_until`).",
    data: TokenSchema,
    // It says why its team refuses it, rather than being refused.
    actsInTeam: false,
  })
  current(@CurrentToken() token: TokenPrincipal): SuccessEnvelope<TokenInfo> {
    return success(this.clock, toTokenInfo(token, this.catalog));
  }
}
