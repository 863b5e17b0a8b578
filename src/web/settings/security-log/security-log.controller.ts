import { Controller, Get, Header, Render, StreamableFile } from '@nestjs/common';
import { Readable } from 'node:stream';
import { QueryForm } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { IdParam } from '../../../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../../page-context.js';
import { TeamsService } from '../../../teams/teams.service.js';
import type { User } from '../../../users/user.entity.js';
import type { AuditEvent } from '../../../audit/audit-event.entity.js';
import {
  AUDIT_KIND_NAMES,
  AUDIT_KINDS,
  TEAM_AUDIT_KINDS,
  type AuditKind,
} from '../../../audit/audit-events.js';
import { AuditService, type AuditPage } from '../../../audit/audit.service.js';
import { toEventView, toExportLine } from '../../../security-log/audit.view.js';
import { AuditLogQuery } from './security-log.forms.js';

/**
 * The security log's pages: a person's own (Account Settings > Security log), and a team's,
 * for its owner and admins only (to a member it is forbidden; to anyone else the team does not
 * exist).
 */
@Controller()
@SignedIn()
export class SecurityLogController {
  constructor(
    private readonly audit: AuditService,
    private readonly teams: TeamsService,
  ) {}

  @Get('settings/security-log')
  @Render('audit/log')
  async own(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @QueryForm() query: AuditLogQuery,
  ): Promise<object> {
    const [page, showClient] = await Promise.all([
      this.audit.forUser(actor, query.kind || undefined, query.before),
      this.clientRule(actor, user),
    ]);
    return this.view(page, user, query, showClient, {
      title: 'Security log',
      settingsSection: 'log',
      path: '/settings/security-log',
      intro:
        'What happened to your account and what was done with it, newest first: sign-ins, changes to your settings, your API tokens and your teams.',
    });
  }

  /** The log as the page filters it, every page of it, as JSON lines in the order it happened. */
  @Get('settings/security-log/export')
  @Header('Content-Type', 'application/x-ndjson; charset=utf-8')
  @Header('Content-Disposition', 'attachment; filename="security-log.jsonl"')
  async ownExport(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @QueryForm() query: AuditLogQuery,
  ): Promise<StreamableFile> {
    const showClient = await this.clientRule(actor, user);
    const events = this.audit.export({
      since: new Date(0),
      userId: user.id,
      kind: query.kind || undefined,
    });
    return new StreamableFile(Readable.from(jsonLines(events, showClient)));
  }

  @Get('teams/:id/audit-log/export')
  @Header('Content-Type', 'application/x-ndjson; charset=utf-8')
  @Header('Content-Disposition', 'attachment; filename="team-audit-log.jsonl"')
  async teamExport(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @QueryForm() query: AuditLogQuery,
  ): Promise<StreamableFile> {
    const team = await this.teams.getManageableTeam(actor, id);
    const events = this.audit.export({
      since: new Date(0),
      teamId: team.id,
      kind: query.kind || undefined,
    });
    return new StreamableFile(Readable.from(jsonLines(events, () => true)));
  }

  @Get('teams/:id/audit-log')
  @Render('audit/log')
  async team(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @IdParam() id: number,
    @QueryForm() query: AuditLogQuery,
  ): Promise<object> {
    const team = await this.teams.getManageableTeam(actor, id);
    const page = await this.audit.forTeam(team.id, query.kind || undefined, query.before);
    return this.view(page, user, query, () => true, {
      offered: TEAM_AUDIT_KINDS,
      title: `Audit log of ${team.name}`,
      path: `/teams/${team.id}/audit-log`,
      team,
      intro: 'Who joined, left and changed what in this team, newest first.',
    });
  }

  /**
   * Whose address and client a person's own log may show: their own, the operator's and the
   * system's, and anyone's in the teams they manage (whose audit log they may read anyway).
   */
  private async clientRule(actor: Actor, user: User): Promise<(e: AuditEvent) => boolean> {
    const memberships = await this.teams.membershipsOf(actor);
    const manages = new Set(memberships.filter((m) => m.role !== 'member').map((m) => m.team.id));
    return (e) =>
      e.actorUserId === null ||
      e.actorUserId === user.id ||
      (e.teamId !== null && manages.has(e.teamId));
  }

  private view(
    page: AuditPage,
    user: User,
    query: AuditLogQuery,
    showClient: (e: AuditEvent) => boolean,
    {
      offered = AUDIT_KIND_NAMES,
      ...page_
    }: { path: string; offered?: readonly AuditKind[]; [more: string]: unknown },
  ): object {
    const path = page_.path;
    const kind = query.kind || '';
    const params = (before?: number) =>
      [kind && `kind=${encodeURIComponent(kind)}`, before && `before=${before}`]
        .filter(Boolean)
        .join('&');
    return {
      ...page_,
      events: page.events.map((e) =>
        toEventView(e, { people: page.people, tokens: page.tokens }, user.id, showClient(e)),
      ),
      kinds: offered.map((value) => ({
        value,
        label: AUDIT_KINDS[value],
        selected: value === kind,
      })),
      filtered: kind !== '',
      exportUrl: `${path}/export${kind ? `?kind=${encodeURIComponent(kind)}` : ''}`,
      olderUrl: page.olderThan ? `${path}?${params(page.olderThan)}` : undefined,
      newestUrl: query.before ? `${path}${kind ? `?${params()}` : ''}` : undefined,
    };
  }
}

/** Each event as a line of JSON; someone else's address and client only where `showClient`. */
async function* jsonLines(
  events: AsyncIterable<AuditEvent>,
  showClient: (e: AuditEvent) => boolean,
): AsyncGenerator<string> {
  for await (const e of events) {
    const line = toExportLine(e) as { ip: string | null; user_agent: string | null };
    if (!showClient(e)) {
      line.ip = null;
      line.user_agent = null;
    }
    yield `${JSON.stringify(line)}\n`;
  }
}
