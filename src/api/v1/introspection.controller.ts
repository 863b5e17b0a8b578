import { Controller, Req } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { TokenIntrospection, type IntrospectionAnswer } from '../../tokens/token-introspection.js';
import type { TokenPrincipal } from '../../tokens/token-authenticator.js';
import { CurrentToken } from './api-authentication.js';
import { JsonBody } from './conventions/api-input.js';
import { IntrospectionBody } from './dto/introspection.dto.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { IntrospectionSchema } from './openapi/introspection-schemas.js';

@ApiTags('Introspection')
@Controller('api/v1/introspect')
export class IntrospectionController {
  constructor(private readonly introspection: TokenIntrospection) {}

  /** RFC 7662: whether a token presented to one of the team's services is active in the team. */
  @ApiEndpoint({
    method: 'POST',
    operationId: 'introspectToken',
    ability: 'tokens:introspect',
    summary: 'Check a token presented to another service of the team (RFC 7662)',
    description:
      "For the team's other services: is the token a client presented to them active, acting in the team the calling token acts in, whose is it and what may it do? The body is RFC 7662's form (`token=…`), or the same as JSON; `required_abilities` asks whether the API would let it do those, answered with the API's own refusal codes. Decided by the same query and rules as the API's own requests: a revocation, an expiry or a policy change shows on the very next check, on every instance. A token of another team is as inactive as an unknown one. Each active check counts as a use of the checked token; checks count on the calling token's budget of introspections (`RATE_LIMIT_INTROSPECTIONS_PER_TOKEN`), and each calling token's checks of a minute are one `token.introspected` event of the team's audit log.",
    body: IntrospectionBody,
    data: IntrospectionSchema,
    protocol: 'rfc7662',
    errors: ['not_found'],
  })
  introspect(
    @CurrentToken() caller: TokenPrincipal,
    @JsonBody() body: IntrospectionBody,
    @Req() req: Request,
  ): Promise<IntrospectionAnswer> {
    const required = (body.required_abilities ?? '').split(/[\s,]+/).filter(Boolean);
    const client = { ip: req.ip, userAgent: req.headers['user-agent'] };
    return this.introspection.introspect(caller, body.token, required, client);
  }
}
