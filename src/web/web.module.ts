import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { EVERY_PATH } from '../common/http/every-path.js';
import { AccountModule } from '../account/account.module.js';
import { AuditLogModule } from '../audit/audit-log.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { InvitationsModule } from '../invitations/invitations.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { PasswordResetModule } from '../password-reset/password-reset.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ServiceAccountsModule } from '../service-accounts/service-accounts.module.js';
import { SignInModule } from '../sign-in/sign-in.module.js';
import { TeamTokensModule } from '../team-tokens/team-tokens.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { UsersModule } from '../users/users.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { ConfirmPasswordController } from './confirm-password/confirm-password.controller.js';
import { DashboardController } from './dashboard/dashboard.controller.js';
import { InvitationsController } from './invitations/invitations.controller.js';
import { Assets } from './assets.js';
import { PageContext } from './page-context.js';
import { pageAssets, PageMethods, PageRequests } from './page-requests.js';
import { SessionLifecycle } from './session/session-lifecycle.js';
import { TypeormSessionStore, WebSession } from './session/web-session.js';
import { TwoFactorSetups } from './settings/two-factor/setup-session.js';
import { TwoFactorSignIn } from './sign-in/two-factor-sign-in.js';
import { SudoMode } from './sudo-mode.js';
import { PasswordResetController } from './password-reset/password-reset.controller.js';
import { EmailVerificationController } from './register/email-verification.controller.js';
import { TokenSettingsController } from './settings/api-tokens/token-settings.controller.js';
import { TokensController } from './settings/api-tokens/tokens.controller.js';
import { PasskeysController } from './settings/passkeys/passkeys.controller.js';
import { PasswordController } from './settings/password/password.controller.js';
import { ProfileController } from './settings/profile/profile.controller.js';
import { SecurityLogController } from './settings/security-log/security-log.controller.js';
import { SecurityController } from './settings/security/security.controller.js';
import { SessionsController } from './settings/sessions/sessions.controller.js';
import { TwoFactorSettingsController } from './settings/two-factor/two-factor-settings.controller.js';
import { AuthController } from './sign-in/sign-in.controller.js';
import { TwoFactorChallengeController } from './sign-in/two-factor-challenge.controller.js';
import { ServiceAccountsController } from './teams/service-accounts.controller.js';
import { TeamChangesController } from './teams/team-changes.controller.js';
import { TeamInvitationsController } from './teams/team-invitations.controller.js';
import { TeamPageController } from './teams/team-page.controller.js';
import { TeamSettingsController } from './teams/team-settings.controller.js';
import { TeamTokensController } from './teams/team-tokens.controller.js';
import { TeamsController } from './teams/teams.controller.js';
import { WebhooksController } from './teams/webhooks.controller.js';

/**
 * The page edge, as `ApiV1Module` is the API's: every page controller, laid out under web/ as
 * the URLs are, over the features' services; and what every page request goes through before
 * its route (`PageRequests`): the assets, the body parsers, the session and CSRF (`WebSession`)
 * and then the page context.
 */
@Module({
  imports: [
    AccountModule,
    AuditLogModule,
    AuthModule,
    EmailVerificationModule,
    InvitationsModule,
    PasskeysModule,
    PasswordResetModule,
    RateLimitModule,
    ServiceAccountsModule,
    SignInModule,
    TeamTokensModule,
    TeamsModule,
    TokensModule,
    TwoFactorModule,
    UsersModule,
    WebhooksModule,
  ],
  // In this order: /teams/switch is matched before /teams/:id.
  controllers: [
    DashboardController,
    AuthController,
    TwoFactorChallengeController,
    PasswordResetController,
    EmailVerificationController,
    ConfirmPasswordController,
    ProfileController,
    PasswordController,
    SecurityController,
    SessionsController,
    TwoFactorSettingsController,
    PasskeysController,
    TokensController,
    TokenSettingsController,
    SecurityLogController,
    InvitationsController,
    TeamsController,
    TeamSettingsController,
    TeamInvitationsController,
    TeamPageController,
    TeamTokensController,
    ServiceAccountsController,
    WebhooksController,
    TeamChangesController,
  ],
  providers: [
    TypeormSessionStore,
    WebSession,
    PageContext,
    SudoMode,
    SessionLifecycle,
    TwoFactorSignIn,
    TwoFactorSetups,
    { provide: Assets, useFactory: pageAssets },
    PageMethods,
  ],
  exports: [WebSession, PageContext, Assets, PageMethods],
})
export class WebModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Every path: the API's pass it at the cost of one test (see PageRequests).
    consumer.apply(PageRequests).forRoutes({ path: EVERY_PATH, method: RequestMethod.ALL });
  }
}
