import type { AuditEntry } from '../audit/audit-log.js';
import type { Actor } from '../common/actor.js';

/** Each event of version 1: its name (never renamed) and what it reports. */
export const WEBHOOK_EVENTS = {
  'token.created': 'A token was created.',
  'token.updated': 'A token was renamed or given other abilities.',
  'token.regenerated': 'A token was given a new value (the same token, the same id).',
  'token.revoked':
    'A token was revoked; `reason` says why: `person` (its owner), `team_admin` (an owner or admin of the team), `leak_report` (a secret scanner reported it) or `expiry`.',
  'token.expiring': 'A token expires soon: its owner was reminded.',
  'token.used_from_new_address': 'A token was used from an address it was not used from before.',
  'token.leak_reported': 'A secret scanner reported the token as published; it was revoked.',
  'member.invited': 'Someone was invited into the team.',
  'member.joined': 'Someone joined the team (by an invitation, or added by an owner or admin).',
  'member.role_changed': "A member's role changed.",
  'member.removed': 'A member was removed from the team, or left it.',
  'team.policy_changed': "The team's policy (two-factor, token lifetime, abilities) changed.",
  'service_account.created': 'A service account of the team was created.',
  'service_account.deleted': 'A service account of the team was deleted (and its tokens).',
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;

/** The event **Send test event** sends, whatever events the endpoint chose. */
export const TEST_EVENT = 'webhook.test';

export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as WebhookEventType[];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return Object.hasOwn(WEBHOOK_EVENTS, value);
}

/** An event to send: its type, the team it belongs to (none for the instance's own) and its data. */
export interface WebhookEvent {
  type: WebhookEventType;
  teamId: number | null;
  at: Date;
  data: Record<string, unknown>;
}

const ACTOR_KINDS = {
  person: 'user',
  token: 'token',
  operator: 'operator',
  system: 'system',
  visitor: 'anonymous',
} as const;

/** Who acted, as payloads name them: a kind, and the account (and token) when there is one. */
function actorOf(actor: Actor): Record<string, unknown> {
  return {
    kind: ACTOR_KINDS[actor.kind],
    ...('userId' in actor && actor.userId !== undefined ? { user_id: actor.userId } : {}),
    ...(actor.kind === 'token' ? { token_id: actor.tokenId } : {}),
  };
}

/** Which events of version 1 a security log entry calls for (none, one or two). */
const FROM_AUDIT: Partial<Record<AuditEntry['event'], (e: AuditEntry) => WebhookEventType[]>> = {
  'token.created': () => ['token.created'],
  'token.updated': () => ['token.updated'],
  'token.regenerated': () => ['token.regenerated'],
  'token.revoked': (e) =>
    e.detail?.reason === 'leaked' ? ['token.leak_reported', 'token.revoked'] : ['token.revoked'],
  'token.expiry_reminded': () => ['token.expiring'],
  'token.expired': () => ['token.revoked'],
  'token.new_ip': () => ['token.used_from_new_address'],
  'team.member_invited': () => ['member.invited'],
  'team.member_joined': () => ['member.joined'],
  'team.role_changed': () => ['member.role_changed'],
  'team.member_removed': () => ['member.removed'],
  'team.member_left': () => ['member.removed'],
  'team.policy_changed': () => ['team.policy_changed'],
  'service_account.created': () => ['service_account.created'],
  'service_account.deleted': () => ['service_account.deleted'],
};

/** Why a token was revoked, for `token.revoked`. */
function revocationReason(entry: AuditEntry): string {
  if (entry.event === 'token.expired') return 'expiry';
  if (entry.detail?.reason === 'leaked') return 'leak_report';
  if (entry.detail?.by_team !== undefined) return 'team_admin';
  return 'person';
}

/**
 * The webhook events a security log entry calls for, with the entry's facts as their data:
 * ids, names and times (the log never holds a secret, a token's value or its hash).
 */
export function webhookEventsOf(actor: Actor, entry: AuditEntry & { at: Date }): WebhookEvent[] {
  const types = FROM_AUDIT[entry.event]?.(entry) ?? [];
  return types.map((type) => {
    const data: Record<string, unknown> = {
      team_id: entry.teamId ?? null,
      actor: actorOf(actor),
      ...(entry.target ? { [`${entry.target.type}_id`]: entry.target.id } : {}),
      ...(entry.tokenId != null ? { token_id: entry.tokenId } : {}),
      ...(entry.userId != null ? { user_id: entry.userId } : {}),
      ...(entry.detail ?? {}),
    };
    if (type === 'token.revoked') data.reason = revocationReason(entry);
    return { type, teamId: entry.teamId ?? null, at: entry.at, data };
  });
}

/** The body Standard Webhooks suggests: the type, when it happened, and the data. */
export function payloadOf(event: {
  type: string;
  at: Date;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({ type: event.type, timestamp: event.at.toISOString(), data: event.data });
}
