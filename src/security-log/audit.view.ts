import { describeClient } from '../tokens/client-description.js';
import type { User } from '../users/user.entity.js';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { AUDIT_EVENTS, AUDIT_KINDS, kindOf, type AuditEventName } from '../audit/audit-events.js';

type Person = Pick<User, 'id' | 'name' | 'email'> & Partial<Pick<User, 'serviceAccountTeamId'>>;
type People = Map<number, Person>;

/** Who and what the events name: people and tokens by id. */
export interface Names {
  people: People;
  tokens: Map<number, string>;
}

/** Why a token was refused, as the log says it (the API's error codes otherwise). */
const REFUSALS: Record<string, string> = {
  token_revoked: 'it was revoked',
  token_expired: 'it had expired',
  account_disabled: 'its account was disabled',
  invalid_token: 'the value was not valid',
  insufficient_scope: 'it lacks the ability the request needs',
  two_factor_required: 'its team requires two-factor sign-in',
  token_lifetime_exceeds_policy: "it lives longer than its team's policy allows",
  team_access_lost: 'it is pinned to a team its person left',
  leaked: 'it was found in public, and reported by a secret scanner',
};

/** Names of the detail's facts, as the log says them. */
const FACT_NAMES: Record<string, string> = {
  grace_minutes: 'old value kept working for (minutes)',
  codes_left: 'recovery codes left',
  signed_in_from: 'signed-in address',
  previous_name: 'previous name',
  previous_role: 'previous role',
  new_owner: 'new owner',
  added_by: 'added by',
  by_team: 'revoked by the team',
  pinned_to: 'pinned to',
  service_account: 'service account',
  checks: 'tokens checked',
  inactive: 'answered inactive',
  refused: 'refused by the abilities asked for',
  require_two_factor: 'two-factor sign-in required',
  token_max_lifetime_days: 'maximum token lifetime (days)',
  previous_require_two_factor: 'two-factor sign-in required before',
  previous_token_max_lifetime_days: 'maximum token lifetime before (days)',
};

function factValue(key: string, value: unknown): string {
  if (key === 'reason' && typeof value === 'string')
    return REFUSALS[value] ?? value.replaceAll('_', ' ');
  if (key === 'added_by' && value === 'operator') return 'an operator (command line)';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.join(', ');
  // Times as every page writes them.
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) {
    const at = new Date(value);
    if (!Number.isNaN(at.getTime()))
      return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  }
  return String(value);
}

/** One event as `audit:export` writes it: one JSON object a line, names in snake_case. */
export function toExportLine(e: AuditEvent): object {
  return {
    id: Number(e.id),
    occurred_at: e.occurredAt.toISOString(),
    event: e.event,
    actor: { kind: e.actorKind, user_id: e.actorUserId },
    user_id: e.userId,
    team_id: e.teamId,
    token_id: e.tokenId,
    session: e.sessionHandle,
    target: e.targetType ? { type: e.targetType, id: e.targetId } : null,
    detail: parseDetail(e.detail),
    ip: e.ip,
    user_agent: e.userAgent,
  };
}

/** One event as a log page shows it. */
export interface AuditEventView {
  id: number;
  at: Date;
  event: string;
  label: string;
  kind: string;
  /** Who did it, in words: "You", "Ann Lee (ann@example.com)", "You, with the token “ci”", "Tessera". */
  by: string;
  /** The facts of the detail, as name and value. */
  facts: { name: string; value: string }[];
  ip: string | null;
  client: string | null;
}

/**
 * `showClient`: whether the viewer may see the address and client the event came from; someone
 * else's are for the people entitled to the team's audit log only.
 */
export function toEventView(
  e: AuditEvent,
  names: Names,
  viewerId: number,
  showClient = true,
): AuditEventView {
  const kind = kindOf(e.event);
  const parsed = parseDetail(e.detail) ?? {};
  const tokenName = e.tokenId === null ? undefined : names.tokens.get(e.tokenId);
  // A token event's `name` is the token's (as it was then): said first, as "token".
  const { name, ...rest } = parsed;
  const detail = kind === 'token' && typeof name === 'string' ? { token: name, ...rest } : parsed;
  const facts = Object.entries(detail)
    .filter(([, v]) => v !== null && v !== '')
    .map(([k, v]) => ({ name: FACT_NAMES[k] ?? k.replaceAll('_', ' '), value: factValue(k, v) }));
  if (e.tokenId !== null && !('token' in detail) && e.actorKind !== 'token') {
    facts.unshift({ name: 'token', value: tokenName ?? `a token since deleted (id ${e.tokenId})` });
  }
  return {
    id: Number(e.id),
    at: e.occurredAt,
    event: e.event,
    label: AUDIT_EVENTS[e.event as AuditEventName] ?? e.event,
    kind: kind ? AUDIT_KINDS[kind] : 'Other',
    by: actorOf(e, names, viewerId, tokenName),
    facts,
    ip: showClient ? e.ip : null,
    client: showClient && e.userAgent ? describeClient(e.userAgent) : null,
  };
}

function actorOf(
  e: AuditEvent,
  { people }: Names,
  viewerId: number,
  tokenName: string | undefined,
): string {
  switch (e.actorKind) {
    case 'operator':
      return 'An operator (command line)';
    case 'system':
      return 'Tessera';
    case 'anonymous':
      return 'Someone not signed in';
  }
  const id = e.actorUserId;
  const person =
    id === viewerId
      ? 'You'
      : id !== null && people.has(id)
        ? personName(people.get(id)!)
        : 'A deleted account';
  if (e.actorKind !== 'token') return person;
  return tokenName === undefined
    ? `${person}, with a token since deleted (id ${e.tokenId})`
    : `${person}, with the token “${tokenName}”`;
}

/** A person by name and address; a service account as one (its address receives no mail). */
function personName(p: Person): string {
  if (p.serviceAccountTeamId !== null && p.serviceAccountTeamId !== undefined) {
    return `The service account ${p.name}`;
  }
  return `${p.name} (${p.email})`;
}

function parseDetail(detail: string | null): Record<string, unknown> | null {
  if (!detail) return null;
  try {
    return JSON.parse(detail) as Record<string, unknown>;
  } catch {
    return null;
  }
}
