import { createHash } from 'node:crypto';

/**
 * The two digests a browser session is known by without revealing what they are made of.
 */

/** The name a session goes by in the sessions page, its forms and the security log. */
export function sessionHandle(sessionId: string): string {
  return createHash('sha256').update(`tessera-session-handle:${sessionId}`).digest('base64url');
}

/** The session data's key that holds its credential stamp (`credentialStamp` below). */
export const CREDENTIAL_STAMP_KEY = 'credentialStamp';

/**
 * A short digest of the account's password hash, kept in the session at sign-in: when the
 * password changes, every session signed in under the old one no longer matches and ends, on
 * every instance, even one that a request in flight wrote back after the reset deleted it.
 */
export function credentialStamp(passwordHash: string | null): string {
  return createHash('sha256')
    .update(`tessera-session:${passwordHash ?? ''}`)
    .digest('base64url')
    .slice(0, 22);
}
