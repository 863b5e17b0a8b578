import { Logger } from '@nestjs/common';
import { pageSession } from './session/page-session.js';
import type { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { DomainError } from '../common/errors/domain.error.js';
import {
  answerIn,
  GENERIC_MESSAGES,
  supportId,
  type AnswerTable,
  type ErrorStatus,
  type PageErrorAnswers,
  type ResolvedError,
} from '../http/all-exceptions.filter.js';
import { formOriginOf, requestIdOf } from '../http/request-state.js';
import { saveSessionIfChanged, sessionEndedFor } from './session/web-session.js';
import { flash, keptInput } from './flash.js';
import { CrossSiteRequestError, type CrossSiteAttempt } from '../auth/auth.errors.js';
import { AccountLinkError, type LinkPurpose } from '../one-time-links/one-time-links.errors.js';
import { NoPendingSignInError } from './sign-in/two-factor-sign-in.js';
import {
  DASHBOARD_PAGE,
  isReturnPage,
  SIGN_IN_PAGE,
  SIGNED_OUT_PAGE,
  signInPageFor,
} from './return-to.js';
import { signedInUserOf } from './page-context.js';
import { confirmationPage, PasswordConfirmationRequiredError } from './sudo-mode.js';

/** Where a person can go on from an error page (ask for a new link, say). */
export interface NextStep {
  href: string;
  label: string;
}

/**
 * What a page answers a domain error with: its status, and instead of an error page a redirect
 * (`redirect`, given the request) or, on the error page, a way on (`nextStep`).
 */
interface PageAnswer {
  status: ErrorStatus;
  /** Where to, given the request and the page a form's address belongs to (`pageOf`). */
  redirect?: (request: Request, pageOf: (path: string) => string) => string;
  nextStep?: NextStep;
  /** What the error page says first, where its status's heading would not fit. */
  heading?: string;
  /** The form field a refused form shows the message under, when the form has it. */
  field?: string;
}

const TO_DASHBOARD: NextStep = { href: DASHBOARD_PAGE, label: 'Go to your dashboard' };

/**
 * A form refused for its token by someone not signed in: most often a page left open past its
 * session (signed out in another tab, or idle too long). Nothing was done, and nothing is stored
 * for a visitor; the page says how to go on.
 */
const SESSION_ENDED =
  ' If you were signed in, your session has ended meanwhile: sign in again, then send the form again.';

/**
 * A sign-in or sign-out sent from a page left open in another tab after it already happened
 * there: the form's token was made for the session before, so it no longer matches. Nothing is
 * left to do and nothing is done; the browser goes where the form would have led.
 */
function alreadyDone(request: Request): string | undefined {
  const signedIn = signedInUserOf(request) !== undefined;
  if (signedIn && (request.path === SIGN_IN_PAGE || request.path === `${SIGN_IN_PAGE}/passkey`)) {
    const returnTo = (request.body as { return_to?: unknown } | undefined)?.return_to;
    return isReturnPage(returnTo) ? returnTo : DASHBOARD_PAGE;
  }
  if (!signedIn && request.path === '/logout') return SIGNED_OUT_PAGE;
  return undefined;
}

/** The address of a download: a page's own, with `/export` after it. */
const DOWNLOAD_PATH = /\/export\/?$/;

/**
 * A page asked for with an address it cannot read (a filter it does not know, an edited link):
 * the same page, as it is with none.
 */
function unfilteredPage(request: Request, error: ResolvedError): NextStep | undefined {
  if (request.method !== 'GET' || error.status !== 422) return undefined;
  // A download's address (`…/export`) leads to its page.
  return { href: request.path.replace(DOWNLOAD_PATH, ''), label: 'Show this page without filters' };
}

const CROSS_SITE_NEXT: Record<CrossSiteAttempt, NextStep> = {
  visitor_form: { href: SIGN_IN_PAGE, label: 'Go to sign-in' },
  resumed_action: TO_DASHBOARD,
};

/** Where to ask for a new link, by what the link was for. */
const LINK_NEXT: Record<LinkPurpose, NextStep> = {
  invitation: TO_DASHBOARD,
  'email change': { href: '/settings/profile', label: 'Back to your profile' },
  'password reset': { href: '/forgot-password', label: 'Ask for a new link' },
  confirmation: { href: '/settings/api-tokens', label: 'Ask for a new link' },
};

const linkAnswer =
  (status: ErrorStatus, heading?: string) =>
  (error: DomainError): PageAnswer => ({
    status,
    nextStep: LINK_NEXT[(error as AccountLinkError).purpose],
    heading,
  });

/**
 * The one table of the pages' answers to domain errors. A refused form (409, 422) goes back to
 * its page with a flash; a redirect replaces the error page; anything else is the error page.
 */
const PAGE_ANSWERS: AnswerTable<PageAnswer> = {
  not_found: { status: 404 },
  forbidden: { status: 403 },
  validation_failed: { status: 422 },
  still_referenced: { status: 422 },
  rate_limited: { status: 429 },
  service_unavailable: { status: 503 },
  server_busy: { status: 503 },
  bad_request: { status: 400 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  idempotency_key_in_use: { status: 409 },
  idempotency_key_reused: { status: 422 },
  missing_token: { status: 401 },
  invalid_token: { status: 401 },
  token_revoked: { status: 409 },
  token_expired: { status: 401 },
  token_changed: { status: 409 },
  recovery_codes_changed: { status: 409 },
  account_disabled: { status: 403 },
  insufficient_scope: { status: 403 },
  ability_not_allowed_by_team: { status: 403 },
  team_access_lost: { status: 403 },
  two_factor_required: { status: 403 },
  token_lifetime_exceeds_policy: { status: 403 },
  ambiguous_token_name: { status: 409 },
  signature_required: { status: 401 },
  unknown_key: { status: 401 },
  invalid_signature: { status: 401 },
  malformed_report: { status: 400 },
  // Under the password, which is typed again (the address is kept): that field is marked and
  // focused. Which of the two was wrong is not said.
  invalid_credentials: { status: 422, field: 'password' },
  // After signing in, a visitor goes on to the page they asked for: it travels in the sign-in
  // page's address, so an anonymous visit stores nothing.
  sign_in_required: {
    status: 401,
    redirect: (request, pageOf) =>
      signInPageFor(
        // A form (sent as its session ended on arrival, say) comes back to its page.
        request.method === 'GET' ? request.originalUrl : pageOf(request.path),
        sessionEndedFor(request),
      ),
  },
  sign_in_expired: (error) => ({
    status: 401,
    redirect: () => signInPageFor((error as NoPendingSignInError).returnTo ?? '/'),
  }),
  already_signed_in: { status: 409, redirect: () => DASHBOARD_PAGE },
  cross_site_request: (error) => ({
    status: 403,
    nextStep: CROSS_SITE_NEXT[(error as CrossSiteRequestError).attempt],
  }),
  password_confirmation_required: (error) => ({
    status: 403,
    redirect: () => {
      const { returnTo, options } = error as PasswordConfirmationRequiredError;
      return confirmationPage(returnTo, options);
    },
  }),
  email_taken: { status: 409 },
  email_not_verified: {
    status: 403,
    nextStep: { href: '/settings/api-tokens', label: 'Back to API tokens' },
  },
  owns_shared_teams: { status: 409 },
  account_state_unchanged: { status: 409 },
  no_second_factor: { status: 409 },
  link_expired: linkAnswer(410),
  link_used: linkAnswer(410),
  // A mistyped link, or one a newer link replaced: not a page that went missing.
  link_unknown: linkAnswer(404, 'This link does not work'),
  link_withdrawn: linkAnswer(410),
  two_factor_enabled: { status: 409 },
  two_factor_not_enabled: { status: 409 },
  two_factor_setup_expired: { status: 409, redirect: () => '/settings/security' },
  too_many_passkeys: { status: 409 },
  passkey_exists: { status: 409 },
  owner_role: { status: 409 },
  already_member: { status: 409 },
  personal_team: { status: 409 },
  owner_cannot_leave: { status: 409 },
  already_invited: { status: 409 },
  wrong_invitee: { status: 403, nextStep: TO_DASHBOARD },
  service_account_limit: { status: 409 },
  service_account_name_taken: { status: 409 },
  webhook_endpoint_limit: { status: 409 },
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

/**
 * The page half of the one exception filter (`AllExceptionsFilter` resolves what failed and
 * answers the API's envelope): what a person sees when a page request fails.
 */
export class PageErrors implements PageErrorAnswers {
  private readonly logger = new Logger('Errors');

  /** `pageOf`: the page a form's address belongs to, to sign in again and come back to it. */
  constructor(private readonly pageOf: (path: string) => string = () => '/') {}

  /**
   * Pages: a refused form goes back to its page with the messages and the values typed; a
   * visitor who must sign in goes to the sign-in page; anything else is an error page.
   */
  statusOf(error: DomainError): ErrorStatus {
    return answerIn(PAGE_ANSWERS, error).status;
  }

  answer(error: ResolvedError, request: Request, response: Response, domain?: DomainError): void {
    const answer = domain && answerIn(PAGE_ANSWERS, domain);
    if (answer?.redirect) {
      this.redirectOnceSaved(request, response, answer.redirect(request, this.pageOf));
      return;
    }
    const form = formOriginOf(request);
    if (form && request.session && (error.status === 409 || error.status === 422)) {
      const fields =
        error.fields ??
        (answer?.field && form.fields.includes(answer.field)
          ? { [answer.field]: error.message }
          : undefined);
      flash(pageSession(request), {
        ...(fields ? { fields } : { error: error.message }),
        old: keptInput(request.body, form.fields),
        form: request.path,
      });
      this.redirectOnceSaved(request, response, form.page);
      return;
    }
    const done = error.code === 'csrf_failed' ? alreadyDone(request) : undefined;
    if (done) {
      this.redirectOnceSaved(request, response, done);
      return;
    }
    const sessionEnded = error.code === 'csrf_failed' && pageSession(request)?.userId === undefined;
    const page = {
      title: STATUS_CODES[error.status] ?? 'Error',
      heading:
        answer?.heading ??
        ERROR_HEADINGS[error.status] ??
        ERROR_HEADINGS[error.status >= 500 ? 500 : 400],
      status: error.status,
      message:
        error.message === GENERIC_MESSAGES[404]
          ? PAGE_NOT_FOUND
          : sessionEnded
            ? `${error.message}${SESSION_ENDED}`
            : error.message,
      requestId: supportId(error, request),
      nextStep: sessionEnded
        ? { href: signInPageFor(this.pageOf(request.path)), label: 'Sign in' }
        : (answer?.nextStep ?? unfilteredPage(request, error)),
    };
    // A download refused (an export's bad filter) is answered with the page, not as its file.
    response.removeHeader('Content-Disposition');
    response.removeHeader('Content-Type');
    response.status(error.status).render('errors/error', page, (renderError, html) => {
      if (renderError) this.logger.error(`Could not render the error page: ${renderError.message}`);
      response.send(renderError ? `${error.status} ${error.message}` : html);
    });
  }

  /**
   * A redirect leaves once the session it changed (its flash) is stored, in one write. When the
   * session cannot be stored, that failure is the request's answer (a 503 page when the database
   * is busy or away), as for a page's own redirect.
   */
  private redirectOnceSaved(request: Request, response: Response, url: string): void {
    saveSessionIfChanged(request).then(
      () => response.redirect(303, url),
      (error: unknown) => {
        this.logger.error({
          msg: `Could not store the session: ${String(error)}`,
          reqId: requestIdOf(request),
        });
        if (request.next) request.next(error);
        else response.status(500).send(GENERIC_MESSAGES[500]);
      },
    );
  }
}
