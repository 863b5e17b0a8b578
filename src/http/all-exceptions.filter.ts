import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Clock } from '../clock/clock.js';
import { isDatabaseUnavailable, isDeadlock } from '../common/errors/database-errors.js';
import { ConflictError, DomainError, ValidationError } from '../common/errors/domain.error.js';
import type { DomainErrorCode } from '../common/errors/error-codes.js';
import { isApiPath } from './json-paths.js';
import { requestIdOf } from './request-state.js';
import { loggablePath } from './request-log.js';
import { failure } from '../common/http/envelope.js';
import { writeJson } from './json-answer.js';
import { CODE_BY_STATUS } from './error-status.js';

/** The statuses a door answers a domain error with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 503;

/**
 * A door's table of answers: one for every code, or a function of the error where its data
 * decides. Typed so that a code nobody answers fails the type check.
 */
export type AnswerTable<A> = Record<DomainErrorCode, A | ((error: DomainError) => A)>;

/** The answer `table` gives `error`. */
export function answerIn<A>(table: AnswerTable<A>, error: DomainError): A {
  const entry = table[error.code];
  return typeof entry === 'function' ? (entry as (error: DomainError) => A)(error) : entry;
}

/** What a door says of a domain error over HTTP: its status at least. */
export interface ErrorDoor {
  statusOf(error: DomainError): ErrorStatus;
}

/** How the API edge answers a domain error: a status, and a WWW-Authenticate challenge for some. */
export interface ApiErrorAnswers extends ErrorDoor {
  challengeOf(error: DomainError): string | undefined;
}

export interface ResolvedError {
  status: number;
  code: string;
  message: string;
  fields?: Record<string, string>;
  /** Sent as Retry-After: when the client may try again. */
  retryAfterSeconds?: number;
}

/** How the page edge answers a failed page request: a page, a redirect or a refused form. */
export interface PageErrorAnswers extends ErrorDoor {
  /** `domain`: the domain error that failed, when it was one. */
  answer(error: ResolvedError, request: Request, response: Response, domain?: DomainError): void;
}

/**
 * When to try again after the database (or this instance's cluster node) could not serve, and
 * what any 503 without a time of its own says: a node that rejoins its cluster, or a pool that
 * reconnects, takes a few seconds.
 */
const DATABASE_RETRY_AFTER_SECONDS = 5;
/** Others kept changing the same thing at the same moment. */
const CONFLICTING_WRITES =
  'Others were changing the same thing at the same moment. Try again in a moment.';

export const GENERIC_MESSAGES: Record<number, string> = {
  400: 'The request could not be understood.',
  404: 'Not found.',
  405: 'That method is not allowed here.',
  413: 'The request body is too large.',
  415: 'That content type is not supported.',
  500: 'Something went wrong on our side.',
  503: 'The service is temporarily unavailable. Try again shortly.',
};

const CSRF_MESSAGE =
  'This form has expired or did not come from this site. Go back, reload the page and try again.';

/**
 * The one place errors become responses: the JSON envelope under /api (and on the paths
 * machines post to), an error page elsewhere. Only domain errors speak their own message;
 * anything unexpected is logged and answered with a message that reveals nothing internal.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  /**
   * `clock` stamps the envelope; `api`: the API edge's answers (api/v1/api-errors.ts);
   * `answersInJson`: the paths answered with the envelope, /api's and those a caller adds.
   */
  constructor(
    private readonly clock: Clock,
    private readonly api: ApiErrorAnswers,
    private readonly answersInJson: (path: string) => boolean = isApiPath,
    /** How pages answer a failure: the page edge's (web/page-errors.ts). */
    private readonly pages?: PageErrorAnswers,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.answer(exception, http.getRequest<Request>(), http.getResponse<Response>());
  }

  /** The answer to a request that failed with `exception`; also called before routing. */
  answer(exception: unknown, request: Request, response: Response): void {
    const json = this.answersInJson(request.path);
    const error = this.resolve(exception, request, json || !this.pages ? this.api : this.pages);
    const domain = exception instanceof DomainError ? exception : undefined;
    if (response.headersSent) return;
    // An error answer is about this one request: never kept, by a browser or anyone between.
    response.setHeader('Cache-Control', 'no-store');
    const retryAfter =
      error.retryAfterSeconds ?? (error.status === 503 ? DATABASE_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter) response.setHeader('Retry-After', retryAfter);

    if (json) {
      const challenge = domain && this.api.challengeOf(domain);
      if (challenge) response.setHeader('WWW-Authenticate', challenge);
      writeJson(
        response,
        failure(this.clock, error.code, error.message, error.fields, supportId(error, request)),
        error.status,
      );
      return;
    }
    if (this.pages) {
      this.pages.answer(error, request, response, domain);
      return;
    }
    // Only the app's own filter answers pages (configureApp hands it the page edge's answers).
    response.status(error.status).type('text/plain').send(error.message);
  }

  /** What failed, with the status `door` answers a domain error with. */
  resolve(exception: unknown, request: Request, door: ErrorDoor = this.api): ResolvedError {
    if (exception instanceof DomainError) {
      const status = door.statusOf(exception);
      const fields =
        exception instanceof ValidationError
          ? exception.fields
          : exception instanceof ConflictError && exception.field
            ? { [exception.field]: exception.message }
            : undefined;
      return {
        status,
        code: exception.code,
        message: exception.message,
        fields,
        retryAfterSeconds: exception.retryAfterSeconds,
      };
    }
    if (isCsrfFailure(exception)) {
      return { status: 403, code: 'csrf_failed', message: CSRF_MESSAGE };
    }
    if (exception instanceof HttpException || isHttpError(exception)) {
      const status = exception instanceof HttpException ? exception.getStatus() : exception.status;
      if (status < 500 && CODE_BY_STATUS[status]) {
        return {
          status,
          code: CODE_BY_STATUS[status],
          message: GENERIC_MESSAGES[status] ?? 'The request was refused.',
        };
      }
    }
    if (isDeadlock(exception)) {
      // Run again and again (Transactions), and each time another write to the same rows won:
      // nothing of it was kept, and the client may send it again in a moment.
      this.logger.warn({
        msg: `Writes kept conflicting during ${request.method} ${loggablePath(request.path)}: ${String(exception)}`,
        reqId: requestIdOf(request),
      });
      return {
        status: 503,
        code: 'service_unavailable',
        message: CONFLICTING_WRITES,
        retryAfterSeconds: 1,
      };
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.error({
        msg: `Database unavailable during ${request.method} ${loggablePath(request.path)}: ${String(exception)}`,
        reqId: requestIdOf(request),
      });
      return {
        status: 503,
        code: 'service_unavailable',
        message: GENERIC_MESSAGES[503],
        retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
      };
    }
    this.logger.error({
      msg: `Unhandled error during ${request.method} ${loggablePath(request.path)}`,
      reqId: requestIdOf(request),
      err: exception instanceof Error ? exception : new Error(String(exception)),
    });
    return { status: 500, code: 'internal_error', message: GENERIC_MESSAGES[500] };
  }
}

/** On a failure of ours (5xx), the request id that names its log lines, for the person to quote. */
export function supportId(error: ResolvedError, request: Request): string | undefined {
  return error.status >= 500 ? requestIdOf(request) : undefined;
}

/** csrf-sync's error, as thrown or as the HttpException Nest wraps middleware errors in. */
function isCsrfFailure(value: unknown): boolean {
  const error = value as { code?: unknown; cause?: { code?: unknown } } | null;
  return error?.code === 'EBADCSRFTOKEN' || error?.cause?.code === 'EBADCSRFTOKEN';
}

/** Errors from Express middleware (body-parser and friends) carry their status this way. */
function isHttpError(value: unknown): value is { status: number; expose: boolean } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { status?: unknown }).status === 'number'
  );
}
