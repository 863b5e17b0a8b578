import { createHash } from 'node:crypto';
import type { Repository } from 'typeorm';
import type { TeamInvitation } from './team-invitation.entity.js';

/** 32 random bytes in base64url: what an invitation's link carries. */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** For a query on invitations (named `table`): whoever sent it is still the team's owner or an admin. */
export const senderMayInvite = (table = 'i') =>
  `EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = ${table}.team_id
    AND m.user_id = ${table}.invited_by_id AND m.role IN ('owner', 'admin'))`;

/** Whether whoever sent the invitation is still the team's owner or an admin. */
export function stillBacked(invitations: Repository<TeamInvitation>, id: number): Promise<boolean> {
  return invitations
    .createQueryBuilder('i')
    .where('i.id = :id', { id })
    .andWhere(senderMayInvite())
    .getExists();
}

/** Waiting for an answer and not expired at `now`. */
export function isOpen(invitation: TeamInvitation, now: Date): boolean {
  return invitation.status === 'pending' && invitation.expiresAt > now;
}
