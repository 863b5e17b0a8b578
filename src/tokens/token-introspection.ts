import { Injectable } from '@nestjs/common';
import { bearerRefusal } from '../auth/bearer-refusal.js';
import { Clock } from '../clock/clock.js';
import { ValidationError, type DomainError } from '../common/errors/domain.error.js';
import {
  NotTeamManagerError,
  ServiceAccountNotAllowedError,
  TeamNotFoundError,
} from '../teams/teams.errors.js';
import { AbilityCatalog } from '../config/abilities.config.js';
import type { AccountType } from '../users/user.view.js';
import { TokenAuthenticator, type ClientInfo, type TokenPrincipal } from './token-authenticator.js';
import { TokenUsageRecorder } from './token-usage-recorder.js';

/** Why the API would refuse a checked token: one of its own 403 codes, and its words. */
export interface IntrospectionRefusal {
  code: string;
  message: string;
}

/**
 * RFC 7662's answer, with Tessera's own members. An inactive token gets `active: false` alone,
 * unless it acts in the caller's team and that team refuses it (`refusal` says why); nothing
 * else ever says whether a token exists.
 */
export interface IntrospectionAnswer {
  active: boolean;
  /** The abilities it may use in the team now, space-separated (OAuth's `scope`). */
  scope?: string;
  token_type?: 'bearer';
  /** When it stops working, in seconds since 1970; absent for a token that never expires. */
  exp?: number;
  /** When its current value was made (created, or last regenerated), in seconds since 1970. */
  iat?: number;
  /** Its account's id, as text. */
  sub?: string;
  /** Its account's address. */
  username?: string;
  token_id?: number;
  user?: { id: number; name: string; type: AccountType };
  team?: { id: number; name: string; slug: string };
  binding?: 'current' | 'pinned';
  /** The abilities it holds that the deployment offers (`scope`: those the team allows). */
  abilities?: string[];
  /** Null when the API would let it act (and do what `required_abilities` asks), else why not. */
  refusal?: IntrospectionRefusal | null;
}

const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/**
 * Token introspection (RFC 7662) for the services of a team: whether a token presented to one
 * of them is active in the team the calling token acts in, whose it is and what it may do,
 * decided by the same query and the same rules as the API's own requests, so a revocation, an
 * expiry or a policy change shows on the very next check on every instance. A token acting in
 * another team is as inactive as an unknown one.
 */
@Injectable()
export class TokenIntrospection {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly usage: TokenUsageRecorder,
    private readonly catalog: AbilityCatalog,
    private readonly clock: Clock,
  ) {}

  /**
   * `caller`: the calling token, accepted in its team (the API's guard saw to it). `required`:
   * abilities the service needs the token to have, each answered as the API would refuse it
   * (the team's refusal first, then `insufficient_scope`, then `ability_not_allowed_by_team`).
   * A check of a token active in the team counts as a use of it; each check counts towards the
   * caller's audit event of the minute.
   */
  async introspect(
    caller: TokenPrincipal,
    presented: string,
    required: readonly string[],
    client: ClientInfo,
  ): Promise<IntrospectionAnswer> {
    const unknown = this.catalog.retired(required);
    if (unknown.length > 0) {
      throw new ValidationError({
        required_abilities: `This deployment offers no ability ${unknown.map((a) => `"${a}"`).join(', ')}.`,
      });
    }
    // A token that acts in no team (its current team gone) has no team's tokens to check.
    const teamId = caller.team?.id;
    if (teamId === undefined) throw new TeamNotFoundError();
    const checked = await this.authenticator.inspect(presented);
    const answer = this.answerFor(caller, checked, required);
    if (answer.active) this.authenticator.recordCheck(checked!);
    this.usage.recordIntrospection({
      callerTokenId: caller.tokenId,
      callerUserId: caller.user.id,
      teamId,
      outcome: !answer.active ? 'inactive' : answer.refusal ? 'refused' : 'active',
      at: this.clock.nowMs(),
      ip: client.ip,
      userAgent: client.userAgent,
    });
    return answer;
  }

  private answerFor(
    caller: TokenPrincipal,
    checked: TokenPrincipal | null,
    required: readonly string[],
  ): IntrospectionAnswer {
    if (!checked || !checked.team || checked.team.id !== caller.team?.id) return { active: false };
    if (checked.teamRefusal) {
      return { active: false, refusal: refusalOf(checked.teamRefusal) };
    }
    const refused =
      required.map((ability) => bearerRefusal(checked, ability)).find((r) => r !== null) ??
      this.roleRefusal(checked, required);
    const abilities = this.catalog.offered(checked.abilities);
    const allowed = checked.team.policy.allowedAbilities;
    return {
      active: true,
      scope: abilities
        .filter((a) => (!allowed || allowed.includes(a)) && !this.roleRefusal(checked, [a]))
        .join(' '),
      token_type: 'bearer',
      ...lifetimeOf(checked),
      sub: String(checked.user.id),
      username: checked.user.email,
      token_id: checked.tokenId,
      user: {
        id: checked.user.id,
        name: checked.user.name,
        type: checked.user.serviceAccount ? 'service_account' : 'person',
      },
      team: { id: checked.team.id, name: checked.team.name, slug: checked.team.slug },
      binding: checked.binding,
      abilities,
      refusal: refused ? refusalOf(refused) : null,
    };
  }

  /**
   * What the team's endpoints refuse the token for its account's place in the team, as the API
   * would: a service account is no member (what only members reach), and a plain member is no
   * owner or admin (what only they reach).
   */
  private roleRefusal(checked: TokenPrincipal, required: readonly string[]): DomainError | null {
    if (checked.user.serviceAccount && this.catalog.membersOnly(required).length > 0) {
      return new ServiceAccountNotAllowedError();
    }
    if (checked.team?.role === 'member' && this.catalog.managersOnly(required).length > 0) {
      return new NotTeamManagerError();
    }
    return null;
  }
}

function refusalOf(error: { code: string; message: string }): IntrospectionRefusal {
  return { code: error.code, message: error.message };
}

/**
 * When the presented value stops working and when it was made. A value replaced by a
 * regeneration works until its grace period ends (or the token's own expiry, when sooner): that
 * is its `exp`, so that a client keeping the answer until then stops in time. When it was made
 * is not kept once it is replaced, so it has no `iat`.
 */
function lifetimeOf(checked: TokenPrincipal): { exp?: number; iat?: number } {
  if (checked.previousValue) {
    const ends = [checked.previousValidUntil, checked.expiresAt].filter((d) => d !== null);
    return { exp: seconds(new Date(Math.min(...ends.map((d) => d.getTime())))) };
  }
  return {
    ...(checked.expiresAt ? { exp: seconds(checked.expiresAt) } : {}),
    iat: seconds(checked.regeneratedAt ?? checked.createdAt),
  };
}
