import { Controller, Get, Render } from '@nestjs/common';
import { QueryForm } from '../common/validation/form.decorator.js';
import { CurrentActor } from '../auth/current-actor.js';
import type { Actor } from '../common/actor.js';
import { SignedIn } from '../common/auth-policy.decorator.js';
import { IdParam } from '../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../common/decorators/signed-in-user.decorator.js';
import { TeamsService } from '../teams/teams.service.js';
import type { User } from '../users/user.entity.js';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { AUDIT_KINDS } from '../audit/audit-events.js';
import { AuditService, type AuditPage } from '../audit/audit.service.js';
import { toEventView } from './audit.view.js';
import { AuditLogQuery } from './dto/security-log.forms.js';

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
    const [page, memberships] = await Promise.all([
      this.audit.forUser(actor, query.kind || undefined, query.before),
      this.teams.membershipsOf(actor),
    ]);
    // Someone else's address and client only where the viewer may read the team's own log.
    const manages = new Set(memberships.filter((m) => m.role !== 'member').map((m) => m.team.id));
    const showClient = (e: AuditEvent) =>
      e.actorUserId === null ||
      e.actorUserId === user.id ||
      (e.teamId !== null && manages.has(e.teamId));
    return this.view(page, user, query, showClient, {
      title: 'Security log',
      settingsSection: 'log',
      path: '/settings/security-log',
      intro:
        'What happened to your account and what was done with it, newest first: sign-ins, changes to your settings, your API tokens and your teams.',
    });
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
      title: `Audit log of ${team.name}`,
      path: `/teams/${team.id}/audit-log`,
      team,
      intro: 'Who joined, left and changed what in this team, newest first.',
    });
  }

  private view(
    page: AuditPage,
    user: User,
    query: AuditLogQuery,
    showClient: (e: AuditEvent) => boolean,
    page_: object,
  ): object {
    const path = (page_ as { path: string }).path;
    const kind = query.kind || '';
    const params = (before?: number) =>
      [kind && `kind=${encodeURIComponent(kind)}`, before && `before=${before}`]
        .filter(Boolean)
        .join('&');
    return {
      ...page_,
      events: page.events.map((e) => toEventView(e, page.people, user.id, showClient(e))),
      kinds: Object.entries(AUDIT_KINDS).map(([value, label]) => ({
        value,
        label,
        selected: value === kind,
      })),
      filtered: kind !== '',
      olderUrl: page.olderThan ? `${path}?${params(page.olderThan)}` : undefined,
      newestUrl: query.before ? `${path}${kind ? `?${params()}` : ''}` : undefined,
    };
  }
}
