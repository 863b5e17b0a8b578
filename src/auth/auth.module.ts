import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccessGuard } from './access.guard.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { HomeController } from './home.controller.js';
import { PasswordHasher } from './password-hasher.js';
import { RegistrationService } from './registration.service.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { SessionsRepository } from './sessions.repository.js';
import { TypeormSessionStore } from './typeorm-session.store.js';
import {
  CsrfMiddleware,
  CurrentUserMiddleware,
  SessionMiddleware,
  WebSessionMiddleware,
} from './web-session.middleware.js';

@Module({
  imports: [
    PassportModule.register({ session: false }),
    RateLimitModule,
    UsersModule,
    TeamsModule,
    TokensModule,
  ],
  controllers: [AuthController, HomeController],
  providers: [
    BearerStrategy,
    BearerAuthGuard,
    PasswordHasher,
    RegistrationService,
    AuthService,
    SessionLifecycle,
    SessionsRepository,
    TypeormSessionStore,
    SessionMiddleware,
    CsrfMiddleware,
    CurrentUserMiddleware,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [RegistrationService, PasswordHasher],
})
export class AuthModule implements NestModule {
  /** Pages get a session, CSRF protection and their signed-in user; the token API gets none. */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(WebSessionMiddleware)
      .exclude({ path: 'api/{*rest}', method: RequestMethod.ALL })
      .forRoutes({ path: '{*rest}', method: RequestMethod.ALL });
  }
}
