import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Clock } from '../../clock/clock.js';
import { TEAM_AUDIT_KINDS } from '../../audit/audit-events.js';
import { AuditService } from '../../audit/audit.service.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { page, type PageEnvelope } from '../../common/http/envelope.js';
import type { TeamSummary } from '../../teams/team.view.js';
import { TeamsService } from '../../teams/teams.service.js';
import { CurrentTeam } from './api-authentication.js';
import { JsonQuery } from './conventions/api-input.js';
import { decodeCursor, encodeCursor } from './conventions/pagination.js';
import { AuditLogQuery } from './dto/team-api.dto.js';
import { ApiEndpoint } from './openapi/api-endpoint.decorator.js';
import { AuditEventSchema } from './openapi/team-schemas.js';
import { toAuditEvent } from './team-api.views.js';

/** The audit log of the team the token acts in, for its owner and admins, as on its page. */
@ApiTags('Team')
@Controller('api/v1/team/audit-log')
export class TeamAuditLogController {
  constructor(
    private readonly teams: TeamsService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  @ApiEndpoint({
    method: 'GET',
    operationId: 'listAuditEvents',
    ability: 'audit:read',
    summary: "The team's audit log",
    description: `The events of the team the token acts in, newest first, filtered by \`kind\` as the audit log page is (${TEAM_AUDIT_KINDS.map((kind) => `\`${kind}\``).join(', ')}; \`sign-in\` and \`account\` belong to a person, in no team’s log, and are refused): for its owner and admins. Events recorded while you page do not move the pages you have not read yet: the next page continues from the last event of the one before.`,
    data: [AuditEventSchema],
    query: AuditLogQuery,
    errors: ['forbidden', 'not_found'],
  })
  async list(
    @CurrentActor() actor: Actor,
    @CurrentTeam() team: TeamSummary,
    @JsonQuery() query: AuditLogQuery,
  ): Promise<PageEnvelope<ReturnType<typeof toAuditEvent>>> {
    const managed = await this.teams.getManageableTeam(actor, team.id);
    const before = decodeCursor('audit-log', query.cursor);
    const { events, olderThan } = await this.audit.forTeam(
      managed.id,
      query.kind,
      before,
      query.limit,
    );
    // Newest first: the next page holds the events older than the last of this one.
    const next = olderThan === undefined ? null : encodeCursor('audit-log', olderThan);
    return page(this.clock, events.map(toAuditEvent), next);
  }
}
