import { describeClient } from '../tokens/client-description.js';
import type { User } from '../users/user.entity.js';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { AUDIT_EVENTS, AUDIT_KINDS, kindOf, type AuditEventName } from '../audit/audit-events.js';

type People = Map<number, Pick<User, 'id' | 'name' | 'email'>>;

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
  /** Who did it, in words: "You", "Ann Lee (ann@example.com)", "API token 12", "Tessera". */
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
  people: People,
  viewerId: number,
  showClient = true,
): AuditEventView {
  const kind = kindOf(e.event);
  const detail = parseDetail(e.detail) ?? {};
  const facts = Object.entries(detail)
    .filter(([, v]) => v !== null && v !== '')
    .map(([k, v]) => ({ name: k.replaceAll('_', ' '), value: String(v) }));
  if (e.tokenId !== null && !('token' in detail))
    facts.unshift({ name: 'token id', value: String(e.tokenId) });
  return {
    id: Number(e.id),
    at: e.occurredAt,
    event: e.event,
    label: AUDIT_EVENTS[e.event as AuditEventName] ?? e.event,
    kind: kind ? AUDIT_KINDS[kind] : 'Other',
    by: actorOf(e, people, viewerId),
    facts,
    ip: showClient ? e.ip : null,
    client: showClient && e.userAgent ? describeClient(e.userAgent) : null,
  };
}

function actorOf(e: AuditEvent, people: People, viewerId: number): string {
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
  return e.actorKind === 'token' ? `${person}, with API token ${e.tokenId}` : person;
}

function personName(p: Pick<User, 'name' | 'email'>): string {
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
