import { UAParser } from 'ua-parser-js';

const FALLBACK_MAX = 60;
/** A User-Agent's first product token, `name/version` (RFC 9110): how API clients name themselves. */
const PRODUCT = /^([A-Za-z0-9][\w.+-]{0,40})\/([\w.+-]{1,20})/;

/**
 * A person's reading of a User-Agent: "Chrome 131 on Linux", "curl 8.5.0", or its first word
 * when nothing better is known. Worked out when a page shows it, never on the API's path.
 * ua-parser-js 1.x (MIT) reads browsers; API clients (curl, HTTP libraries) are read from their
 * product token, which is what the 2.x extensions do (2.x is AGPL-licensed).
 */
export function describeClient(userAgent: string | null): string {
  if (!userAgent) return 'no User-Agent sent';
  const { browser, os } = new UAParser(userAgent).getResult();
  if (!browser.name || !/^Mozilla\//.test(userAgent)) {
    const product = PRODUCT.exec(userAgent);
    if (product) return `${product[1]} ${product[2]}`;
    return userAgent.split(/[\s/;(]/, 1)[0].slice(0, FALLBACK_MAX) || 'unknown';
  }
  const name = browser.major ? `${browser.name} ${browser.major}` : browser.name;
  return os.name ? `${name} on ${[os.name, os.version].filter(Boolean).join(' ')}` : name;
}
