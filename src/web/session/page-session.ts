import type { Request } from 'express';
import type { Session } from 'express-session';

/** What one page hands to the next across a redirect. */
export interface Flash {
  notice?: string;
  error?: string;
  fields?: Record<string, string>;
  /** The submitted values, to fill the form again; passwords and one-time codes are never kept. */
  old?: Record<string, unknown>;
  /** Where the refused form was sent: a page with several forms shows the errors on that one. */
  form?: string;
}

/** Adds to what the next page shows (the pages' edge reads it: web/flash.ts). */
export function flash(session: { flash?: Flash }, value: Flash): void {
  session.flash = { ...session.flash, ...value };
}

/**
 * What the pages' session holds, typed here and read through `pageSession` rather than declared
 * onto express-session's SessionData for every module to read unseen.
 */
export interface PageSessionData {
  /** The signed-in user. */
  userId?: number;
  /** When the user signed in (epoch ms), for the absolute timeout. */
  signedInAt?: number;
  /** When the password was last typed in this session (epoch ms), for sudo mode. */
  passwordConfirmedAt?: number;
  /**
   * That time was a passkey's (signing in or confirming with one), not the password's: it
   * does not count where only the password will do (adding a passkey, two-factor changes).
   */
  sudoByPasskey?: boolean;
  /**
   * A sign-in whose password was right, waiting for the second factor: nobody is signed in
   * yet. `attempt` names it for the limit on wrong codes; `at` is when the password was typed;
   * `credentialStamp` is the account's stamp then (a password changed since ends it).
   */
  pendingSignIn?: {
    userId: number;
    attempt: string;
    credentialStamp: string;
    at: number;
    returnTo?: string;
    /** "Keep me signed in" was ticked with the password. */
    keepSignedIn?: boolean;
  };
  /** Signed in with "Keep me signed in": KEPT_SIGNED_IN_DAYS, in place of the usual timeouts. */
  keptSignedIn?: boolean;
  /** A two-factor setup under way: its secret, encrypted, until a code confirms it. */
  twoFactorSetup?: { secret: string; startedAt: number };
  /** The account's credential stamp at sign-in; the session ends when it no longer matches. */
  credentialStamp?: string;
  /** The browser and address last seen on this session, and when (epoch ms), for its list. */
  activity?: { userAgent: string; ip: string; at: number };
  /** A form that waits for the password to be confirmed, to be sent again then (sudo mode). */
  pendingAction?: PendingAction;
  /** The address this browser signed up with last, for the check-your-mail page. */
  signUpEmail?: string;
  /** Whether that sign-up came from an invitation's link (its team is joined on confirmation), for the same page. */
  signUpInvited?: boolean;
  /** When this session last asked for a passkey challenge: a visitor's session is kept for it. */
  passkeyAskedAt?: number;
  /** Messages and form state for the next page only. */
  flash?: Flash;
}

/**
 * A form refused for want of a recent password, kept in the session to be sent again once the
 * password is confirmed (GitHub's sudo mode resumes the action the same way): where it posts,
 * the page it belongs to, what it does in words, and its fields (never a password or a code).
 */
export interface PendingAction {
  path: string;
  page: string;
  label: string;
  fields: Record<string, unknown>;
  at: number;
  /** Only the password may confirm it (SudoOptions). */
  passwordOnly?: boolean;
  /**
   * When the person confirmed their password on the page that named this action: only then
   * may the continue page send it, once.
   */
  confirmedAt?: number;
}

/** The page's session (express-session's, with what Tessera keeps in it). */
export type PageSession = Session & PageSessionData;

/** The request's session, as the pages use it (present on page requests only). */
export function pageSession(req: Request): PageSession {
  return req.session as PageSession;
}

/**
 * How often a session's row is written for its use alone, at most: its browser, address and last
 * activity (the Sessions page is as accurate as this) and its expiry moved forward.
 */
export const SESSION_ACTIVITY_EVERY_MS = 60_000;
const USER_AGENT_MAX = 255;

/**
 * Notes in the session which browser and address use it and when, for the list of signed-in
 * sessions. The session is changed (and so written) only when a minute has passed or the
 * browser or address differ: a page view costs no write of its own.
 */
export function noteActivity(req: Request, now: number): void {
  const userAgent = (req.get('user-agent') ?? '').slice(0, USER_AGENT_MAX);
  const ip = req.ip ?? '';
  const last = pageSession(req).activity;
  if (
    last &&
    now - last.at < SESSION_ACTIVITY_EVERY_MS &&
    last.userAgent === userAgent &&
    last.ip === ip
  ) {
    return;
  }
  pageSession(req).activity = { userAgent, ip, at: now };
}
