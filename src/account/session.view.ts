import { UAParser } from 'ua-parser-js';
import type { Session } from '../auth/session.entity.js';
import { sessionHandle } from '../auth/session-digests.js';

/** A signed-in session as its list shows it: never its id, which would sign anyone in. */
export interface SessionView {
  /** An opaque name for the session in forms: a digest of its id. */
  handle: string;
  browser: string;
  os: string;
  ip: string;
  lastActiveAt: Date;
  current: boolean;
  /** Signed in with "Keep me signed in": it lasts longer, idle or not. */
  kept: boolean;
}

function named(part: { name?: string; version?: string }, fallback: string): string {
  if (!part.name) return fallback;
  const major = part.version?.split('.')[0];
  return major ? `${part.name} ${major}` : part.name;
}

export function toSessionView(row: Session, currentId: string): SessionView {
  const parsed = new UAParser(row.userAgent ?? '').getResult();
  return {
    handle: sessionHandle(row.id),
    browser: named(parsed.browser, 'Unknown browser'),
    os: named(parsed.os, 'unknown system'),
    ip: row.ip ?? 'unknown address',
    lastActiveAt: row.lastActiveAt ?? row.createdAt,
    current: row.id === currentId,
    kept: keptSignedIn(row.data),
  };
}

/** Whether the session's stored data says it was kept signed in. */
function keptSignedIn(data: string): boolean {
  try {
    return (JSON.parse(data) as { keptSignedIn?: unknown }).keptSignedIn === true;
  } catch {
    return false;
  }
}
