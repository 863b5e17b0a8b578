import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { Clock } from '../../clock/clock.js';
import { isDatabaseUnavailable } from '../errors/database-errors.js';
import {
  ConflictError,
  DomainError,
  ValidationError,
  type NextStep,
} from '../errors/domain.error.js';
import { loggablePath } from '../http/loggable-path.js';
import { formOriginOf } from '../http/request-state.js';
import { failure } from '../http/envelope.js';
import { writeJson } from '../http/json-answer.js';
import { flash, keptInput, type FlashHolder } from '../web/flash.js';
import { saveSessionIfChanged } from '../http/session-state.js';
import { signInPageFor } from '../web/return-to.js';
import { CODE_BY_STATUS } from './error-status.js';

export interface ResolvedError {
  status: number;
  code: string;
  message: string;
  fields?: Record<string, string>;
  /** A page to send the person to instead of an error page. */
  redirect?: string;
  nextStep?: NextStep;
  /** Sent as Retry-After: when the client may try again. */
  retryAfterSeconds?: number;
}

/**
 * When to try again after the database (or this instance's cluster node) could not serve, and
 * what any 503 without a time of its own says: a node that rejoins its cluster, or a pool that
 * reconnects, takes a few seconds.
 */
const DATABASE_RETRY_AFTER_SECONDS = 5;

export const GENERIC_MESSAGES: Record<number, string> = {
  400: 'The request could not be understood.',
  404: 'Not found.',
  405: 'That method is not allowed here.',
  413: 'The request body is too large.',
  415: 'That content type is not supported.',
  500: 'Something went wrong on our side.',
  503: 'The service is temporarily unavailable. Try again shortly.',
};

/** Pages a person is sent to instead of an error page. */
const REDIRECTS: Record<string, string> = {
  sign_in_required: '/login',
  already_signed_in: '/dashboard',
};

/** A page's 404 where nothing more precise was said (the API's envelope keeps "Not found."). */
const PAGE_NOT_FOUND =
  'There is nothing at this address, or it is not yours to see. Check the link, or start again from your dashboard.';

/** What an error page says first, in words, by status; the message says what exactly. */
const ERROR_HEADINGS: Record<number, string> = {
  400: 'That request could not be read',
  401: 'Sign in to go on',
  403: 'You cannot do that here',
  404: 'We could not find that page',
  405: 'That is not something this page does',
  409: 'That clashes with something already there',
  410: 'This link no longer works',
  413: 'That was too large to take',
  422: 'Something in that form needs fixing',
  429: 'Too many attempts for now',
  500: 'Sorry, that did not work',
  503: 'Tessera is not available right now',
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
   * `clock` stamps the envelope; `answersInJson`: the paths answered with the envelope, /api's
   * and those a caller adds.
   */
  constructor(
    private readonly clock: Clock,
    private readonly answersInJson: (path: string) => boolean = isApiPath,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.answer(exception, http.getRequest<Request>(), http.getResponse<Response>());
  }

  /** The answer to a request that failed with `exception`; also called before routing. */
  answer(exception: unknown, request: Request, response: Response): void {
    const error = this.resolve(exception, request);
    if (response.headersSent) return;
    // An error answer is about this one request: never kept, by a browser or anyone between.
    response.setHeader('Cache-Control', 'no-store');
    const retryAfter =
      error.retryAfterSeconds ?? (error.status === 503 ? DATABASE_RETRY_AFTER_SECONDS : undefined);
    if (retryAfter) response.setHeader('Retry-After', retryAfter);

    if (this.answersInJson(request.path)) {
      if (exception instanceof DomainError && exception.challenge) {
        response.setHeader('WWW-Authenticate', exception.challenge);
      }
      writeJson(
        response,
        failure(this.clock, error.code, error.message, error.fields, supportId(error, request)),
        error.status,
      );
      return;
    }
    this.answerPage(error, request, response);
  }

  /**
   * Pages: a refused form goes back to its page with the messages and the values typed; a
   * visitor who must sign in goes to the sign-in page; anything else is an error page.
   */
  private answerPage(error: ResolvedError, request: Request, response: Response): void {
    const elsewhere = error.redirect ?? REDIRECTS[error.code];
    if (elsewhere) {
      // After signing in, a visitor goes on to the page they asked for: it travels in the sign-in
      // page's address, so an anonymous visit stores nothing.
      const signIn = error.code === 'sign_in_required' && request.method === 'GET';
      this.redirectOnceSaved(
        request,
        response,
        signIn ? signInPageFor(request.originalUrl) : elsewhere,
      );
      return;
    }
    const form = formOriginOf(request);
    if (form && request.session && (error.status === 409 || error.status === 422)) {
      flash(request.session as FlashHolder, {
        ...(error.fields ? { fields: error.fields } : { error: error.message }),
        old: keptInput(request.body, form.fields),
      });
      this.redirectOnceSaved(request, response, form.page);
      return;
    }
    const page = {
      title: STATUS_CODES[error.status] ?? 'Error',
      heading: ERROR_HEADINGS[error.status] ?? ERROR_HEADINGS[error.status >= 500 ? 500 : 400],
      status: error.status,
      message: error.message === GENERIC_MESSAGES[404] ? PAGE_NOT_FOUND : error.message,
      requestId: supportId(error, request),
      nextStep: error.nextStep,
    };
    response.status(error.status).render('errors/error', page, (renderError, html) => {
      if (renderError) this.logger.error(`Could not render the error page: ${renderError.message}`);
      response.send(renderError ? `${error.status} ${error.message}` : html);
    });
  }

  /** A redirect leaves once the session it changed (its flash) is stored, in one write. */
  private redirectOnceSaved(request: Request, response: Response, url: string): void {
    saveSessionIfChanged(request).then(
      () => response.redirect(303, url),
      (error: unknown) => {
        this.logger.error({
          msg: `Could not store the session: ${String(error)}`,
          reqId: request.id,
        });
        response.status(500).send(GENERIC_MESSAGES[500]);
      },
    );
  }

  resolve(exception: unknown, request: Request): ResolvedError {
    if (exception instanceof DomainError) {
      const status = exception.status;
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
        redirect: exception.pageRedirect,
        nextStep: exception.nextStep,
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
    if (isDatabaseUnavailable(exception)) {
      this.logger.error({
        msg: `Database unavailable during ${request.method} ${loggablePath(request.path)}: ${String(exception)}`,
        reqId: request.id,
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
      reqId: request.id,
      err: exception instanceof Error ? exception : new Error(String(exception)),
    });
    return { status: 500, code: 'internal_error', message: GENERIC_MESSAGES[500] };
  }
}

/** On a failure of ours (5xx), the request id that names its log lines, for the person to quote. */
function supportId(error: ResolvedError, request: Request): string | undefined {
  return error.status >= 500 && request.id ? String(request.id) : undefined;
}

/** Under /api in any case: routing is case-sensitive, but /API/… still gets the API's answers. */
export function isApiPath(path: string): boolean {
  return /^\/api(\/|$)/i.test(path);
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
