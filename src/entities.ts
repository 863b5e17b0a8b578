import type { DataSource, DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from './config/database.config.js';
import { buildDataSourceOptions } from './database/database-options.js';
import { createDataSource } from './database/millisecond-times.js';
import { AuditEvent } from './audit/audit-event.entity.js';
import { OneTimeLink } from './one-time-links/one-time-link.entity.js';
import { Session } from './auth/session.entity.js';
import { TeamInvitation } from './invitations/team-invitation.entity.js';
import { TeamMember } from './teams/team-member.entity.js';
import { OutboxMessage } from './mail/outbox-message.entity.js';
import { Team } from './teams/team.entity.js';
import { PersonalAccessToken } from './tokens/personal-access-token.entity.js';
import { RecoveryCode } from './two-factor/recovery-code.entity.js';
import { TwoFactorCredential } from './two-factor/two-factor-credential.entity.js';
import { TokenAddress } from './tokens/token-address.entity.js';
import { TokenDailyUsage } from './tokens/token-daily-usage.entity.js';
import { TokenPin } from './tokens/token-pin.entity.js';
import { Passkey } from './passkeys/passkey.entity.js';
import { PasskeyChallenge } from './passkeys/passkey-challenge.entity.js';
import { PasskeyUserHandle } from './passkeys/passkey-user-handle.entity.js';
import { User } from './users/user.entity.js';
import { IdempotencyKey } from './api/v1/idempotency/idempotency-key.entity.js';
import { AuditStreamEntry } from './webhooks/audit-stream-entry.entity.js';
import { WebhookDelivery } from './webhooks/webhook-delivery.entity.js';
import { WebhookEndpoint } from './webhooks/webhook-endpoint.entity.js';

export const ENTITIES = [
  User,
  Team,
  TeamMember,
  PersonalAccessToken,
  TokenDailyUsage,
  TokenAddress,
  TokenPin,
  Session,
  TwoFactorCredential,
  RecoveryCode,
  OutboxMessage,
  OneTimeLink,
  TeamInvitation,
  AuditEvent,
  Passkey,
  PasskeyUserHandle,
  PasskeyChallenge,
  IdempotencyKey,
  WebhookEndpoint,
  WebhookDelivery,
  AuditStreamEntry,
];

/** TypeORM's options for these entities (ormconfig.ts, the seeding of benches and tests). */
export function dataSourceOptions(config: DatabaseConfig): DataSourceOptions {
  return buildDataSourceOptions(config, ENTITIES);
}

/** A data source over these entities, not initialized (ormconfig.ts, benches and tests). */
export function dataSourceFor(
  config: DatabaseConfig,
  overrides: Partial<DataSourceOptions> = {},
): DataSource {
  return createDataSource({ ...dataSourceOptions(config), ...overrides } as DataSourceOptions);
}
