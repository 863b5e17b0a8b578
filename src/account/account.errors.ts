import { DomainError } from '../common/errors/domain.error.js';

/** Deleting the account would leave teams without an owner. */
export class OwnsSharedTeamsError extends DomainError {
  readonly code = 'owns_shared_teams';
  readonly status = 409;
  constructor(teams: string[]) {
    super(
      `You own ${teams.length === 1 ? 'the team' : 'the teams'} ${teams.join(', ')}, which ${teams.length === 1 ? 'has' : 'have'} other members. Transfer ${teams.length === 1 ? 'it' : 'them'} to another member or delete ${teams.length === 1 ? 'it' : 'them'} first, then delete your account.`,
    );
  }
}
