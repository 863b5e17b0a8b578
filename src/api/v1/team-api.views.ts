import type { AuditEvent } from '../../audit/audit-event.entity.js';
import type { TeamInvitation } from '../../invitations/team-invitation.entity.js';
import type { TeamRole } from '../../teams/team-member.entity.js';
import type { Team } from '../../teams/team.entity.js';
import type { MemberRow } from '../../teams/teams.repository.js';
import type { TeamTokenView } from '../../tokens/tokens-in-team.service.js';

/**
 * What the team API answers, field by field (snake_case, as every answer of the API): each
 * mapper names exactly the fields its schema in openapi/team-schemas.ts describes.
 */

export const toMembership = ({ team, role }: { team: Team; role: TeamRole }) => ({
  id: team.id,
  name: team.name,
  slug: team.slug,
  personal: Boolean(team.personal),
  role,
});

export const toMember = (member: MemberRow) => ({
  id: member.userId,
  name: member.name,
  email: member.email,
  role: member.role,
  joined_at: member.joinedAt.toISOString(),
});

export const toInvitation = (invitation: TeamInvitation) => ({
  id: invitation.id,
  email: invitation.email,
  role: invitation.role,
  status: invitation.status,
  expires_at: invitation.expiresAt.toISOString(),
  created_at: invitation.createdAt.toISOString(),
});

export const toTeamToken = (token: TeamTokenView) => ({
  id: token.id,
  name: token.name,
  hint: token.hint,
  abilities: token.abilities,
  created_at: token.createdAt.toISOString(),
  expires_at: token.expiresAt?.toISOString() ?? null,
  last_used_at: token.lastUsedAt?.toISOString() ?? null,
  last_address: token.lastAddress,
  binding: token.pinned ? 'pinned' : 'current',
  person: {
    id: token.person.id,
    name: token.person.name,
    email: token.person.email,
    role: token.person.role,
    type: token.person.serviceAccount ? 'service_account' : 'person',
  },
  team_refusal: token.refusalCode,
});

function detailOf(detail: string | null): Record<string, unknown> | null {
  if (!detail) return null;
  try {
    return JSON.parse(detail) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export const toAuditEvent = (e: AuditEvent) => ({
  id: Number(e.id),
  occurred_at: e.occurredAt.toISOString(),
  event: e.event,
  actor: {
    kind: e.actorKind,
    user_id: e.actorUserId,
    token_id: e.actorKind === 'token' ? e.tokenId : null,
  },
  user_id: e.userId,
  target: e.targetType ? { type: e.targetType, id: e.targetId } : null,
  detail: detailOf(e.detail),
  ip: e.ip,
  user_agent: e.userAgent,
});
