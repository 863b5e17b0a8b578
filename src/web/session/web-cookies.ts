import type { Config } from '../../config/config.js';

/**
 * The pages' cookies. With an https APP_URL they are `__Host-` cookies (always Secure, for the
 * host alone, path `/`), which no other host of the domain can set: a sibling subdomain cannot
 * toss its own session, CSRF pair or visitor id into a browser. Over plain http the prefix is
 * not allowed, and Secure follows the request (through a trusted proxy too).
 */
export interface WebCookies {
  /** The session's id. */
  session: string;
  /** The CSRF token's cookie half. */
  csrf: string;
  /** A visitor's random id, that a visitor's CSRF tokens are bound to. */
  visitor: string;
  /** `true` with an https APP_URL; else Secure whenever the request came over HTTPS. */
  secure: true | 'auto';
}

export function webCookiesFor(config: Config): WebCookies {
  const https = config.app.publicUrl.startsWith('https:');
  const prefix = https ? '__Host-' : '';
  return {
    session: `${prefix}tessera.sid`,
    csrf: `${prefix}tessera.csrf`,
    visitor: `${prefix}tessera.visitor`,
    secure: https ? true : 'auto',
  };
}
