import { Logger } from '@nestjs/common';
import { pageSession } from '../auth/page-session.js';
import type { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import {
  GENERIC_MESSAGES,
  supportId,
  type PageErrorAnswers,
  type ResolvedError,
} from '../common/filters/all-exceptions.filter.js';
import { formOriginOf } from '../common/http/request-state.js';
import { saveSessionIfChanged } from '../common/http/session-state.js';
import { flash, keptInput } from '../common/web/flash.js';
import { signInPageFor } from '../common/web/return-to.js';

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

/**
 * The page half of the one exception filter (`AllExceptionsFilter` resolves what failed and
 * answers the API's envelope): what a person sees when a page request fails.
 */
export class PageErrors implements PageErrorAnswers {
  private readonly logger = new Logger('Errors');

  /**
   * Pages: a refused form goes back to its page with the messages and the values typed; a
   * visitor who must sign in goes to the sign-in page; anything else is an error page.
   */
  answer(error: ResolvedError, request: Request, response: Response): void {
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
      flash(pageSession(request), {
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
}
