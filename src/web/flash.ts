import type { Flash } from './session/page-session.js';

export { flash, type Flash } from './session/page-session.js';

/** Whatever holds a flash: the page's session. */
type FlashHolder = { flash?: Flash };

/**
 * Passwords, CSRF tokens, sign-in codes (`code`, `recovery_code`) and an audit stream's
 * Authorization value: never sent back.
 */
const NEVER_KEPT = /password|_csrf|code|authorization/i;

/** Reads the flash and clears it, so it shows once. */
export function takeFlash(session: FlashHolder | undefined): Flash {
  const value = session?.flash ?? {};
  if (session?.flash) delete session.flash;
  return value;
}

/** A value longer than this is not sent back to the form: no field of ours takes one. */
const KEPT_VALUE_MAX = 2_000;
const KEPT_LIST_MAX = 50;
/**
 * All kept values together, in characters: at most 4 bytes each in the session's JSON, well
 * inside the 64 KB of MySQL's TEXT column with everything else a session holds.
 */
const KEPT_TOTAL_MAX = 8_000;

/**
 * What a refused form may show back: only the form's own `fields`, as text or lists of text of a
 * sensible size, never secrets; nothing at all when together they are too large. The flash lives
 * in the session, so whatever else a client posts stays out of it.
 */
export function keptInput(body: unknown, fields: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null) return {};
  const isText = (v: unknown): v is string => typeof v === 'string' && v.length <= KEPT_VALUE_MAX;
  const kept: Record<string, unknown> = {};
  for (const field of fields) {
    const value = (body as Record<string, unknown>)[field];
    if (NEVER_KEPT.test(field)) continue;
    if (isText(value)) kept[field] = value;
    else if (Array.isArray(value) && value.length <= KEPT_LIST_MAX && value.every(isText)) {
      kept[field] = value;
    }
  }
  return JSON.stringify(kept).length <= KEPT_TOTAL_MAX ? kept : {};
}
