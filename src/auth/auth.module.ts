import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccessGuard } from './access.guard.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { PasswordHasher } from './password-hasher.js';
import { RegistrationService } from './registration.service.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { SessionsRepository } from './sessions.repository.js';
import { TypeormSessionStore } from './typeorm-session.store.js';
import { CsrfMiddleware } from './csrf.middleware.js';
import { CurrentUserMiddleware } from './current-user.middleware.js';
import { SessionMiddleware } from './session.middleware.js';
import { TwoFactorChallengeController } from './two-factor-challenge.controller.js';
import { TwoFactorSignIn } from './two-factor-sign-in.js';
import { WebSessionMiddleware } from './web-session.middleware.js';

@Module({
  imports: [
    RateLimitModule,
    EmailVerificationModule,
    UsersModule,
    TeamsModule,
    TokensModule,
    TwoFactorModule,
  ],
  controllers: [AuthController, TwoFactorChallengeController],
  providers: [
    PasswordHasher,
    RegistrationService,
    AuthService,
    SessionLifecycle,
    TwoFactorSignIn,
    SessionsRepository,
    TypeormSessionStore,
    SessionMiddleware,
    CsrfMiddleware,
    CurrentUserMiddleware,
    WebSessionMiddleware,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  // Mounted by configureApp for page requests only (app.setup.ts).
  exports: [
    RegistrationService,
    AuthService,
    PasswordHasher,
    SessionLifecycle,
    SessionsRepository,
    WebSessionMiddleware,
  ],
})
export class AuthModule {}
