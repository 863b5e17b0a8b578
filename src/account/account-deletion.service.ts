import { Injectable } from '@nestjs/common';
import { AuthService } from '../auth/auth.service.js';
import { Transactions } from '../database/transactions.js';
import { accountOf, type Actor } from '../common/actor.js';
import { UsersRepository } from '../users/users.repository.js';
import { OwnsSharedTeamsError } from './account.errors.js';
import { AccountDeletionRepository } from './account-deletion.repository.js';
import { Clock } from '../clock/clock.js';
import { TeamsService } from '../teams/teams.service.js';

/** A person deleting their own account, and everything that is only theirs. */
@Injectable()
export class AccountDeletionService {
  constructor(
    private readonly auth: AuthService,
    private readonly users: UsersRepository,
    private readonly deletion: AccountDeletionRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly teams: TeamsService,
  ) {}

  /**
   * Always asks for the password (limited as a sign-in is). Refused while the person owns a
   * team with other members; otherwise, in one transaction, every API token is revoked, every
   * session ends, each team they were in says they left (its owner mailed), their memberships
   * go, their own teams are deleted and then the account.
   * A failure part-way rolls all of it back.
   */
  async delete(actor: Actor, password: string): Promise<void> {
    await this.auth.confirmPassword(actor, password);
    const user = { id: accountOf(actor) };
    await this.transactions.run(async (m) => {
      // The user's row lock first: a team created or joined meanwhile waits for the decision.
      await this.users.lockForUpdate(m, user.id);
      const shared = await this.deletion.findOwnedSharedTeams(m, user.id);
      if (shared.length > 0) throw new OwnsSharedTeamsError(shared.map((t) => t.name));
      await this.deletion.revokeTokens(m, user.id, this.clock.now());
      await this.deletion.deleteSessions(m, user.id);
      await this.teams.noteAccountDeleted(m, actor);
      await this.deletion.deleteMemberships(m, user.id);
      await this.deletion.deleteOwnedTeams(m, user.id);
      await this.deletion.deleteUser(m, user.id);
    });
  }
}
