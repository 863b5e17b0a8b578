import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccessGuard } from './access.js';
import { AuthService } from './auth.service.js';
import { PasswordHasher } from './password-hasher.js';
import { SessionsRepository } from './sessions.repository.js';

/**
 * Who is there: what the pages' session holds and its rows (the session, CSRF, sudo mode and
 * signing in and out of a session are the page edge's, web/), passwords, and the global guard
 * that checks every route's declared policy. It knows no feature above users: the API's tokens are read by the API's own middleware, the forms of signing in
 * live in sign-in/.
 */
@Module({
  imports: [RateLimitModule, UsersModule],
  providers: [
    PasswordHasher,
    AuthService,
    SessionsRepository,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AuthService, PasswordHasher, SessionsRepository],
})
export class AuthModule {}
