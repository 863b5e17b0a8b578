import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { AbilityCatalog } from '../../config/abilities.config.js';
import { InvitationsModule } from '../../invitations/invitations.module.js';
import { RateLimitModule } from '../../rate-limit/rate-limit.module.js';
import { TeamTokensModule } from '../../team-tokens/team-tokens.module.js';
import { TeamsModule } from '../../teams/teams.module.js';
import { TokensModule } from '../../tokens/tokens.module.js';
import { ApiAuthentication, ApiRateLimiter, BearerStrategy } from './api-authentication.js';
import { ApiRequest, ProtocolRequest } from './api-request.js';
import { IntrospectionController } from './introspection.controller.js';
import { apiControllers } from './api-routes.js';
import { ApiConventionsModule } from './conventions/api-conventions.module.js';
import { TeamAuditLogController } from './team-audit-log.controller.js';
import { TeamInvitationsController } from './team-invitations.controller.js';
import { TeamMembersController } from './team-members.controller.js';
import { TeamTokensController } from './team-tokens.controller.js';
import { TeamController } from './team.controller.js';
import { TokenController } from './token.controller.js';
import { UserController } from './user.controller.js';

/**
 * The versioned JSON API: its routes, and the one middleware that authenticates them all. Nest
 * mounts it on every controller with an `@ApiEndpoint` handler, whichever module declares it
 * (these, and a deployment's own: docs/extending.md), in every spelling Express routes to them.
 */
@Module({
  imports: [
    DiscoveryModule,
    PassportModule.register({ session: false }),
    RateLimitModule,
    TokensModule,
    TeamsModule,
    InvitationsModule,
    TeamTokensModule,
    ApiConventionsModule,
  ],
  controllers: [
    UserController,
    TeamController,
    TeamMembersController,
    TeamInvitationsController,
    TeamTokensController,
    TeamAuditLogController,
    TokenController,
    IntrospectionController,
  ],
  providers: [BearerStrategy, ApiRateLimiter, ApiAuthentication, ApiRequest, ProtocolRequest],
})
export class ApiV1Module implements NestModule {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly catalog: AbilityCatalog,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    const { conventional, protocol } = apiControllers(this.discovery, this.catalog);
    consumer.apply(ApiRequest).forRoutes(...conventional);
    if (protocol.length > 0) consumer.apply(ProtocolRequest).forRoutes(...protocol);
  }
}
