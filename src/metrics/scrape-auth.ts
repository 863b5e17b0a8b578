import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether an Authorization header carries the metrics bearer secret; constant-time. */
export function isAuthorizedScrape(header: string | undefined, token: string | null): boolean {
  if (token === null) return true;
  const match = /^Bearer +(\S+)$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), digest(token));
}
