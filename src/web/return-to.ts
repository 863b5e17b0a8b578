import { isReturnPage } from '../auth/return-page.js';

export { isReturnPage } from '../auth/return-page.js';

export const SIGN_IN_PAGE = '/login';
export const DASHBOARD_PAGE = '/dashboard';

/** Where to sign in, carrying the page asked for (the dashboard, where sign-in leads anyway, is left out). */
export function signInPageFor(asked: string): string {
  if (!isReturnPage(asked) || asked === '/' || asked === DASHBOARD_PAGE) return SIGN_IN_PAGE;
  return `${SIGN_IN_PAGE}?return_to=${encodeURIComponent(asked)}`;
}
