import { accountOf, type Actor } from '../common/actor.js';
import { Injectable } from '@nestjs/common';
import type { Ability } from './abilities.js';
import { AbilityCatalog } from '../config/abilities.config.js';
import { describeClient } from './client-description.js';
import { MAX_ADDRESSES_PER_TOKEN, utcDay } from './token-usage-recorder.js';
import { TokenUsageRepository } from './token-usage.repository.js';
import { toTokenView, type TokenView } from './token.view.js';
import { TokenNotFoundError } from './tokens.errors.js';
import { TokensRepository } from './tokens.repository.js';
import { usageChart } from './usage-chart.js';
import { Clock } from '../clock/clock.js';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { AuditService } from '../audit/audit.service.js';
import type { PersonalAccessToken } from './personal-access-token.entity.js';

const DAY_MS = 86_400_000;
/** The days the token page counts requests for: today (UTC) and the 29 before. */
export const USAGE_DAYS_SHOWN = 30;
/** Bars are drawn in this many steps (a class each: the pages allow no inline style). */
const BAR_STEPS = 20;

export interface AddressView {
  ip: string;
  lastUsedAt: Date;
  client: string;
}

export interface DayView {
  day: string;
  requests: number;
  /** The bar's length, 0 to BAR_STEPS, relative to the busiest day shown. */
  bar: number;
}

/** Everything the token page shows of one token. */
export interface TokenDetails {
  token: TokenView;
  /** Its abilities; one the catalog no longer offers is marked, and grants nothing. */
  abilities: { name: Ability; description: string; noLongerOffered: boolean }[];
  /** The latest use that was written: its time, and the address and client it came from. */
  lastUse: { at: Date; ip: string | null; client: string | null } | null;
  addresses: AddressView[];
  days: DayView[];
  totalRequests: number;
  /** The days' requests as an SVG bar chart (usage-chart.ts), for the page to embed. */
  usageChart: string;
  /** Since when and why the API refuses it: revoked (by whom) or expired; null while it works. */
  refused: { since: Date; why: string } | null;
  /** The value the last regeneration replaced: until when it works and how much it was used. */
  previousValue: {
    validUntil: Date;
    stillValid: boolean;
    requests: number;
    lastUsedAt: Date | null;
  } | null;
}

/** The token page's view of one token and its usage; only the owner's tokens are found. */
@Injectable()
export class TokenDetailsService {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly usage: TokenUsageRepository,
    private readonly clock: Clock,
    private readonly catalog: AbilityCatalog,
    private readonly audit: AuditService,
  ) {}

  /** `read`: the token when the caller has read it already (as its page has). */
  async get(actor: Actor, tokenId: number, read?: PersonalAccessToken): Promise<TokenDetails> {
    const userId = accountOf(actor);
    const now = this.clock.nowMs();
    const token = read ?? (await this.tokens.findForOwner(userId, tokenId));
    if (!token) throw new TokenNotFoundError();
    const since = utcDay(now - (USAGE_DAYS_SHOWN - 1) * DAY_MS);
    const [addresses, counts] = await Promise.all([
      this.usage.findAddressesForOwner(userId, tokenId, MAX_ADDRESSES_PER_TOKEN),
      this.usage.findDailyForOwner(userId, tokenId, since),
    ]);
    const seen = addresses.map((a) => ({
      ip: a.ip,
      lastUsedAt: a.lastUsedAt,
      client: describeClient(a.userAgent),
    }));
    const latest = token.lastUsedAt ?? seen[0]?.lastUsedAt ?? null;
    const days = lastDays(new Map(counts.map((c) => [c.day, c.requests])), now);
    const view = toTokenView(token, new Date(now));
    const revocation = token.revokedAt
      ? await this.audit.latestAboutToken(actor, tokenId, 'token.revoked')
      : null;
    return {
      token: view,
      refused: view.endedAt && {
        since: view.endedAt,
        why: token.revokedAt ? whyRevoked(revocation, userId) : 'Its lifetime ended.',
      },
      abilities: token.abilities.map((name) => {
        const offered = this.catalog.get(name);
        return {
          name,
          description: offered?.description ?? 'No longer offered: it grants nothing.',
          noLongerOffered: !offered,
        };
      }),
      lastUse: latest && { at: latest, ip: seen[0]?.ip ?? null, client: seen[0]?.client ?? null },
      addresses: seen,
      days,
      totalRequests: days.reduce((sum, d) => sum + d.requests, 0),
      usageChart: usageChart(days),
      previousValue: token.previousValidUntil && {
        validUntil: previousRefusedFrom(token),
        stillValid: previousRefusedFrom(token).getTime() > now,
        requests: token.previousRequests,
        lastUsedAt: token.previousLastUsedAt,
      },
    };
  }
}

/** Why a token was revoked, from the security log's record of it (kept for a while). */
function whyRevoked(event: AuditEvent | null, userId: number): string {
  const detail = event?.detail ? (JSON.parse(event.detail) as Record<string, unknown>) : {};
  if (detail.reason === 'leaked') {
    return 'It was found published where others could read it, so Tessera revoked it.';
  }
  if (typeof detail.by_team === 'string') {
    return `An owner or admin of ${detail.by_team} revoked it.`;
  }
  if (event?.actorKind === 'operator') return 'An operator revoked it.';
  if (event && event.actorUserId === userId) return 'You revoked it.';
  return 'It was revoked.';
}

/**
 * When a regenerated token's old value is refused from: the end of its grace period, or the
 * token's revocation or expiry when that came first (the API refuses it then).
 */
function previousRefusedFrom(token: PersonalAccessToken): Date {
  const ends = [token.previousValidUntil, token.revokedAt, token.expiresAt].filter(
    (at): at is Date => at instanceof Date,
  );
  return ends.reduce((first, at) => (at.getTime() < first.getTime() ? at : first));
}

/** The last USAGE_DAYS_SHOWN days, newest first, each with its count (0 when none). */
function lastDays(counts: Map<string, number>, now: number): DayView[] {
  const days = Array.from({ length: USAGE_DAYS_SHOWN }, (_, i) => {
    const day = utcDay(now - i * DAY_MS);
    return { day, requests: counts.get(day) ?? 0 };
  });
  const busiest = Math.max(1, ...days.map((d) => d.requests));
  return days.map((d) => ({
    ...d,
    bar: d.requests === 0 ? 0 : Math.max(1, Math.round((d.requests / busiest) * BAR_STEPS)),
  }));
}
