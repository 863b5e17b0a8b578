import 'express-session';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in user. */
    userId?: number;
    /** When the user signed in (epoch ms), for the absolute timeout. */
    signedInAt?: number;
    /** When the password was last typed in this session (epoch ms), for sudo mode. */
    passwordConfirmedAt?: number;
    csrfToken?: string;
    /** Messages and form state for the next page only. */
    flash?: import('../common/web/flash.js').Flash;
  }
}
