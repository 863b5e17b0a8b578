import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { tap, type Observable } from 'rxjs';
import { AuditLog } from '../../../audit/audit-log.js';
import type { AuditEventName } from '../../../audit/audit-events.js';
import { actorOf } from '../../../http/access.js';
import { principalOf } from '../api-authentication.js';

export const API_AUDIT_EVENT = 'tessera:api-audit-event';

/**
 * An endpoint that says `@ApiEndpoint({ audit: 'invoice.created' })` records that event in the
 * team's audit log each time it succeeds: done by the token (and its person), in the team the
 * token acts in, naming what the answer's `data.id` names when there is one.
 */
@Injectable()
export class ApiAuditTrail implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly audit: AuditLog,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const event = this.reflector.get<string | undefined>(API_AUDIT_EVENT, context.getHandler());
    const req = context.switchToHttp().getRequest<Request>();
    return next.handle().pipe(
      tap((answer: unknown) => {
        if (!event) return;
        const team = principalOf(req).team;
        const id = (answer as { data?: { id?: unknown } } | undefined)?.data?.id;
        const endpoint = `${req.method} ${(req.route as { path?: string } | undefined)?.path ?? req.path}`;
        this.audit.record(actorOf(req), {
          // A deployment's own event: the log keeps any `<kind>.<what>` name as it is given.
          event: event as AuditEventName,
          teamId: team?.id ?? null,
          detail:
            typeof id === 'number' || typeof id === 'string' ? { endpoint, id } : { endpoint },
        });
      }),
    );
  }
}
