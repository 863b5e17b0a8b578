/**
 * Every code a domain error may carry. Each door answers each of them in one table typed
 * `Record<DomainErrorCode, …>` (the API's in api/v1/api-errors.ts, the pages' in
 * web/page-errors.ts), so a code added here and answered nowhere fails the type check.
 */
export const DOMAIN_ERROR_CODES = [
  // Anything
  'not_found',
  'forbidden',
  'validation_failed',
  'still_referenced',
  'rate_limited',
  'service_unavailable',
  'server_busy',
  // Request bodies
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_in_use',
  'idempotency_key_reused',
  // Bearer tokens
  'missing_token',
  'invalid_token',
  'token_revoked',
  'token_expired',
  'token_changed',
  'account_disabled',
  'insufficient_scope',
  'ability_not_allowed_by_team',
  'team_access_lost',
  'two_factor_required',
  'token_lifetime_exceeds_policy',
  'ambiguous_token_name',
  // Token reports
  'signature_required',
  'unknown_key',
  'invalid_signature',
  'malformed_report',
  // Signing in
  'invalid_credentials',
  'sign_in_required',
  'sign_in_expired',
  'already_signed_in',
  'cross_site_request',
  'password_confirmation_required',
  // Account
  'email_taken',
  'email_not_verified',
  'owns_shared_teams',
  'account_state_unchanged',
  'no_second_factor',
  'link_expired',
  'link_used',
  'link_unknown',
  'link_withdrawn',
  // Two-factor and passkeys
  'two_factor_enabled',
  'two_factor_not_enabled',
  'two_factor_setup_expired',
  'recovery_codes_changed',
  'too_many_passkeys',
  'passkey_exists',
  // Teams
  'owner_role',
  'already_member',
  'personal_team',
  'owner_cannot_leave',
  'already_invited',
  'wrong_invitee',
  'service_account_limit',
  'service_account_name_taken',
  // Webhooks
  'webhook_endpoint_limit',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];
