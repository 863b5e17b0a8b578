import 'express-session';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in user. */
    userId?: number;
    /** The page a visitor asked for before being sent to sign in. */
    returnTo?: string;
    /** When the user signed in (epoch ms), for the absolute timeout. */
    signedInAt?: number;
    csrfToken?: string;
    /** Messages and form state for the next page only. */
    flash?: import('../common/web/flash.js').Flash;
    /** A just-created token, sealed, shown by the next render of the tokens page only. */
    revealToken?: { id: number; name: string; sealed: string };
  }
}
