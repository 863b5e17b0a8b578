import { DomainError } from '../common/errors/domain.error.js';

/** Deleting the account would leave teams without an owner. */
export class OwnsSharedTeamsError extends DomainError {
  readonly code = 'owns_shared_teams';
  constructor(teams: string[]) {
    super(
      `You own ${teams.length === 1 ? 'the team' : 'the teams'} ${teams.join(', ')}, which ${teams.length === 1 ? 'has' : 'have'} other members or service accounts. Transfer ${teams.length === 1 ? 'it' : 'them'} to another member or delete ${teams.length === 1 ? 'it' : 'them'} first, then delete your account.`,
    );
  }
}

/** `user:disable` on an account already disabled, or `user:enable` on one that is not. */
export class AccountStateUnchangedError extends DomainError {
  readonly code = 'account_state_unchanged';
  constructor(email: string, disabled: boolean) {
    super(`${email} is ${disabled ? 'already disabled' : 'not disabled'}; nothing was changed.`);
  }
}

/** `user:reset-two-factor` on an account with no second factor to remove. */
export class NoSecondFactorError extends DomainError {
  readonly code = 'no_second_factor';
  constructor(email: string) {
    super(`${email} has neither two-factor sign-in nor a passkey; nothing was changed.`);
  }
}
