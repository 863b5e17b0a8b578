import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { TokensRepository, type ServiceAccountOwner } from './tokens.repository.js';

/** Where a service account's page is. */
export const serviceAccountPath = (teamId: number, accountId: number): string =>
  `/teams/${teamId}/service-accounts/${accountId}`;

/**
 * Mail about a token goes to whoever answers for it: its person, or, for a service account's
 * token, the owners and admins of the account's team (a service account reads no mail; its
 * address is under `.invalid`).
 */
@Injectable()
export class TokenNotices {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly notices: SecurityNotices,
  ) {}

  /**
   * In the caller's transaction: the token named `tokenName` of account `ownerId`. Returns the
   * service account and its team when it is one (for the team's audit log), else null.
   */
  async send(
    manager: EntityManager,
    ownerId: number,
    notice: 'token-created' | 'token-leaked',
    tokenName: string,
    foundAt?: string,
    /** The owner's address, when they are the person signed in (never a service account). */
    personEmail?: string,
  ): Promise<ServiceAccountOwner | null> {
    const account =
      personEmail === undefined
        ? await this.tokens.findServiceAccountOwner(manager, ownerId)
        : null;
    if (!account) {
      await this.notices.send(manager, ownerId, notice, {
        to: personEmail,
        detail: tokenName,
        foundAt,
      });
      return null;
    }
    const about = {
      account: account.accountName,
      team: account.teamName,
      path: serviceAccountPath(account.teamId, account.accountId),
    };
    for (const { id } of await this.tokens.findTeamManagers(manager, account.teamId)) {
      await this.notices.send(manager, id, `service-account-${notice}`, {
        detail: tokenName,
        foundAt,
        about,
      });
    }
    return account;
  }
}
