import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccessGuard } from './access.guard.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { PasswordHasher } from './password-hasher.js';
import { RegistrationService } from './registration.service.js';

@Module({
  imports: [PassportModule.register({ session: false }), UsersModule, TeamsModule, TokensModule],
  providers: [
    BearerStrategy,
    BearerAuthGuard,
    PasswordHasher,
    RegistrationService,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [RegistrationService, PasswordHasher],
})
export class AuthModule {}
