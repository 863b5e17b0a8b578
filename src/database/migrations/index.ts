import { InitialSchema1763798400000 } from './1763798400000-initial-schema.js';
import { Sessions1763884800000 } from './1763884800000-sessions.js';
import { TwoFactor1764201600000 } from './1764201600000-two-factor.js';
import { MailOutbox1764460800000 } from './1764460800000-mail-outbox.js';
import { EmailVerification1764547200000 } from './1764547200000-email-verification.js';
import { TeamInvitations1764633600000 } from './1764633600000-team-invitations.js';
import { TokenLifecycle1764720000000 } from './1764720000000-token-lifecycle.js';
import { AccountSettings1764806400000 } from './1764806400000-account-settings.js';
import { AuditLog1764892800000 } from './1764892800000-audit-log.js';
import { TeamGovernance1764979200000 } from './1764979200000-team-governance.js';
import { Passkeys1765065600000 } from './1765065600000-passkeys.js';
import { MillisecondTimes1765152000000 } from './1765152000000-millisecond-times.js';
import { TokenLifetimeDays1765238400000 } from './1765238400000-token-lifetime-days.js';
import { TeamMemberVersions1765324800000 } from './1765324800000-team-member-versions.js';
import { TeamAllowedAbilities1765411200000 } from './1765411200000-team-allowed-abilities.js';
import { ApiIdempotencyKeys1765497600000 } from './1765497600000-api-idempotency-keys.js';
import { ServiceAccounts1765584000000 } from './1765584000000-service-accounts.js';
import { UserDisabled1765587600000 } from './1765587600000-user-disabled.js';
import { AuditEventsByTime1765591200000 } from './1765591200000-audit-events-by-time.js';
import { Webhooks1765600000000 } from './1765600000000-webhooks.js';
import { WebhookConfiguredEndpoints1765605000000 } from './1765605000000-webhook-configured-endpoints.js';
import { AuditStreams1765608600000 } from './1765608600000-audit-streams.js';
import { OneFormOfEachAddress1765612800000 } from './1765612800000-one-form-of-each-address.js';
import { MailOutboxByRecipient1765616400000 } from './1765616400000-mail-outbox-by-recipient.js';
import { WebhookEndpointsPerTeam1765620000000 } from './1765620000000-webhook-endpoints-per-team.js';
import { WebhookEndpointBackoff1765623600000 } from './1765623600000-webhook-endpoint-backoff.js';
import { AuditStreamsByState1765627200000 } from './1765627200000-audit-streams-by-state.js';
import { SessionVersions1765630800000 } from './1765630800000-session-versions.js';

/** Every migration, oldest first. Listed by class so the build needs no file globbing. */
export const MIGRATIONS = [
  InitialSchema1763798400000,
  Sessions1763884800000,
  TwoFactor1764201600000,
  MailOutbox1764460800000,
  EmailVerification1764547200000,
  TeamInvitations1764633600000,
  TokenLifecycle1764720000000,
  AccountSettings1764806400000,
  AuditLog1764892800000,
  TeamGovernance1764979200000,
  Passkeys1765065600000,
  MillisecondTimes1765152000000,
  TokenLifetimeDays1765238400000,
  TeamMemberVersions1765324800000,
  TeamAllowedAbilities1765411200000,
  ApiIdempotencyKeys1765497600000,
  ServiceAccounts1765584000000,
  UserDisabled1765587600000,
  AuditEventsByTime1765591200000,
  Webhooks1765600000000,
  WebhookConfiguredEndpoints1765605000000,
  AuditStreams1765608600000,
  OneFormOfEachAddress1765612800000,
  MailOutboxByRecipient1765616400000,
  WebhookEndpointsPerTeam1765620000000,
  WebhookEndpointBackoff1765623600000,
  AuditStreamsByState1765627200000,
  SessionVersions1765630800000,
];
