import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../common/errors/domain.error.js';

export class TeamNotFoundError extends NotFoundError {
  constructor() {
    super('team');
  }
}

/** The acting user is not in the team; shown as "not found" so team ids reveal nothing. */
export class NotTeamMemberError extends TeamNotFoundError {}

/**
 * A service account's token asked for what only a member may see or do: the account belongs to
 * its team (so the team is no secret to it) but is never one of its members.
 */
export class ServiceAccountNotAllowedError extends ForbiddenError {
  constructor() {
    super(
      "A service account is not a member of its team: its tokens read the team and check tokens, not the team's members, invitations, token inventory or audit log.",
    );
  }
}

export class NotTeamManagerError extends ForbiddenError {
  constructor() {
    super('Only the team owner or an admin can do that.');
  }
}

export class OwnerOnlyError extends ForbiddenError {
  constructor(action: string) {
    super(`Only the team owner can ${action}.`);
  }
}

export class OwnerRoleError extends ConflictError {
  constructor() {
    super(
      'owner_role',
      "The owner's role changes only when the owner transfers the team to someone else.",
    );
  }
}

export class AlreadyMemberError extends ConflictError {
  constructor() {
    super('already_member', 'That user is already a member of this team.', 'email');
  }
}

export class PersonalTeamError extends ConflictError {
  constructor(message = 'A personal team cannot be left or given other members.') {
    super('personal_team', message);
  }
}

export class MemberNotFoundError extends NotFoundError {
  constructor() {
    super('member');
  }
}

export class OwnerCannotLeaveError extends ConflictError {
  constructor() {
    super('owner_cannot_leave', 'The owner of a team cannot be removed from it.');
  }
}

/** A service account belongs to its team without being a member of any: never added, never joins. */
export class ServiceAccountNotMemberError extends ValidationError {
  constructor() {
    super({ email: 'That is a service account: it is never a member of a team.' });
  }
}
