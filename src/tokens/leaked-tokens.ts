import { Injectable } from '@nestjs/common';
import { Brackets, In, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import type { Actor } from '../common/actor.js';
import { Clock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { TokenNotices } from './token-notices.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { hashToken, isWellFormedToken } from './token-format.js';

/** A string a secret scanner found in public, and where (an address, when it said). */
export interface ReportedToken {
  token: string;
  foundAt: string | null;
}

/**
 * `true_positive`: the string is one of Tessera's tokens (its value now, or the one its last
 * regeneration replaced), whether or not it still worked; `false_positive` otherwise.
 */
export type ReportLabel = 'true_positive' | 'false_positive';

type Match = Pick<
  PersonalAccessToken,
  'id' | 'userId' | 'name' | 'tokenHash' | 'previousTokenHash'
>;

/**
 * Tokens found in public: each one that still works is revoked at once, its person is mailed
 * where it was found, and the security log says so. Strings that are not well formed (the
 * prefix, the length, the checksum) are false positives without a query.
 */
@Injectable()
export class LeakedTokens {
  constructor(
    private readonly transactions: Transactions,
    private readonly notices: TokenNotices,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** One label per report, in its order; a token reported twice is revoked (and mailed) once. */
  async revokeReported(actor: Actor, reports: readonly ReportedToken[]): Promise<ReportLabel[]> {
    const hashes = reports.map((r) => (isWellFormedToken(r.token) ? hashToken(r.token) : null));
    const wanted = [...new Set(hashes.filter((h): h is string => h !== null))];
    if (wanted.length === 0) return reports.map(() => 'false_positive');
    const found = await this.transactions.run(async (m) => {
      const matches = await this.findByEitherValue(m, wanted);
      const byHash = new Map<string, Match>();
      for (const match of matches) {
        byHash.set(match.tokenHash, match);
        if (match.previousTokenHash) byHash.set(match.previousTokenHash, match);
      }
      const now = this.clock.now();
      // In id order, so two reports naming the same tokens lock their rows in the same order.
      const leaked = wanted
        .filter((hash) => byHash.has(hash))
        .sort((a, b) => byHash.get(a)!.id - byHash.get(b)!.id);
      for (const hash of leaked) {
        const foundAt = reports.find((r, i) => hashes[i] === hash && r.foundAt)?.foundAt ?? null;
        await this.revokeIfWorking(m, actor, byHash.get(hash)!, hash, foundAt, now);
      }
      return new Set(leaked);
    });
    return hashes.map((h) => (h !== null && found.has(h) ? 'true_positive' : 'false_positive'));
  }

  /** The tokens whose value now, or whose value before the last regeneration, is among `hashes`. */
  private findByEitherValue(m: EntityManager, hashes: string[]): Promise<Match[]> {
    return m.getRepository(PersonalAccessToken).find({
      select: { id: true, userId: true, name: true, tokenHash: true, previousTokenHash: true },
      where: [{ tokenHash: In(hashes) }, { previousTokenHash: In(hashes) }],
    });
  }

  /**
   * Revokes the token only if the leaked value works now (unrevoked, unexpired, and the current
   * value or the replaced one within its grace period), in one conditional UPDATE: of reports
   * arriving together, the one whose UPDATE changed the row mails the person and logs it.
   */
  private async revokeIfWorking(
    m: EntityManager,
    actor: Actor,
    token: Match,
    hash: string,
    foundAt: string | null,
    now: Date,
  ): Promise<void> {
    const result = await m
      .getRepository(PersonalAccessToken)
      .createQueryBuilder()
      .update()
      .set({ revokedAt: now })
      .where('id = :id AND revoked_at IS NULL', { id: token.id })
      .andWhere('(expires_at IS NULL OR expires_at > :now)', { now })
      .andWhere(
        new Brackets((q) =>
          q
            .where('token_hash = :hash', { hash })
            .orWhere('(previous_token_hash = :hash AND previous_valid_until > :now)', {
              hash,
              now,
            }),
        ),
      )
      .execute();
    if (result.affected !== 1) return;
    // Its person, or for a service account's token, its team's owners and admins.
    const account = await this.notices.send(
      m,
      token.userId,
      'token-leaked',
      token.name,
      foundAt ?? undefined,
    );
    this.audit.recordIn(m, actor, {
      event: 'token.revoked',
      userId: token.userId,
      teamId: account?.teamId,
      tokenId: token.id,
      target: { type: 'token', id: token.id },
      detail: { name: token.name, reason: 'leaked', found_at: foundAt },
    });
  }
}
