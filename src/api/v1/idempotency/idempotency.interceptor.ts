import {
  HttpStatus,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { catchError, from, mergeMap, of, throwError, type Observable } from 'rxjs';
import {
  ConflictError,
  DomainError,
  ValidationError,
} from '../../../common/errors/domain.error.js';
import { Clock } from '../../../clock/clock.js';
import { AllExceptionsFilter } from '../../../http/all-exceptions.filter.js';
import { apiErrorAnswers } from '../api-errors.js';
import { failure } from '../../../common/http/envelope.js';
import { JsonAnswer } from '../../../http/json-answer.js';
import { IdempotencyStore } from './idempotency.store.js';
import { principalOf } from '../api-authentication.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/**
 * Printable ASCII (the space included, but not at either end, which HTTP drops), 1 to 255
 * characters: a UUID fits, and so does any client's own scheme.
 */
export const IDEMPOTENCY_KEY = /^(?=[\x21-\x7e])[\x20-\x7e]{0,254}[\x21-\x7e]$/;

export class IdempotencyKeyInUseError extends ConflictError {
  override readonly retryAfterSeconds = 1;
  constructor() {
    super(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is under way; send it again shortly to get its answer.',
    );
  }
}

export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super(
      'This Idempotency-Key was used in the last 24 hours for another request (another method, path, body or team); this one was not acted on. Use a new key for a new request.',
    );
  }
}

/** The body with its keys in one order, so the same JSON written differently is the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

/**
 * What makes two requests with one key the same request: method, path, the JSON body whatever
 * the order of its members, and the team the token acts in (`/team/...` names no team, so the
 * same path and body from a token of another team, or after a switch, is another request).
 */
export function requestDigest(
  method: string,
  path: string,
  teamId: number | null,
  body: unknown,
): string {
  return createHash('sha256')
    .update(`${method} ${path}\nteam ${teamId ?? '-'}\n${JSON.stringify(canonical(body))}`)
    .digest('hex');
}

/**
 * The digest keys were stored with before the acting team joined it, read for a key's first 24
 * hours after an upgrade: a retry of a request made before the upgrade is still that request,
 * replayed rather than refused as another. A digest of this form is never stored any more, so
 * it matches no key claimed since.
 */
export function digestBeforeTeams(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${JSON.stringify(canonical(body ?? {}))}`)
    .digest('hex');
}

/**
 * `Idempotency-Key` on the API's POSTs, as Stripe has it: the first request with a key acts
 * and its answer is kept for 24 hours; the same key with the same method, path, body and team
 * the token acts in gets that answer again, on any instance, without acting twice (`Idempotent-Replayed: true`); with
 * anything else, 422 `idempotency_key_reused`; while the first is under way, 409
 * `idempotency_key_in_use` with Retry-After. A refusal (4xx) is an answer like any other; a
 * failure of ours (5xx) keeps nothing, so the request can be sent again. Without the header a
 * POST acts each time it is sent.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly errors: AllExceptionsFilter;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
  ) {
    this.errors = new AllExceptionsFilter(clock, apiErrorAnswers);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const key = req.headers['idempotency-key'];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
      throw new ValidationError({
        [IDEMPOTENCY_HEADER]: 'Idempotency-Key must be 1 to 255 printable ASCII characters.',
      });
    }
    const { user, team } = principalOf(req);
    // No body reads as {} (readJsonBody); a JSON null stays null, another request than {}.
    const requestHash = requestDigest(req.method, req.path, team?.id ?? null, req.body);
    const keyHash = createHash('sha256').update(key).digest('hex');
    const status =
      (Reflect.getMetadata(HTTP_CODE_METADATA, context.getHandler()) as number | undefined) ??
      HttpStatus.CREATED;
    return from(
      this.store.claim(user.id, keyHash, requestHash, () =>
        digestBeforeTeams(req.method, req.path, req.body),
      ),
    ).pipe(
      mergeMap((claim) => {
        switch (claim.kind) {
          case 'other_request':
            return throwError(() => new IdempotencyKeyReusedError());
          case 'in_progress':
            return throwError(() => new IdempotencyKeyInUseError());
          case 'answered':
            context.switchToHttp().getResponse<Response>().setHeader('Idempotent-Replayed', 'true');
            return of(new JsonAnswer(claim.status, claim.answer));
          case 'claimed':
            return this.act(claim.id, status, req, next);
        }
      }),
    );
  }

  /** Runs the request, and keeps its answer (or its refusal) for the key before it is sent. */
  private act(id: number, status: number, req: Request, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      mergeMap((answer: unknown) => from(this.store.answer(id, status, answer).then(() => answer))),
      catchError((error: unknown) => {
        const refused = this.errors.resolve(error, req);
        // Ours failed, or the refusal passes with time (Retry-After): nothing to keep.
        if (!(error instanceof DomainError) || refused.status >= 500 || error.retryAfterSeconds) {
          return from(this.store.release(id)).pipe(mergeMap(() => throwError(() => error)));
        }
        const envelope = failure(this.clock, refused.code, refused.message, refused.fields);
        return from(this.store.answer(id, refused.status, envelope)).pipe(
          mergeMap(() => of(new JsonAnswer(refused.status, envelope))),
        );
      }),
    );
  }
}
