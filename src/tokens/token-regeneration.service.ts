import { Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { accountOf, type Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { Transactions } from '../database/transactions.js';
import { exceedsMaxLifetime } from './team-policy.js';
import { generateToken } from './token-format.js';
import {
  EXPIRY_DAY_CHOICES,
  expiryAfter,
  keptLifetimeDays,
  lifetimeRefusal,
  TokenLifetimes,
} from './token-lifetimes.js';
import {
  actingTeamOf,
  toTokenView,
  valueVersionOf,
  withTeam,
  type OwnToken,
  type OwnTokenView,
} from './token.view.js';
import { TokenChangedError, TokenNotFoundError, TokenRevokedError } from './tokens.errors.js';
import { TokensRepository } from './tokens.repository.js';
import type { CreatedToken } from './tokens.service.js';

const MINUTE_MS = 60_000;

/** Where a token acts and what regenerating it may set its lifetime to (the token page). */
export interface LifetimeChoices extends Pick<OwnTokenView, 'binding' | 'teamName' | 'refusal'> {
  choices: { value: string; label: string }[];
  defaultChoice: string;
  /** The team whose maximum limits the choices, if one does. */
  limitedBy: string | null;
}

/**
 * A person's token given a new value, and the lifetimes it may be given then (the token's page):
 * its name, abilities and pin stay; the value it replaces works on for a grace period at most.
 */
@Injectable()
export class TokenRegenerationService {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly lifetimes: TokenLifetimes,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /**
   * The lifetimes regenerating `own` may give it: the one it has (counted again from now), or a
   * number of days, or none; only those the team it acts in and the deployment allow.
   */
  lifetimeChoicesOf({ token, governance }: OwnToken): LifetimeChoices {
    const team = actingTeamOf(token.id, governance);
    const max = this.lifetimes.limitIn(team).maxDays;
    const current = token.lifetimeDays;
    const choices: { value: string; label: string }[] = [];
    if (!exceedsMaxLifetime(current, max)) {
      choices.push({
        value: 'same',
        label: current === null ? 'As now: never expires' : `As now: ${current} days`,
      });
    }
    for (const days of EXPIRY_DAY_CHOICES) {
      if (max === null || days <= max) choices.push({ value: String(days), label: `${days} days` });
    }
    if (max === null) choices.push({ value: 'none', label: 'Never expires (not recommended)' });
    const standing = withTeam(toTokenView(token, this.clock.now()), token, governance);
    return {
      binding: standing.binding,
      teamName: standing.teamName,
      refusal: standing.refusal,
      choices,
      defaultChoice: choices[0]?.value === 'same' ? 'same' : (choices.at(-1)?.value ?? 'same'),
      limitedBy: team?.policy.tokenMaxLifetimeDays != null ? team.name : null,
    };
  }

  /**
   * Gives the token a new value, in one transaction: the same name and abilities, the same
   * lifetime counted from now. The value it replaces keeps working for `graceMinutes` (none by
   * default: refused from the next request), then is refused as revoked. A value replaced
   * earlier stops working at once: there are never more than two. A lifetime asked for
   * (`lifetimeDays`, null for none) is refused past what the team it acts in and the deployment
   * allow, as creation refuses it; the kept one is cut to that.
   */
  async regenerate(
    actor: Actor,
    tokenId: number,
    graceMinutes = 0,
    version?: number,
    lifetimeDays?: number | null,
  ): Promise<CreatedToken> {
    const userId = accountOf(actor);
    const generated = generateToken();
    // The team it acts in (pinned, or the current team) caps its lifetime as the deployment does.
    const limit = await this.lifetimes.forToken(userId, tokenId);
    const refusal = lifetimeDays === undefined ? null : lifetimeRefusal(lifetimeDays, limit);
    if (refusal) throw new ValidationError({ lifetime: refusal });
    return this.transactions.run(async (m) => {
      const token = await this.tokens.findForOwner(userId, tokenId, m);
      if (!token) throw new TokenNotFoundError();
      if (token.revokedAt) throw new TokenRevokedError();
      // Asked for another value than the token has now: it was regenerated meanwhile.
      if (version !== undefined && version !== valueVersionOf(token)) throw new TokenChangedError();
      const now = this.clock.nowMs();
      // A value that no longer works (expired) gets no grace: regenerating must not revive it.
      const grace = token.expiresAt && token.expiresAt.getTime() <= now ? 0 : graceMinutes;
      const days =
        lifetimeDays === undefined
          ? keptLifetimeDays(token.lifetimeDays, limit.maxDays)
          : lifetimeDays;
      const next = {
        tokenHash: generated.hash,
        lastFour: generated.lastFour,
        expiresAt: expiryAfter(days, now),
        lifetimeDays: days,
        previousValidUntil: new Date(now + grace * MINUTE_MS),
        regeneratedAt: new Date(now),
      };
      const replaced = await this.tokens.replaceValue(m, userId, tokenId, token.tokenHash, next);
      if (!replaced) throw new TokenChangedError();
      this.audit.recordIn(m, actor, {
        event: 'token.regenerated',
        userId,
        tokenId,
        target: { type: 'token', id: tokenId },
        detail: { name: token.name, grace_minutes: grace },
      });
      const view = toTokenView(
        { ...token, ...next, previousTokenHash: token.tokenHash },
        new Date(now),
      );
      return { token: view, plaintext: generated.plaintext };
    });
  }
}
