import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { AuthService } from './auth.service.js';
import { PasswordHasher } from './password-hasher.js';
import { SessionsRepository } from './sessions.repository.js';

/**
 * Who is there: the sessions' rows (the session itself, CSRF, sudo mode and signing in and out
 * of a session are the page edge's, web/), passwords, and the decisions the doors' guard takes
 * (http/access.ts). It knows no feature above users: the API's tokens are read by the API's own
 * middleware, the forms of signing in live in sign-in/.
 */
@Module({
  imports: [RateLimitModule, UsersModule],
  providers: [PasswordHasher, AuthService, SessionsRepository],
  exports: [AuthService, PasswordHasher, SessionsRepository],
})
export class AuthModule {}
