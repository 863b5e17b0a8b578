import { TEAM_ROLES, type TeamRole } from './team-member.entity.js';

/**
 * Owners remove anyone but themselves and change anyone's role but their own; admins remove
 * members and change members' roles; members do neither. Only the owner acts on an admin, so an
 * admin cannot remove another in two steps (a change to member, then a removal).
 */
export function mayManage(actorRole: TeamRole, targetRole: TeamRole): boolean {
  return (
    targetRole !== 'owner' &&
    (actorRole === 'owner' || (actorRole === 'admin' && targetRole === 'member'))
  );
}

/** The roles a member with `actorRole` manages (see mayManage). */
export function managedRoles(actorRole: TeamRole): TeamRole[] {
  return TEAM_ROLES.filter((role) => mayManage(actorRole, role));
}
