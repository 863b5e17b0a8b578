import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { revertLastMigration, runMigrations } from '../database/migrator.js';
import { AccountAccessService } from '../account/account-access.service.js';
import { Actors } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { validateInput } from '../common/validation/validate-input.js';
import { RegistrationService } from '../sign-in/registration.service.js';
import { AddMemberDto } from '../teams/dto/add-member.dto.js';
import { CreateTeamDto } from '../teams/dto/create-team.dto.js';
import { NotTeamMemberError } from '../teams/teams.errors.js';
import { TeamMembersService } from '../teams/team-members.service.js';
import { TeamsService } from '../teams/teams.service.js';
import { PasswordResetService } from '../password-reset/password-reset.service.js';
import { CreateTokenDto } from '../tokens/dto/create-token.dto.js';
import { TokensService } from '../tokens/tokens.service.js';
import { DEFAULT_DAYS, defaultLifetimeDays } from '../tokens/token-lifetimes.js';
import { CreateServiceAccountForm } from '../service-accounts/dto/service-accounts.forms.js';
import { ServiceAccountsService } from '../service-accounts/service-accounts.service.js';
import { TokenLifetimes } from '../tokens/token-lifetimes.js';
import { TokenExpiryReminders } from '../tokens/token-expiry-reminders.js';
import { AuditService } from '../audit/audit.service.js';
import { toExportLine } from '../security-log/audit.view.js';
import { CreateUserDto } from '../users/dto/create-user.dto.js';
import { UsersService } from '../users/users.service.js';
import type { Config } from '../config/config.js';
import { WebhookSecretRotationService } from '../webhooks/webhook-secret-rotation.service.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/webhook-events.js';

type Values = Record<string, string | undefined>;

export interface Command {
  usage: string;
  /** What it does, for `<command> --help`. */
  description: string;
  /** Option names, each taking a value; those in `required` must be given. */
  options: string[];
  required: string[];
  /**
   * Options whose value is a secret: given as `-`, it is read from standard input instead, so
   * that it shows in neither the process list nor the shell's history.
   */
  secrets?: string[];
  run(app: INestApplicationContext, values: Values, out: (line: string) => void): Promise<void>;
  /** Changes the schema itself: its context starts without migrating (DB_MIGRATE is ignored). */
  managesSchema?: true;
  /** Lines its help adds from the deployment's settings (the abilities it may name, say). */
  details?(config: Config): string[];
  /**
   * Whether it prints a link made from APP_URL with these options: then an unset APP_URL is
   * warned about outside development.
   */
  printsLinks?(values: Values): boolean;
}

/** How many rows a listing reads at a time: memory stays bounded whatever the table holds. */
const LIST_PAGE = 500;

/** A listing's rows, tab-separated under a header line, so `cut -f` and `column -t` read them. */
async function printTable<Row extends { id: number }>(
  out: (line: string) => void,
  header: string[],
  pageAfter: (afterId: number) => Promise<Row[]>,
  cells: (row: Row) => (string | number)[],
): Promise<void> {
  out(header.join('\t'));
  for (let after = 0; ;) {
    const rows = await pageAfter(after);
    for (const row of rows)
      out(
        cells(row)
          .map((c) => String(c).replace(/\s+/g, ' '))
          .join('\t'),
      );
    if (rows.length < LIST_PAGE) return;
    after = rows.at(-1)!.id;
  }
}

const when = (at: Date | null): string => (at ? at.toISOString() : 'never');

function positiveInteger(name: string, raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw)) {
    throw new ValidationError({ [name]: `--${name} must be a positive whole number.` });
  }
  return Number(raw);
}

function wholeNumber(name: string, raw: string): number {
  if (!/^\d{1,6}$/.test(raw)) {
    throw new ValidationError({
      [name]: `--${name} must be a whole number of days from 0 to 999999.`,
    });
  }
  return Number(raw);
}

/** Whether YYYY-MM-DD names a day that exists (Date rolls 2026-02-30 over to March 2). */
function isCalendarDay(text: string): boolean {
  const [y, m, d] = text.split('-').map(Number);
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

/** A day (YYYY-MM-DD, midnight UTC) or a full ISO 8601 time. */
function parseSince(raw: string): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(raw);
  const date = new Date(day ? `${raw}T00:00:00Z` : raw);
  if ((!day && !time) || Number.isNaN(date.getTime()) || !isCalendarDay(raw.slice(0, 10))) {
    throw new ValidationError({
      since:
        '--since must be a date (YYYY-MM-DD) or an ISO 8601 time with its offset (2026-11-01T08:00:00Z).',
    });
  }
  return date;
}

/** `token:create --service-account ID`: a token of the service account, pinned to its team. */
async function createServiceAccountToken(
  app: INestApplicationContext,
  v: Values,
  out: (line: string) => void,
): Promise<void> {
  if (v.team !== undefined) {
    throw new ValidationError({ team: "A service account's token always acts in its own team." });
  }
  const accountId = positiveInteger('service-account', v['service-account']!);
  const operator = Actors.operator();
  const accounts = app.get(ServiceAccountsService);
  const teamId = await accounts.teamOf(operator, accountId);
  const { account, tokenForm } = await accounts.get(operator, teamId, accountId);
  const days =
    v.expires === 'never'
      ? undefined
      : (v['expires-in-days'] ??
        String(defaultLifetimeDays({ maxDays: tokenForm.expiry.maxLifetimeDays, team: null })));
  const input = validateInput(CreateTokenDto, {
    name: v.name,
    abilities: v.abilities?.split(',').map((a) => a.trim()),
    expiresInDays: days,
  });
  const created = await accounts.createToken(operator, teamId, accountId, input);
  const expiry = created.token.expiresAt ? created.token.expiresAt.toISOString() : 'never';
  out(`Token ${created.token.id} "${created.token.name}" of the service account ${account.name}`);
  out(
    `abilities: ${created.token.abilities.join(', ')}; expires: ${expiry}; acts in its team only`,
  );
  out('It is shown only this once:');
  out(created.plaintext);
}

/** The link alone on the last line, for scripts. */
async function printPasswordLink(
  app: INestApplicationContext,
  email: string,
  out: (line: string) => void,
): Promise<void> {
  const { user, link, minutes } = await app.get(PasswordResetService).linkFor(email);
  out(`${user.email} sets a password at this link, once, within ${minutes} minutes:`);
  out(link);
}

export const COMMANDS: Record<string, Command> = {
  'db:migrate': {
    usage: 'db:migrate',
    description: 'Applies the migrations the database has not had yet, and names them.',
    options: [],
    required: [],
    managesSchema: true,
    async run(app, _v, out) {
      const applied = await runMigrations(app.get(DataSource));
      out(applied.length === 0 ? 'No migrations pending' : `Applied ${applied.join(', ')}`);
    },
  },

  'db:rollback': {
    usage: 'db:rollback',
    description: 'Reverts the last migration applied, and names it.',
    options: [],
    required: [],
    managesSchema: true,
    async run(app, _v, out) {
      const reverted = await revertLastMigration(app.get(DataSource));
      out(reverted ? `Reverted ${reverted}` : 'No migration to revert');
    },
  },

  'user:create': {
    usage: 'user:create --name NAME --email EMAIL [--password PASSWORD|-]',
    description:
      "Creates an account with its personal team and prints its id, address and team, each on a labelled line. The address counts as confirmed. Without --password, also prints a one-time link (valid 60 minutes) where the person sets one, alone on the last line. '--password -' reads the password from standard input (its first line), out of the process list.",
    options: ['name', 'email', 'password'],
    secrets: ['password'],
    required: ['name', 'email'],
    printsLinks: (v) => v.password === undefined,
    async run(app, v, out) {
      const input = validateInput(CreateUserDto, {
        name: v.name,
        email: v.email,
        password: v.password,
      });
      const user = await app.get(RegistrationService).createAccount(input, { verified: true });
      const team = await app.get(TeamsService).getCurrentTeam(Actors.operator(user.id));
      out(`user id: ${user.id}`);
      out(`email: ${user.email}`);
      out(`personal team: ${team?.slug ?? 'none'}`);
      if (input.password === undefined) await printPasswordLink(app, user.email, out);
    },
  },

  'user:password-link': {
    usage: 'user:password-link --email EMAIL',
    description:
      'Prints a one-time link where the person sets a new password (valid 60 minutes; it replaces any earlier link). Nothing is mailed.',
    options: ['email'],
    required: ['email'],
    printsLinks: () => true,
    async run(app, v, out) {
      await printPasswordLink(app, v.email!, out);
    },
  },

  'user:list': {
    usage: 'user:list',
    description:
      'Lists every account, oldest first, as tab-separated columns under a header: id, email, name, when the address was confirmed, since when the account is disabled, when it was made.',
    options: [],
    required: [],
    async run(app, _v, out) {
      const users = app.get(UsersService);
      await printTable(
        out,
        ['id', 'email', 'name', 'confirmed', 'disabled', 'created'],
        (after) => users.allUsersPage(Actors.operator(), after, LIST_PAGE),
        (u) => [
          u.id,
          u.email,
          u.name,
          when(u.emailVerifiedAt),
          when(u.disabledAt),
          u.createdAt.toISOString(),
        ],
      );
    },
  },

  'user:disable': {
    usage: 'user:disable --email EMAIL',
    description:
      "Disables a person's account until user:enable: it cannot sign in, its sessions end, and its API tokens are refused from the next request, on every instance (they are kept, not revoked: the teams they act in list them as refused and may revoke them). The person is mailed, and the security log records it. A team's service account is not disabled here: revoke its tokens (token:revoke) or delete it on the team's pages.",
    options: ['email'],
    required: ['email'],
    async run(app, v, out) {
      // A service account is stopped by its team: its tokens revoked, or the account deleted.
      const user = await app.get(UsersService).getPersonByEmail(v.email!);
      const { sessions } = await app.get(AccountAccessService).disable(Actors.operator(user.id));
      out(`disabled: ${user.email}`);
      out(`sessions ended: ${sessions}`);
    },
  },

  'user:enable': {
    usage: 'user:enable --email EMAIL',
    description:
      'Enables a disabled account again: it signs in, and its tokens work as they did before. The person is mailed, and the security log records it.',
    options: ['email'],
    required: ['email'],
    async run(app, v, out) {
      const user = await app.get(UsersService).getByEmail(v.email!);
      await app.get(AccountAccessService).enable(Actors.operator(user.id));
      out(`enabled: ${user.email}`);
    },
  },

  'user:reset-two-factor': {
    usage: 'user:reset-two-factor --email EMAIL',
    description:
      "For a person locked out of their account: removes its two-factor sign-in (the authenticator app's secret and the recovery codes) and its passkeys, and ends its sessions, so the password alone signs in. API tokens stay. Check who is asking first: this undoes the account's second factor. The person is mailed, and the security log records it.",
    options: ['email'],
    required: ['email'],
    async run(app, v, out) {
      const user = await app.get(UsersService).getPersonByEmail(v.email!);
      const reset = await app.get(AccountAccessService).resetTwoFactor(Actors.operator(user.id));
      const removed = [
        ...(reset.totp ? ['authenticator app and recovery codes'] : []),
        ...(reset.passkeys > 0
          ? [`${reset.passkeys} passkey${reset.passkeys === 1 ? '' : 's'}`]
          : []),
      ];
      out(`two-factor sign-in reset: ${user.email}`);
      out(`removed: ${removed.join(', ')}`);
      out(`sessions ended: ${reset.sessions}`);
    },
  },

  'token:create': {
    usage:
      'token:create (--email EMAIL | --service-account ID) --name NAME [--abilities user:read,team:read] [--expires-in-days DAYS | --expires never] [--team SLUG]',
    description: `Creates a personal access token for the account and prints it, alone on the last line, this once. It follows the account's current team, or with --team acts in that team only (one the account is a member of). With --service-account, the token is that service account's, pinned to its team (--team does not apply). It expires in ${DEFAULT_DAYS} days, as on the tokens page (or in the most days the team it acts in and the deployment allow, when fewer), unless --expires-in-days says otherwise or --expires never asks for a token that never expires. A lifetime longer than the team it acts in or the deployment allows is refused. Without --abilities it gets the abilities marked (default).`,
    options: [
      'email',
      'service-account',
      'name',
      'abilities',
      'expires-in-days',
      'expires',
      'team',
    ],
    required: ['name'],
    details: (config) => [
      'Abilities this deployment offers (--abilities, comma-separated):',
      ...config.abilities.entries.map(
        (a) => `  ${a.name}${a.default ? ' (default)' : ''}  ${a.description}`,
      ),
    ],
    async run(app, v, out) {
      if (v.expires !== undefined && v.expires !== 'never') {
        throw new ValidationError({ expires: '--expires takes only "never".' });
      }
      if (v.expires !== undefined && v['expires-in-days'] !== undefined) {
        throw new ValidationError({ expires: 'Give either --expires-in-days or --expires never.' });
      }
      if ((v.email === undefined) === (v['service-account'] === undefined)) {
        throw new ValidationError({ email: 'Give either --email or --service-account.' });
      }
      if (v['service-account'] !== undefined) {
        await createServiceAccountToken(app, v, out);
        return;
      }
      const user = await app.get(UsersService).getPersonByEmail(v.email!);
      const actor = Actors.operator(user.id);
      const teamId =
        v.team === undefined
          ? undefined
          : (await app.get(TeamsService).getBySlug(Actors.operator(), v.team)).id;
      // The page's default: 30 days, or the most the team it acts in and the deployment allow.
      const days =
        v.expires === 'never'
          ? undefined
          : (v['expires-in-days'] ??
            String(await app.get(TokenLifetimes).defaultDays(actor, teamId)));
      const input = validateInput(CreateTokenDto, {
        name: v.name,
        abilities: v.abilities?.split(',').map((a) => a.trim()),
        expiresInDays: days,
        teamId,
      });
      const created = await app.get(TokensService).create(actor, input);
      const expiry = created.token.expiresAt ? created.token.expiresAt.toISOString() : 'never';
      out(`Token ${created.token.id} "${created.token.name}" for ${user.email}`);
      out(
        `abilities: ${created.token.abilities.join(', ')}; expires: ${expiry}; acts in: ${v.team ? `${v.team} only` : 'the current team'}`,
      );
      out('It is shown only this once:');
      out(created.plaintext);
    },
  },

  'token:list': {
    usage: 'token:list --email EMAIL',
    description:
      "Lists the account's tokens, those that work first, then those revoked or expired, as tab-separated columns under a header: id, name, status, abilities, expiry, last use, and the team it acts in (or why that team refuses it). Never a token's value.",
    options: ['email'],
    required: ['email'],
    async run(app, v, out) {
      const user = await app.get(UsersService).getByEmail(v.email!);
      const { active, history } = await app.get(TokensService).list(Actors.operator(user.id));
      out(['id', 'name', 'status', 'abilities', 'expires', 'last used', 'acts in'].join('\t'));
      for (const t of [...active, ...history]) {
        const refused = t.refusal ? ` (refused: ${t.refusal})` : '';
        const actsIn = t.teamName
          ? `${t.teamName}${t.binding === 'pinned' ? ' only' : ''}${refused}`
          : `no team${refused}`;
        out(
          [
            t.id,
            t.name,
            t.status,
            t.abilities.join(','),
            when(t.expiresAt),
            when(t.lastUsedAt),
            actsIn,
          ]
            .map((c) => String(c).replace(/\s+/g, ' '))
            .join('\t'),
        );
      }
    },
  },

  'service-account:create': {
    usage: 'service-account:create --team SLUG --name NAME [--description TEXT]',
    description:
      "Creates a service account of the team (within SERVICE_ACCOUNTS_PER_TEAM) and prints its id, alone on the last line. Nobody signs in to it; give it tokens with token:create --service-account ID, or on the team's pages.",
    options: ['team', 'name', 'description'],
    required: ['team', 'name'],
    async run(app, v, out) {
      const input = validateInput(CreateServiceAccountForm, {
        name: v.name,
        description: v.description,
      });
      const operator = Actors.operator();
      const team = await app.get(TeamsService).getBySlug(operator, v.team!);
      const account = await app.get(ServiceAccountsService).create(operator, team.id, input);
      out(`Service account "${account.name}" of ${team.slug}, address ${account.email}`);
      out(String(account.id));
    },
  },

  'token:revoke': {
    usage: 'token:revoke --email EMAIL (--name NAME | --id ID)',
    description: "Revokes one of the account's tokens, by name or by id.",
    options: ['email', 'name', 'id'],
    required: ['email'],
    async run(app, v, out) {
      if ((v.name === undefined) === (v.id === undefined)) {
        throw new ValidationError({ name: 'Give either --name or --id.' });
      }
      const user = await app.get(UsersService).getByEmail(v.email!);
      const tokens = app.get(TokensService);
      const { token, alreadyRevoked } =
        v.id !== undefined
          ? await tokens.revoke(Actors.operator(user.id), positiveInteger('id', v.id))
          : await tokens.revokeByName(Actors.operator(user.id), v.name!);
      const when = token.revokedAt!.toISOString();
      out(
        `${alreadyRevoked ? 'Already revoked' : 'Revoked'}: token ${token.id} "${token.name}" (${when})`,
      );
    },
  },

  'tokens:prune': {
    usage: 'tokens:prune --older-than-days DAYS',
    description: 'Deletes the tokens revoked or expired more than DAYS days ago.',
    options: ['older-than-days'],
    required: ['older-than-days'],
    async run(app, v, out) {
      const days = wholeNumber('older-than-days', v['older-than-days']!);
      const { deleted, before } = await app.get(TokensService).pruneDead(days);
      out(
        `Deleted ${deleted} token${deleted === 1 ? '' : 's'} revoked or expired before ${before.toISOString()}`,
      );
    },
  },

  'tokens:remind': {
    usage: 'tokens:remind',
    description:
      'Enqueues the expiry reminders that are due (a week before, and on the day) and records expiries in the security log; the server does this every 15 minutes. Each is done once, whoever runs it.',
    options: [],
    required: [],
    async run(app, _v, out) {
      const { reminded, expired } = await app.get(TokenExpiryReminders).run();
      out(
        `Enqueued ${reminded} reminder${reminded === 1 ? '' : 's'}; recorded ${expired} expir${expired === 1 ? 'y' : 'ies'}`,
      );
    },
  },

  'team:create': {
    usage: 'team:create --owner EMAIL --name NAME',
    description:
      "Creates a team owned by the account, makes it the account's current team, and prints its id, slug, name and owner, each on a labelled line.",
    options: ['owner', 'name'],
    required: ['owner', 'name'],
    async run(app, v, out) {
      const input = validateInput(CreateTeamDto, { name: v.name });
      const owner = await app.get(UsersService).getPersonByEmail(v.owner!);
      const team = await app.get(TeamsService).createTeam(Actors.operator(owner.id), input);
      out(`team id: ${team.id}`);
      out(`slug: ${team.slug}`);
      out(`name: ${team.name}`);
      out(`owner: ${owner.email}`);
    },
  },

  'team:list': {
    usage: 'team:list',
    description:
      'Lists every team, oldest first, as tab-separated columns under a header: id, slug, name, owner, members, and whether it is a personal team.',
    options: [],
    required: [],
    async run(app, _v, out) {
      const teams = app.get(TeamsService);
      await printTable(
        out,
        ['id', 'slug', 'name', 'owner', 'members', 'personal'],
        (after) => teams.allTeamsPage(Actors.operator(), after, LIST_PAGE),
        (t) => [t.id, t.slug, t.name, t.ownerEmail, t.members, t.personal ? 'yes' : 'no'],
      );
    },
  },

  'team:add-member': {
    usage: 'team:add-member --team SLUG --email EMAIL [--role member|admin]',
    description: 'Adds the account to the team, as a member unless --role says admin.',
    options: ['team', 'email', 'role'],
    required: ['team', 'email'],
    async run(app, v, out) {
      const input = validateInput(AddMemberDto, { email: v.email, role: v.role ?? 'member' });
      const team = await app.get(TeamsService).getBySlug(Actors.operator(), v.team!);
      const user = await app.get(TeamMembersService).addMember(Actors.operator(), team.id, input);
      out(`Added ${user.email} to ${team.slug} as ${input.role}`);
    },
  },

  'team:switch': {
    usage: 'team:switch --email EMAIL --team SLUG',
    description: "Makes the team the account's current team; the account must belong to it.",
    options: ['email', 'team'],
    required: ['email', 'team'],
    async run(app, v, out) {
      const user = await app.get(UsersService).getPersonByEmail(v.email!);
      const teams = app.get(TeamsService);
      const team = await teams.getBySlug(Actors.operator(), v.team!);
      try {
        await teams.switchTeam(Actors.operator(user.id), team.id);
      } catch (error) {
        if (error instanceof NotTeamMemberError) {
          throw new ValidationError({ team: `${user.email} is not a member of ${team.slug}.` });
        }
        throw error;
      }
      out(`${user.email} now works in ${team.slug}`);
    },
  },

  'audit:export': {
    usage: 'audit:export --since DATE [--user EMAIL|ID] [--team SLUG|ID]',
    description:
      'Writes the security log since DATE (YYYY-MM-DD, or a full ISO 8601 time) as JSON lines, oldest first. Every event, or with --user or --team those of one account or one team.',
    options: ['since', 'user', 'team'],
    required: ['since'],
    async run(app, v, out) {
      const since = parseSince(v.since!);
      const userId =
        v.user === undefined
          ? undefined
          : /^\d+$/.test(v.user)
            ? positiveInteger('user', v.user)
            : (await app.get(UsersService).getByEmail(v.user)).id;
      const teamId =
        v.team === undefined
          ? undefined
          : /^\d+$/.test(v.team)
            ? positiveInteger('team', v.team)
            : (await app.get(TeamsService).getBySlug(Actors.operator(), v.team)).id;
      for await (const event of app.get(AuditService).export({ since, userId, teamId })) {
        out(JSON.stringify(toExportLine(event)));
      }
    },
  },

  'audit:prune': {
    usage: 'audit:prune [--older-than-days DAYS]',
    description:
      'Deletes security log events older than AUDIT_RETENTION_DAYS (365 unless set), or DAYS; the server also does this once a day.',
    options: ['older-than-days'],
    required: [],
    async run(app, v, out) {
      const days =
        v['older-than-days'] === undefined
          ? undefined
          : wholeNumber('older-than-days', v['older-than-days']);
      const { deleted, before } = await app.get(AuditService).prune(days);
      out(
        `Deleted ${deleted} event${deleted === 1 ? '' : 's'} from before ${before.toISOString()}`,
      );
    },
  },
  'webhook:create': {
    usage: 'webhook:create [--team SLUG] --url URL --events E1,E2',
    description:
      "Registers a webhook endpoint for the team's events, or with no --team for every team's (the instance's), and prints its signing secret, alone on the last line, this once. The URL must be HTTPS, and its host must not resolve to a loopback, private, link-local or reserved address outside WEBHOOK_ALLOWED_RANGES.",
    options: ['team', 'url', 'events'],
    required: ['url', 'events'],
    details: () => [`Events: ${WEBHOOK_EVENT_TYPES.join(', ')}`],
    async run(app, v, out) {
      const operator = Actors.operator();
      const team =
        v.team === undefined ? null : await app.get(TeamsService).getBySlug(operator, v.team);
      const events = v
        .events!.split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '');
      const created = await app
        .get(WebhooksService)
        .create(operator, team?.id ?? null, { url: v.url!, events });
      out(
        `Webhook endpoint ${created.endpoint.id} for ${team ? team.slug : 'every team'}: ${created.endpoint.url} (${created.endpoint.events})`,
      );
      out(created.secret);
    },
  },

  'audit-stream:create': {
    usage: 'audit-stream:create [--team SLUG] --url URL [--authorization VALUE|-]',
    description:
      "Registers an audit stream: every entry of the team's audit log, or with no --team of the whole instance's, sent to URL in order, in signed batches of JSON lines (as audit:export writes them). VALUE, when given, is sent as the Authorization header (Splunk HEC: 'Splunk <token>'), kept encrypted and never shown again; '--authorization -' reads it from standard input (its first line), out of the process list. Prints the stream, then its signing secret, alone on the last line, this once. The URL follows webhook:create's rules.",
    options: ['team', 'url', 'authorization'],
    secrets: ['authorization'],
    required: ['url'],
    async run(app, v, out) {
      const operator = Actors.operator();
      const team =
        v.team === undefined ? null : await app.get(TeamsService).getBySlug(operator, v.team);
      const created = await app.get(WebhooksService).createAuditStream(operator, team?.id ?? null, {
        url: v.url!,
        authorization: v.authorization ?? null,
      });
      out(
        `Audit stream ${created.endpoint.id} for ${team ? team.slug : 'every team and account'}: ${created.endpoint.url}${created.endpoint.authorizationHeader ? ' (with an Authorization header)' : ''}`,
      );
      out(created.secret);
    },
  },

  'webhook:list': {
    usage: 'webhook:list [--team SLUG]',
    description:
      "Lists webhook endpoints, every team's or one team's, tab-separated: id, team (* for the operator's, which get every team's events), url, events, status, source (registered, or environment for those WEBHOOK_ENDPOINTS lists: read-only, changed there), created.",
    options: ['team'],
    required: [],
    async run(app, v, out) {
      const team =
        v.team === undefined
          ? undefined
          : await app.get(TeamsService).getBySlug(Actors.operator(), v.team);
      await printTable(
        out,
        ['id', 'team', 'url', 'events', 'status', 'source', 'created'],
        (after) => app.get(WebhooksService).pageForOperator(after, LIST_PAGE, team?.id),
        (e) => [
          e.id,
          e.team?.slug ?? '*',
          e.url,
          e.kind === 'audit_stream' ? '(audit stream)' : e.events,
          e.status,
          e.configKey ? 'environment' : 'registered',
          e.createdAt.toISOString(),
        ],
      );
    },
  },

  'webhook:rotate-secret': {
    usage: 'webhook:rotate-secret --id ID',
    description:
      'Gives the endpoint a new signing secret and prints it, alone on the last line, this once. The previous secret keeps signing beside it for 24 hours.',
    options: ['id'],
    required: ['id'],
    async run(app, v, out) {
      const rotated = await app
        .get(WebhookSecretRotationService)
        .rotateSecretForOperator(positiveInteger('id', v.id!));
      out(
        `Webhook endpoint ${rotated.endpoint.id}: ${rotated.endpoint.url}; the previous secret signs too until ${rotated.previousSignsUntil.toISOString()}`,
      );
      out(rotated.secret);
    },
  },

  'webhook:deliveries': {
    usage: 'webhook:deliveries --id ID',
    description:
      "Lists the endpoint's latest deliveries, newest first: id, webhook-id, event, status, attempts, response code, latency, created.",
    options: ['id'],
    required: ['id'],
    async run(app, v, out) {
      const { endpoint, deliveries } = await app
        .get(WebhooksService)
        .deliveriesForOperator(positiveInteger('id', v.id!));
      out(`Endpoint ${endpoint.id}: ${endpoint.url} (${endpoint.status})`);
      out(
        ['id', 'webhook-id', 'event', 'status', 'attempts', 'code', 'latency_ms', 'created'].join(
          '\t',
        ),
      );
      for (const d of deliveries) {
        out(
          [
            d.id,
            d.messageId,
            d.eventType,
            d.status,
            d.attempts,
            d.responseCode ?? '-',
            d.latencyMs ?? '-',
            d.createdAt.toISOString(),
          ].join('\t'),
        );
      }
    },
  },
};
