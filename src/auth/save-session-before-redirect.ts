import type { Request, Response } from 'express';

/**
 * express-session sends a response's headers before its store has saved the session (it holds
 * back only the last byte of the body), and a browser follows a redirect as soon as it has the
 * headers: the next page could load the session without the flash or the new token just put in
 * it. A redirect from a page therefore waits until the session is saved.
 */
export function saveSessionBeforeRedirect(req: Request, res: Response): void {
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = ((...args: unknown[]) => {
    // A session with nothing in it is not stored: an anonymous redirect writes no row.
    if (!req.session || !Object.keys(req.session).some((key) => key !== 'cookie')) {
      return redirect(...args);
    }
    req.session.save((error) => (error ? req.next?.(error) : redirect(...args)));
  }) as Response['redirect'];
}
