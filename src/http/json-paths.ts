/**
 * The paths answered in JSON, with no session and no CSRF token; every other path is a page's.
 */

/** Under /api in any case: routing is case-sensitive, but /API/… still gets the API's answers. */
export const API_PATH = /^\/api(\/|$)/i;

export function isApiPath(path: string): boolean {
  return API_PATH.test(path);
}

/**
 * Where a secret scanner's reports arrive (when reports are taken), in every spelling Express
 * routes to it: any case, a trailing slash.
 */
export function isTokenReportsPath(path: string): boolean {
  return /^\/security\/token-reports\/?$/i.test(path);
}
