import type { SessionData } from 'express-session';

/** What one page hands to the next across a redirect. */
export interface Flash {
  notice?: string;
  error?: string;
  fields?: Record<string, string>;
  /** The submitted values, to fill the form again; passwords are never kept. */
  old?: Record<string, unknown>;
}

type FlashHolder = Partial<Pick<SessionData, 'flash'>>;

const NEVER_KEPT = /password|_csrf/i;

export function flash(session: FlashHolder, value: Flash): void {
  session.flash = { ...session.flash, ...value };
}

/** Reads the flash and clears it, so it shows once. */
export function takeFlash(session: FlashHolder | undefined): Flash {
  const value = session?.flash ?? {};
  if (session?.flash) delete session.flash;
  return value;
}

/** What a form may show back: text and lists of text, never secrets or odd shapes. */
export function keptInput(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null) return {};
  const isText = (v: unknown) => typeof v === 'string';
  return Object.fromEntries(
    Object.entries(body).filter(
      ([key, value]) =>
        !NEVER_KEPT.test(key) && (isText(value) || (Array.isArray(value) && value.every(isText))),
    ),
  );
}
