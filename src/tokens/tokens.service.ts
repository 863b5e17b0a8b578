import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { accountOf, knownOf, type Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { AbilityCatalog, type AbilityDefinition } from '../config/abilities.config.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import type { Ability } from './abilities.js';
import type { CreateTokenDto } from './dto/create-token.dto.js';
import { generateToken } from './token-format.js';
import { resolveExpiry, TokenLifetimes, type LifetimeLimit } from './token-lifetimes.js';
import { TokenNotices } from './token-notices.js';
import {
  toTokenView,
  withTeam,
  type OwnToken,
  type OwnTokenView,
  type TokenView,
} from './token.view.js';
import { AmbiguousTokenNameError, TokenNotFoundError, TokenRevokedError } from './tokens.errors.js';
import { TokensRepository, type GoverningTeam } from './tokens.repository.js';

/** The account an actor acts on, when it acts on one (not the operator at large). */
const accountOrNull = (actor: Actor): number | null =>
  actor.kind === 'person' || actor.kind === 'token' ? actor.userId : null;

export interface CreatedToken {
  token: TokenView;
  /** The only time the token itself exists outside the client: show it once, store it nowhere. */
  plaintext: string;
}

export interface RevokedToken {
  token: TokenView;
  alreadyRevoked: boolean;
}

/** A person's tokens: those that work, and those revoked or expired (until pruned). */
export interface TokenLists {
  active: OwnTokenView[];
  history: OwnTokenView[];
}

/**
 * The abilities a new or edited token gets: those asked for, in the catalog's order, or the
 * catalog's defaults when none are named. A name the catalog does not offer is refused.
 */
export function chooseAbilities(catalog: AbilityCatalog, asked: readonly string[] | undefined) {
  if (asked === undefined) return catalog.defaults();
  const unknown = catalog.retired(asked);
  if (unknown.length > 0) {
    throw new ValidationError({
      abilities: `This deployment offers no ability ${unknown.map((a) => `"${a}"`).join(', ')}; it offers ${catalog.names().join(', ')}.`,
    });
  }
  return catalog.offered(asked);
}

const PRUNE_BATCH = 1000;

@Injectable()
export class TokensService {
  constructor(
    private readonly audit: AuditLog,
    private readonly tokens: TokensRepository,
    private readonly transactions: Transactions,
    private readonly verification: EmailVerificationService,
    private readonly notices: TokenNotices,
    private readonly clock: Clock,
    private readonly lifetimes: TokenLifetimes,
    private readonly catalog: AbilityCatalog,
  ) {}

  /**
   * Refused while the owner's address is unconfirmed (with EMAIL_VERIFICATION=required), and
   * with a lifetime longer than the team it will act in (pinned, or the current team) or the
   * deployment allows. The owner is told by mail, in the same transaction.
   */
  async create(actor: Actor, input: CreateTokenDto): Promise<CreatedToken> {
    const userId = accountOf(actor);
    await this.verification.assertConfirmed(actor);
    const { pinnedTo, limit } = await this.lifetimes.forNewToken(
      userId,
      input.teamId,
      knownOf(actor),
    );
    return this.issue(actor, { userId, pinnedTo, limit }, input);
  }

  /**
   * A token of a team's service account, made by one of the team's owners and admins (the
   * actor, recorded as its maker): always pinned to the team, held to the team's policy and the
   * deployment's as any token acting there. `decide` runs first in the creating transaction:
   * the check of the maker's role, certified by a write (see TeamsRepository.certifyRole).
   * The team's owners and admins are told by mail; the event is in the team's audit log.
   */
  createForServiceAccount(
    actor: Actor,
    account: { id: number; name: string },
    team: GoverningTeam,
    input: Omit<CreateTokenDto, 'teamId'>,
    decide: (manager: EntityManager) => Promise<void>,
  ): Promise<CreatedToken> {
    const limit = this.lifetimes.limitIn(team);
    return this.issue(
      actor,
      { userId: account.id, pinnedTo: team, limit, serviceAccount: account.name, decide },
      input,
    );
  }

  /** Makes the token, for its own account or (`serviceAccount`) a team's service account. */
  private async issue(
    actor: Actor,
    owner: {
      userId: number;
      pinnedTo: GoverningTeam | null;
      limit: LifetimeLimit;
      serviceAccount?: string;
      decide?: (manager: EntityManager) => Promise<void>;
    },
    input: Omit<CreateTokenDto, 'teamId'>,
  ): Promise<CreatedToken> {
    const { userId, pinnedTo: team, limit } = owner;
    const now = this.clock.nowMs();
    const { expiresAt, days } = resolveExpiry(input, limit, now);
    const generated = generateToken();
    const abilities = chooseAbilities(this.catalog, input.abilities);
    refuseDisallowed(team, abilities);
    const membersOnly =
      owner.serviceAccount === undefined ? [] : this.catalog.membersOnly(abilities);
    if (membersOnly.length > 0) {
      throw new ValidationError({
        abilities: `A service account is not a member of its team: its tokens cannot have ${membersOnly.map((a) => `"${a}"`).join(', ')}.`,
      });
    }
    const maker = owner.serviceAccount === undefined ? null : accountOrNull(actor);
    const row = {
      userId,
      name: input.name,
      tokenHash: generated.hash,
      lastFour: generated.lastFour,
      abilities,
      expiresAt,
      lifetimeDays: days,
      // The app's time, as its expiry is: the reminders measure the lifetime between the two.
      createdAt: new Date(now),
      ...(maker === null ? {} : { createdById: maker }),
    };
    const saved = await this.transactions.run(async (m) => {
      await owner.decide?.(m);
      const inserted = await this.tokens.insert(m, row);
      if (team) await this.tokens.insertPin(m, inserted.id, team.id);
      // The signed-in person's own token: their address is known, and they are no service account.
      const known = owner.serviceAccount === undefined ? knownOf(actor) : undefined;
      if (known && accountOf(actor) === userId) {
        await this.notices.send(m, userId, 'token-created', input.name, undefined, known.email);
      } else {
        await this.notices.send(m, userId, 'token-created', input.name);
      }
      this.audit.recordIn(m, actor, {
        event: 'token.created',
        userId,
        // A service account's tokens are its team's business: in the team's audit log too.
        ...(owner.serviceAccount === undefined ? {} : { teamId: team!.id }),
        tokenId: inserted.id,
        target: { type: 'token', id: inserted.id },
        detail: {
          name: input.name,
          abilities: abilities.join(' '),
          expires_at: expiresAt ? expiresAt.toISOString() : null,
          ...(team ? { pinned_to: team.name } : {}),
          ...(owner.serviceAccount === undefined ? {} : { service_account: owner.serviceAccount }),
        },
      });
      return inserted;
    });
    return { token: toTokenView(saved, this.clock.now()), plaintext: generated.plaintext };
  }

  async listActive(actor: Actor): Promise<TokenView[]> {
    return (await this.list(actor)).active;
  }

  /**
   * Active tokens newest first, each with the team it acts in and whether that team refuses
   * it; revoked and expired ones, the latest to stop working first.
   */
  async list(actor: Actor): Promise<TokenLists> {
    const now = this.clock.now();
    const userId = accountOf(actor);
    const { tokens, pins } = await this.tokens.findAllForOwnerWithPins(userId);
    const governance = await this.tokens.findGovernance(userId, knownOf(actor), pins);
    const all = tokens.map((t) => withTeam(toTokenView(t, now), t, governance));
    const history = all.filter((t) => t.status !== 'active');
    history.sort((a, b) => b.endedAt!.getTime() - a.endedAt!.getTime() || b.id - a.id);
    return { active: all.filter((t) => t.status === 'active'), history };
  }

  /**
   * The abilities the new-token form offers: those of the catalog that the person's current
   * team allows tokens (all of them when its policy sets no limit), and that team's name when
   * it limits them.
   */
  async offeredAbilities(
    actor: Actor,
  ): Promise<{ abilities: AbilityDefinition[]; limitedBy: string | null }> {
    const currentTeam = await this.tokens.findCurrentTeamOf(accountOf(actor), knownOf(actor));
    const allowed = currentTeam?.policy.allowedAbilities ?? null;
    return {
      abilities: this.catalog.allowedBy(allowed),
      limitedBy: allowed ? currentTeam!.name : null,
    };
  }

  /**
   * One of the person's tokens with what decides the team it acts in: for a page's person, in
   * one query (`findOwnWithGovernance`); refused as not found when it is not theirs.
   */
  async ownToken(actor: Actor, tokenId: number): Promise<OwnToken> {
    const userId = accountOf(actor);
    const known = knownOf(actor);
    const [token, governance] = known
      ? await this.tokens
          .findOwnWithGovernance(userId, tokenId, known)
          .then((found) => [found?.token ?? null, found?.governance] as const)
      : await Promise.all([
          this.tokens.findForOwner(userId, tokenId),
          this.tokens.findGovernance(userId),
        ]);
    if (!token || !governance) throw new TokenNotFoundError();
    return { token, governance };
  }

  /** One of the user's tokens; another user's token id is "not found". */
  async get(actor: Actor, tokenId: number): Promise<TokenView> {
    const token = await this.tokens.findForOwner(accountOf(actor), tokenId);
    if (!token) throw new TokenNotFoundError();
    return toTokenView(token, this.clock.now());
  }

  /** Renames a token or changes its abilities; its value stays the same. */
  async update(
    actor: Actor,
    tokenId: number,
    details: { name: string; abilities: Ability[] },
  ): Promise<TokenView> {
    const userId = accountOf(actor);
    const abilities = chooseAbilities(this.catalog, details.abilities);
    const pin = await this.tokens.findPin(userId, tokenId);
    return this.transactions.run(async (m) => {
      const token = await this.tokens.findForOwner(userId, tokenId, m);
      if (!token) throw new TokenNotFoundError();
      if (token.revokedAt) throw new TokenRevokedError();
      // Those it held before the team's policy limited them stay (a rename keeps them).
      refuseDisallowed(
        pin?.team ?? null,
        abilities.filter((a) => !token.abilities.includes(a)),
      );
      // Revoked since it was read: nothing changes, and nothing is recorded.
      if (!(await this.tokens.updateDetails(m, userId, tokenId, { name: details.name, abilities })))
        throw new TokenRevokedError();
      this.audit.recordIn(m, actor, {
        event: 'token.updated',
        userId,
        tokenId,
        target: { type: 'token', id: tokenId },
        detail: {
          name: details.name,
          ...(details.name !== token.name ? { previous_name: token.name } : {}),
          abilities: abilities.join(' '),
        },
      });
      return toTokenView({ ...token, name: details.name, abilities }, this.clock.now());
    });
  }

  /**
   * Revokes one of the user's own tokens; another user's token id is "not found". Revoking
   * twice keeps the first time and says so.
   */
  async revoke(actor: Actor, tokenId: number): Promise<RevokedToken> {
    const userId = accountOf(actor);
    const token = await this.tokens.findForOwner(userId, tokenId);
    if (!token) throw new TokenNotFoundError();
    if (token.revokedAt !== null) {
      return { token: toTokenView(token, this.clock.now()), alreadyRevoked: true };
    }
    const at = this.clock.now();
    const revoked = await this.transactions.run(async (m) => {
      if (!(await this.tokens.revokeForOwner(m, userId, tokenId, at))) return false;
      this.audit.recordIn(m, actor, {
        event: 'token.revoked',
        userId,
        tokenId,
        target: { type: 'token', id: tokenId },
        detail: { name: token.name },
      });
      return true;
    });
    // Of two revocations at once, the one that revoked it records it; the other says so.
    const current = revoked
      ? { ...token, revokedAt: at }
      : await this.tokens.findForOwner(userId, tokenId);
    if (!current) throw new TokenNotFoundError();
    return { token: toTokenView(current, this.clock.now()), alreadyRevoked: !revoked };
  }

  /**
   * Deletes tokens that were revoked, or that expired, more than `olderThanDays` days ago, in
   * batches so no statement holds the table for long; returns how many went. Tokens still in
   * use are never touched: only revoked and expired ones are refused anyway. Their usage goes
   * with them (ON DELETE CASCADE).
   */
  async pruneDead(olderThanDays: number): Promise<{ deleted: number; before: Date }> {
    const before = new Date(this.clock.nowMs() - olderThanDays * 86_400_000);
    let deleted = 0;
    for (;;) {
      const ids = await this.tokens.findDeadIds(before, PRUNE_BATCH);
      if (ids.length === 0) return { deleted, before };
      deleted += await this.transactions.run((m) => this.tokens.deleteByIds(m, ids));
    }
  }

  async revokeByName(actor: Actor, name: string): Promise<RevokedToken> {
    const matches = await this.tokens.findUnrevokedForOwnerByName(accountOf(actor), name);
    if (matches.length === 0) throw new TokenNotFoundError();
    if (matches.length > 1)
      throw new AmbiguousTokenNameError(
        name,
        matches.map((t) => t.id),
      );
    return this.revoke(actor, matches[0].id);
  }
}

/** A token pinned to a team that limits abilities gets none it would be refused for there. */
function refuseDisallowed(team: GoverningTeam | null, abilities: readonly string[]): void {
  const refused = abilities.filter((a) => team?.policy.allowedAbilities?.includes(a) === false);
  if (refused.length > 0) {
    throw new ValidationError({
      abilities: `${team!.name} does not allow tokens ${refused.map((a) => `"${a}"`).join(', ')}.`,
    });
  }
}
