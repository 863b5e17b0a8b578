/** The longest page address worth coming back to. */
const RETURN_TO_MAX = 2_000;

/** A download (`…/export`): after signing in, the page with its link, not the file alone. */
const DOWNLOAD = /\/export\/?(\?.*)?$/i;

/**
 * A page to go on to after signing in: only a page of this site, and not one of the sign-in
 * pages themselves, nor what is no page (the API's answers, the metrics).
 */
export function isReturnPage(path: unknown): path is string {
  return (
    typeof path === 'string' &&
    path.length <= RETURN_TO_MAX &&
    /^\/(?![/\\])[^\s]*$/.test(path) &&
    !/^\/(login|register|logout)\b/i.test(path) &&
    !/^\/(api|metrics)(?=[/?]|$)/i.test(path) &&
    !DOWNLOAD.test(path)
  );
}

export const SIGN_IN_PAGE = '/login';
export const DASHBOARD_PAGE = '/dashboard';
/** Where signing out leads: the sign-in page, saying so. */
export const SIGNED_OUT_PAGE = '/login?signed_out=1';

/**
 * Where to sign in, carrying the page asked for (the dashboard, where sign-in leads anyway, is
 * left out), and, when the browser's session has just ended, that it has, for the page to say.
 */
export function signInPageFor(asked: string, sessionEnded = false): string {
  const page = asked.replace(DOWNLOAD, '');
  const query = new URLSearchParams();
  if (isReturnPage(page) && page !== '/' && page !== DASHBOARD_PAGE) query.set('return_to', page);
  if (sessionEnded) query.set('session_ended', '1');
  return query.size > 0 ? `${SIGN_IN_PAGE}?${query}` : SIGN_IN_PAGE;
}
