import type { Request } from 'express';

/**
 * Where the browser says a request comes from, by Fetch Metadata's `Sec-Fetch-Site`:
 * `same-origin` (a page of this site), `same-site`, `cross-site`, `none` (typed, bookmarked), or
 * undefined when nothing says (a client that is not a browser, or an old one).
 */
export function fetchSiteOf(req: Request): string | undefined {
  const value = req.headers['sec-fetch-site'];
  return typeof value === 'string' ? value.toLowerCase() : undefined;
}

/** A navigation the browser says started on this site's pages or with the person alone. */
export function isNavigationFromHere(req: Request): boolean {
  const site = fetchSiteOf(req);
  return site === 'same-origin' || site === 'none';
}
