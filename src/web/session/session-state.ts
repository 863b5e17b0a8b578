import type { Request } from 'express';

/**
 * What the page's session held when the request loaded it, to tell whether the request changed
 * it: a session is written only when it changed, once, before the answer leaves.
 */
const loaded = new WeakMap<Request, string>();

/** The session's contents, its cookie aside, as express-session compares them. */
function contentsOf(req: Request): string {
  return JSON.stringify(req.session, (key, value: unknown) =>
    key === 'cookie' ? undefined : value,
  );
}

/** Called once the request's session is loaded (or made). */
export function noteSessionLoaded(req: Request): void {
  if (req.session) loaded.set(req, contentsOf(req));
}

/**
 * Stores the session now if the request changed it (a redirect must not reach the browser before
 * the flash or the new sign-in it carries is stored): express-session then finds it saved and
 * writes nothing more when the answer ends. A session with nothing in it is not stored.
 */
export function saveSessionIfChanged(req: Request): Promise<void> {
  const session = req.session;
  if (!session || !Object.keys(session).some((key) => key !== 'cookie')) return Promise.resolve();
  if (loaded.get(req) === contentsOf(req)) return Promise.resolve();
  return new Promise((resolve, reject) =>
    session.save((error?: unknown) => {
      if (error) return reject(error instanceof Error ? error : new Error(String(error)));
      loaded.set(req, contentsOf(req));
      resolve();
    }),
  );
}
