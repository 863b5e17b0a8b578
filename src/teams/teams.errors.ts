import { ConflictError, ForbiddenError, NotFoundError } from '../common/errors/domain.error.js';

export class TeamNotFoundError extends NotFoundError {
  constructor() {
    super('team');
  }
}

/** The acting user is not in the team; shown as "not found" so team ids reveal nothing. */
export class NotTeamMemberError extends TeamNotFoundError {}

export class NotTeamManagerError extends ForbiddenError {
  constructor() {
    super('Only the team owner or an admin can do that.');
  }
}

export class OwnerOnlyError extends ForbiddenError {
  constructor() {
    super('Only the team owner can remove an admin.');
  }
}

export class AlreadyMemberError extends ConflictError {
  constructor() {
    super('already_member', 'That user is already a member of this team.', 'email');
  }
}

export class PersonalTeamError extends ConflictError {
  constructor() {
    super('personal_team', 'A personal team cannot be left or given other members.');
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
