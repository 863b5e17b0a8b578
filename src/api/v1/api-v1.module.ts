import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { RateLimitModule } from '../../rate-limit/rate-limit.module.js';
import { TokensModule } from '../../tokens/tokens.module.js';
import { ApiAuthentication, ApiRateLimiter, BearerStrategy } from './api-authentication.js';
import { TeamController } from './team.controller.js';
import { TokenController } from './token.controller.js';
import { UserController } from './user.controller.js';

/**
 * The versioned JSON API: its routes, and the one middleware that authenticates them all (Nest
 * mounts it on each of the controllers' routes, in every spelling Express routes to them).
 */
const API_CONTROLLERS = [UserController, TeamController, TokenController];

@Module({
  imports: [PassportModule.register({ session: false }), RateLimitModule, TokensModule],
  controllers: API_CONTROLLERS,
  providers: [BearerStrategy, ApiRateLimiter, ApiAuthentication],
})
export class ApiV1Module implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(ApiAuthentication).forRoutes(...API_CONTROLLERS);
  }
}
