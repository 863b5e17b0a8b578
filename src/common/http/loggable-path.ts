/** Pages whose address carries a secret: the token of a link sent by mail (an invitation's too). */
const SECRET_IN_PATH =
  /^(\/(?:verify-email|reset-password|invitations|settings\/profile\/email)\/)(?!resend(?:\/|$)|pending\/)[^/]+/i;

/**
 * The path as a log line may show it: the token of an e-mail link (`/reset-password/<token>`)
 * replaced, so the logs hold no working link. Used by the request log and the error log.
 */
export function loggablePath(path: string): string {
  return path.replace(SECRET_IN_PATH, '$1[redacted]');
}
