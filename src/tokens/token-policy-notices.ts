import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import type { Actor } from '../common/actor.js';
import { AbilityCatalog } from '../config/abilities.config.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { OnEvent } from '../events/events.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import type { TeamPolicyValues } from '../teams/team-policies.service.js';
import { UsersRepository } from '../users/users.repository.js';
import { impactInWords, policyImpact, type ImpactInWords } from './policy-impact.js';
import { TokensRepository, type TeamManager } from './tokens.repository.js';

export const TOKEN_POLICY_MAIL = 'token-policy';

/** One token of a mail: its name, its service account's when it is one, and what to do. */
interface ImpactLine extends ImpactInWords {
  token: string;
  account: string | null;
}

/**
 * No policy breaks an integration in silence: when a team's owner changes its policy, every
 * token acting in the team that the change refuses (or takes abilities from) is mailed about,
 * in the change's transaction: to its person, or for a service account's token, to the team's
 * owners and admins. One mail a person, naming each of their tokens and what to do.
 */
@Injectable()
export class TokenPolicyNotices {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly users: UsersRepository,
    private readonly mailer: Mailer,
    private readonly catalog: AbilityCatalog,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @OnEvent('team.policy_changed')
  async changed(
    event: {
      actor: Actor;
      team: { id: number; name: string };
      previous: TeamPolicyValues;
      policy: TeamPolicyValues;
    },
    manager: EntityManager,
  ): Promise<void> {
    const { team, previous, policy } = event;
    const rows = await this.tokens.findActingIn(team.id, this.clock.now(), { manager });
    const impact = policyImpact({ ...team, policy: previous }, policy, rows, this.catalog);
    const letters = new Map<number, { email: string; lines: ImpactLine[] }>();
    let managers: TeamManager[] | undefined;
    for (const token of impact.tokens) {
      const person = token.token.person;
      const recipients = person.serviceAccount
        ? (managers ??= await this.tokens.findTeamManagers(manager, team.id))
        : [{ id: person.id, email: person.email }];
      for (const { id, email } of recipients) {
        const letter = letters.get(id) ?? { email, lines: [] };
        letter.lines.push({
          token: token.token.name,
          account: person.serviceAccount ? person.name : null,
          ...impactInWords(token, team.name, policy),
        });
        letters.set(id, letter);
      }
    }
    for (const [userId, { email, lines }] of letters) {
      await this.mailer.send(manager, TOKEN_POLICY_MAIL, email, {
        userId,
        teamId: team.id,
        teamName: team.name,
        tokens: JSON.stringify(lines),
      });
    }
  }

  @ComposesMail(TOKEN_POLICY_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const user = await this.users.findById(Number(request.params.userId), manager);
    if (!user || user.email !== request.to) return null;
    const lines = JSON.parse(String(request.params.tokens)) as ImpactLine[];
    const team = String(request.params.teamName);
    const base = this.config.app.publicUrl;
    const accounts = lines.some((line) => line.account);
    return {
      to: user.email,
      subject: `${team} changed its token policy: ${lines.length === 1 ? 'a token' : `${lines.length} tokens`} ${accounts ? 'of yours or of its service accounts ' : 'of yours '}affected`,
      ...this.mailer.render(TOKEN_POLICY_MAIL, {
        name: user.name,
        team,
        tokens: lines,
        tokensUrl: `${base}/settings/api-tokens`,
        accountsUrl: `${base}/teams/${Number(request.params.teamId)}/service-accounts`,
        accounts,
      }),
    };
  }
}
