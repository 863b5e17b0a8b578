import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { ABILITIES, type Ability } from '../common/auth/abilities.js';
import type { CreateTokenDto } from './dto/create-token.dto.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { generateToken, hashToken, isWellFormedToken } from './token-format.js';
import { toTokenView, type TokenView } from './token.view.js';
import {
  AmbiguousTokenNameError,
  AuthenticationError,
  InsufficientScopeError,
  TokenNotFoundError,
} from './tokens.errors.js';
import { TokensRepository, type TokenWithOwner } from './tokens.repository.js';

const DAY_MS = 86_400_000;

export interface CreatedToken {
  token: TokenView;
  /** The only time the token itself exists outside the client: show it once, store it nowhere. */
  plaintext: string;
}

export interface RevokedToken {
  token: TokenView;
  alreadyRevoked: boolean;
}

/** What an authenticated API request acts as: a token, its user and the user's current team. */
export type TokenPrincipal = TokenWithOwner;

const PRUNE_BATCH = 1000;

@Injectable()
export class TokensService {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly transactions: Transactions,
    private readonly lastUsed: LastUsedRecorder,
    private readonly verification: EmailVerificationService,
  ) {}

  /** Refused while the owner's address is unconfirmed (with EMAIL_VERIFICATION=required). */
  async create(userId: number, input: CreateTokenDto): Promise<CreatedToken> {
    await this.verification.assertConfirmed({ userId });
    const generated = generateToken();
    const abilities = ABILITIES.filter((a) => (input.abilities ?? ABILITIES).includes(a));
    const row = {
      userId,
      name: input.name,
      tokenHash: generated.hash,
      lastFour: generated.lastFour,
      abilities,
      expiresAt: input.expiresInDays ? new Date(Date.now() + input.expiresInDays * DAY_MS) : null,
      lastUsedAt: null,
      revokedAt: null,
    };
    const saved = await this.transactions.run((m) => this.tokens.insert(m, row));
    return { token: toTokenView(saved), plaintext: generated.plaintext };
  }

  async listActive(userId: number): Promise<TokenView[]> {
    const now = new Date();
    return (await this.tokens.findUnrevokedForOwner(userId)).map((t) => toTokenView(t, now));
  }

  /**
   * Revokes one of the user's own tokens; another user's token id is "not found". Revoking
   * twice keeps the first time and says so.
   */
  async revoke(userId: number, tokenId: number): Promise<RevokedToken> {
    const token = await this.tokens.findForOwner(userId, tokenId);
    if (!token) throw new TokenNotFoundError();
    const alreadyRevoked = token.revokedAt !== null;
    if (!alreadyRevoked) {
      const at = (token.revokedAt = new Date());
      await this.transactions.run((m) => this.tokens.revokeForOwner(m, userId, tokenId, at));
    }
    return { token: toTokenView(token), alreadyRevoked };
  }

  /**
   * Deletes tokens that were revoked, or that expired, more than `olderThanDays` days ago, in
   * batches so no statement holds the table for long; returns how many went. Tokens still in
   * use are never touched: only revoked and expired ones are refused anyway.
   */
  async pruneDead(
    olderThanDays: number,
    now = new Date(),
  ): Promise<{ deleted: number; before: Date }> {
    const before = new Date(now.getTime() - olderThanDays * 86_400_000);
    let deleted = 0;
    for (;;) {
      const ids = await this.tokens.findDeadIds(before, PRUNE_BATCH);
      if (ids.length === 0) return { deleted, before };
      deleted += await this.transactions.run((m) => this.tokens.deleteByIds(m, ids));
    }
  }

  async revokeByName(userId: number, name: string): Promise<RevokedToken> {
    const matches = await this.tokens.findUnrevokedForOwnerByName(userId, name);
    if (matches.length === 0) throw new TokenNotFoundError();
    if (matches.length > 1)
      throw new AmbiguousTokenNameError(
        name,
        matches.map((t) => t.id),
      );
    return this.revoke(userId, matches[0].id);
  }

  /**
   * Resolves a presented token to its principal. Malformed tokens and bad checksums are refused
   * before any query; a well-formed one costs exactly one indexed query, every time, so a
   * revocation is seen by the very next request on every instance.
   */
  async authenticate(presented: string): Promise<TokenPrincipal> {
    if (!isWellFormedToken(presented)) throw new AuthenticationError('invalid_token');
    const principal = await this.tokens.findWithOwnerByHash(hashToken(presented));
    if (!principal) throw new AuthenticationError('invalid_token');
    if (principal.revokedAt) throw new AuthenticationError('token_revoked');
    const now = Date.now();
    if (principal.expiresAt && principal.expiresAt.getTime() <= now) {
      throw new AuthenticationError('token_expired');
    }
    this.lastUsed.record(principal.tokenId, principal.lastUsedAt, now);
    return principal;
  }

  assertAbility(principal: TokenPrincipal, ability: Ability): void {
    if (!principal.abilities.includes(ability)) throw new InsufficientScopeError(ability);
  }
}
