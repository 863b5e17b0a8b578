import { pageSession } from './page-session.js';
import type { Request } from 'express';

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
