/** The kinds the security log can be filtered by, in the order the filter lists them. */
export const AUDIT_KINDS = {
  'sign-in': 'Signing in and out',
  account: 'Account settings',
  token: 'API tokens',
  team: 'Teams',
  service_account: 'Service accounts',
  webhook: 'Webhooks',
} as const;

export type AuditKind = keyof typeof AUDIT_KINDS;

export const AUDIT_KIND_NAMES = Object.keys(AUDIT_KINDS) as AuditKind[];

/**
 * The kinds a team's audit log holds: what happens in a team. Signing in and a person's account
 * settings belong to no team, so its filter does not offer them.
 */
export const TEAM_AUDIT_KINDS: readonly AuditKind[] = [
  'token',
  'team',
  'service_account',
  'webhook',
];

/**
 * Every event the log records: its stable name (`<kind>.<what>`, what exports and filters
 * use; never renamed) and how a page says it.
 */
export const AUDIT_EVENTS = {
  'sign-in.succeeded': 'Signed in',
  'sign-in.failed': 'Sign-in refused',
  'sign-in.signed_out': 'Signed out',
  'sign-in.recovery_code_used': 'Signed in with a recovery code',
  'account.created': 'Account created',
  'account.email_confirmed': 'E-mail address confirmed',
  'account.password_changed': 'Password changed',
  'account.password_reset': 'Password reset by a mailed link',
  'account.email_change_requested': 'E-mail change asked for',
  'account.email_change_cancelled': 'E-mail change cancelled',
  'account.email_changed': 'E-mail address changed',
  'account.two_factor_enabled': 'Two-factor sign-in turned on',
  'account.two_factor_disabled': 'Two-factor sign-in turned off',
  'account.recovery_codes_regenerated': 'New recovery codes made',
  'account.passkey_added': 'Passkey added',
  'account.passkey_renamed': 'Passkey renamed',
  'account.passkey_removed': 'Passkey removed',
  'account.session_revoked': 'Session signed out',
  'account.disabled': 'Account disabled by an operator',
  'account.enabled': 'Account enabled again by an operator',
  'account.two_factor_reset': 'Two-factor sign-in reset by an operator',
  'token.created': 'Token created',
  'token.updated': 'Token edited',
  'token.regenerated': 'Token regenerated',
  'token.revoked': 'Token revoked',
  'token.expiry_reminded': 'Token expiry reminder sent',
  'token.expired': 'Token expired',
  'token.new_ip': 'Token used from a new address',
  'token.refused': 'Token refused',
  'token.introspected': 'Tokens checked (introspection)',
  'team.created': 'Team created',
  'team.renamed': 'Team renamed',
  'team.deleted': 'Team deleted',
  'team.member_invited': 'Member invited',
  'team.member_joined': 'Member joined',
  'team.member_removed': 'Member removed',
  'team.member_left': 'Member left',
  'team.role_changed': 'Role changed',
  'team.ownership_transferred': 'Ownership transferred',
  'team.policy_changed': 'Team policy changed',
  'service_account.created': 'Service account created',
  'service_account.deleted': 'Service account deleted',
  'webhook.created': 'Webhook endpoint added',
  'webhook.deleted': 'Webhook endpoint deleted',
  'webhook.test_sent': 'Webhook test event sent',
  'webhook.replayed': 'Webhook delivery replayed',
  'webhook.disabled': 'Webhook endpoint disabled',
  'webhook.secret_rotated': 'Webhook signing secret rotated',
} as const;

export type AuditEventName = keyof typeof AUDIT_EVENTS;

export function kindOf(event: string): AuditKind | undefined {
  const kind = event.slice(0, event.indexOf('.'));
  return kind in AUDIT_KINDS ? (kind as AuditKind) : undefined;
}

export function isAuditKind(value: unknown): value is AuditKind {
  return typeof value === 'string' && Object.hasOwn(AUDIT_KINDS, value);
}
