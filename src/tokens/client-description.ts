import { UAParser } from 'ua-parser-js';
import { CLIs, Fetchers, Libraries } from 'ua-parser-js/extensions';

// API clients are mostly command-line tools and HTTP libraries, which the parser knows only
// through these extensions.
const EXTENSIONS = [CLIs, Libraries, Fetchers].flat();
const FALLBACK_MAX = 60;

/**
 * A person's reading of a User-Agent: "Chrome 131 on Linux", "curl 8.5.0", or its first word
 * when the parser knows nothing of it. Worked out when a page shows it, never on the API's path.
 */
export function describeClient(userAgent: string | null): string {
  if (!userAgent) return 'no User-Agent sent';
  const { browser, os } = new UAParser(userAgent, EXTENSIONS).getResult();
  if (!browser.name) return userAgent.split(/[\s/;(]/, 1)[0].slice(0, FALLBACK_MAX) || 'unknown';
  const version = browser.type ? browser.version : browser.major;
  const name = version ? `${browser.name} ${version}` : browser.name;
  return os.name ? `${name} on ${[os.name, os.version].filter(Boolean).join(' ')}` : name;
}
