import { Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { accountOf, type Actor } from '../common/actor.js';
import type { KeysetPage } from '../common/keyset-page.js';
import { AbilityCatalog, type AbilityDefinition } from '../config/abilities.config.js';
import { Transactions } from '../database/transactions.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import {
  impactInWords,
  policyImpact,
  type ImpactInWords,
  type PolicyImpact,
} from './policy-impact.js';
import { describeRefusal, teamRefusalsOf, type TeamRefusalCode } from './team-policy.js';
import { TOKEN_PREFIX } from './token-format.js';
import { TokenNotFoundError } from './tokens.errors.js';
import {
  TokensRepository,
  type GoverningTeam,
  type TeamPolicy,
  type TeamRevoker,
  type TeamToken,
} from './tokens.repository.js';

/** A token in a team's inventory: never its value or hash. */
export interface TeamTokenView extends Omit<TeamToken, 'lastFour'> {
  hint: string;
  /**
   * Why the API refuses it in the team (its account disabled, 401; or the team's own refusal,
   * 403), and in words; null when it does not.
   */
  refusalCode: InventoryRefusalCode | null;
  refusal: string | null;
  /** Every reason the team refuses it, in words (the first is `refusal`). */
  refusals: string[];
}

/** Why a token of the inventory is refused: its account's state first, then the team's. */
export type InventoryRefusalCode = 'account_disabled' | TeamRefusalCode;

const ACCOUNT_DISABLED =
  'Refused everywhere: an operator disabled its account. It works again once the account is enabled, unless revoked.';

function toTeamTokenView(row: TeamToken, team: GoverningTeam): TeamTokenView {
  const { lastFour, ...rest } = row;
  const codes: InventoryRefusalCode[] = [
    ...(row.person.disabled ? (['account_disabled'] as const) : []),
    ...teamRefusalsOf({
      binding: row.pinned ? 'pinned' : 'current',
      lifetimeDays: row.lifetimeDays,
      team,
      user: { twoFactor: row.person.twoFactor, serviceAccount: row.person.serviceAccount },
    }),
  ];
  const refusals = codes.map((code) =>
    code === 'account_disabled' ? ACCOUNT_DISABLED : describeRefusal(code, team, 'team'),
  );
  return {
    ...rest,
    hint: `${TOKEN_PREFIX}…${lastFour}`,
    refusalCode: codes[0] ?? null,
    refusal: refusals[0] ?? null,
    refusals,
  };
}

/**
 * Tokens as a team sees them: those that act in it now (its inventory, its service accounts'),
 * what a proposed policy would do to them, and a revocation by its owners and admins. Never a
 * token's value or hash. Who may see and revoke them is decided above, by `TeamTokensService`
 * (`team-tokens/`), which combines this with the team's roles.
 */
@Injectable()
export class TokensInTeamService {
  constructor(
    private readonly audit: AuditLog,
    private readonly tokens: TokensRepository,
    private readonly transactions: Transactions,
    private readonly securityNotices: SecurityNotices,
    private readonly clock: Clock,
    private readonly catalog: AbilityCatalog,
  ) {}

  /** The abilities of the catalog a token acting in `team` may use (all, without a limit). */
  abilitiesAllowedIn(team: GoverningTeam): AbilityDefinition[] {
    return this.catalog.allowedBy(team.policy.allowedAbilities);
  }

  /** Those the team lets its service accounts' tokens have: none that only a member can use. */
  abilitiesForServiceAccountsIn(team: GoverningTeam): AbilityDefinition[] {
    return this.catalog.allowedForServiceAccountsBy(team.policy.allowedAbilities);
  }

  /**
   * The active tokens that can act in the team (its inventory), with its refusal of each; a
   * page of them by id (one beyond it) when `page` says which.
   */
  async listActingIn(team: GoverningTeam, page?: KeysetPage): Promise<TeamTokenView[]> {
    const rows = await this.tokens.findActingIn(team.id, this.clock.now(), { page });
    return rows.map((row) => toTeamTokenView(row, team));
  }

  /** The active tokens of one account (a member, or a service account of the team) acting in it. */
  async listOfAccountIn(team: GoverningTeam, ownerId: number): Promise<TeamTokenView[]> {
    const rows = await this.tokens.findActingIn(team.id, this.clock.now(), { ownerId });
    return rows.map((row) => toTeamTokenView(row, team));
  }

  /**
   * What `proposed` would do to the tokens acting in `team` now: those it would refuse, or take
   * abilities from, each in words (the team page shows it before the change is saved).
   */
  async policyImpactIn(
    team: GoverningTeam,
    proposed: TeamPolicy,
  ): Promise<PolicyImpact & { words: ImpactInWords[] }> {
    const rows = await this.tokens.findActingIn(team.id, this.clock.now());
    const impact = policyImpact(team, proposed, rows, this.catalog);
    return { ...impact, words: impact.tokens.map((t) => impactInWords(t, team.name, proposed)) };
  }

  /** One token of the team's inventory; any other id is "not found". */
  async getActingIn(team: GoverningTeam, tokenId: number): Promise<TeamTokenView> {
    const [row] = await this.tokens.findActingIn(team.id, this.clock.now(), { tokenId });
    if (!row) throw new TokenNotFoundError();
    return toTeamTokenView(row, team);
  }

  /**
   * Revokes a token of the team's inventory (as `getActingIn` read it), for one of its owners or
   * admins with the role they had when they read it. The revocation decides in its one write
   * whether the token still acts in the team and may still be revoked by them: a token that
   * stopped acting here, whose person's role changed, or that another revocation got first, is
   * "not found" and stays untouched. Its person is mailed; the event is in their security log
   * and the team's audit log.
   */
  async revokeInTeam(
    actor: Actor,
    team: GoverningTeam,
    row: TeamTokenView,
    standing: Omit<TeamRevoker, 'userId'>,
  ): Promise<TeamTokenView> {
    const at = this.clock.now();
    const revoker = { ...standing, userId: accountOf(actor) };
    await this.transactions.run(async (m) => {
      if (!(await this.tokens.revokeActingIn(m, team.id, row.id, revoker, at))) {
        throw new TokenNotFoundError();
      }
      // A service account reads no mail; its team's owners and admins revoked it themselves.
      if (!row.person.serviceAccount) {
        await this.securityNotices.send(m, row.person.id, 'token-revoked-by-team', {
          detail: `"${row.name}" (${team.name})`,
        });
      }
      this.audit.recordIn(m, actor, {
        event: 'token.revoked',
        userId: row.person.id,
        teamId: team.id,
        tokenId: row.id,
        target: { type: 'token', id: row.id },
        detail: { name: row.name, by_team: team.name },
      });
    });
    return row;
  }
}
