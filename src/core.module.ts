import { WebhooksModule } from './webhooks/webhooks.module.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { AccountAccessModule } from './account/account-access.module.js';
import { AuditLogModule } from './audit/audit-log.module.js';
import { AuthModule } from './auth/auth.module.js';
import type { Clock } from './clock/clock.js';
import { ClockModule } from './clock/clock.module.js';
import type { Config } from './config/config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { ENTITIES } from './entities.js';
import { EmailVerificationModule } from './email-verification/email-verification.module.js';
import { MailModule } from './mail/mail.module.js';
import { PasswordResetModule } from './password-reset/password-reset.module.js';
import { SignInModule } from './sign-in/sign-in.module.js';
import { ServiceAccountsModule } from './service-accounts/service-accounts.module.js';
import { TeamsModule } from './teams/teams.module.js';
import { TokensModule } from './tokens/tokens.module.js';
import { UsersModule } from './users/users.module.js';
import { SchedulerModule } from './scheduler/scheduler.module.js';
import { EventsModule } from './events/events.module.js';

/** The domain and its database: what the HTTP app and the operators' CLI both run on. */
@Module({})
export class CoreModule {
  /** `clock`: the machine's unless a test hands in another. */
  static forRoot(config: Config, clock?: Clock): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        ConfigModule.forRoot(config),
        ClockModule.forRoot(clock),
        SchedulerModule,
        EventsModule,
        DatabaseModule.forRoot(ENTITIES),
        MailModule,
        AuditLogModule,
        UsersModule,
        TeamsModule,
        TokensModule,
        AuthModule,
        EmailVerificationModule,
        PasswordResetModule,
        SignInModule,
        AccountAccessModule,
        ServiceAccountsModule,
        WebhooksModule,
      ],
    };
  }
}
