/**
 * How long a session kept signed in ("Keep me signed in" at sign-in) lasts, idle or not: in
 * place of the idle and absolute timeouts, which stay what they are for every other session.
 */
export const KEPT_SIGNED_IN_DAYS = 30;
export const KEPT_SIGNED_IN_MS = KEPT_SIGNED_IN_DAYS * 86_400_000;
