import type { Clock } from '../../clock/clock.js';

export const API_VERSION = 'v1';

export interface SuccessEnvelope<T> {
  success: true;
  data: T;
  version: typeof API_VERSION;
  timestamp: string;
}

/** One page of a list: `next` is the cursor of the page after it, null on the last. */
export interface PageEnvelope<T> {
  success: true;
  data: T[];
  next: string | null;
  version: typeof API_VERSION;
  timestamp: string;
}

export interface ErrorEnvelope {
  success: false;
  error: {
    code: string;
    message: string;
    fields?: Record<string, string>;
    /** On 5xx answers: the request's X-Request-Id, which names the log lines of the failure. */
    requestId?: string;
  };
  version: typeof API_VERSION;
  timestamp: string;
}

/**
 * The envelopes are stamped with the time of the application's clock (`clock`, injected where
 * they are made), so that a test's ManualClock moves the stamps too.
 */
export function success<T>(clock: Clock, data: T): SuccessEnvelope<T> {
  return { success: true, data, version: API_VERSION, timestamp: clock.isoMicros() };
}

/** A page of a list; the timestamp stays the last member (json-answer.ts digests what precedes it). */
export function page<T>(clock: Clock, data: T[], next: string | null): PageEnvelope<T> {
  return { success: true, data, next, version: API_VERSION, timestamp: clock.isoMicros() };
}

export function failure(
  clock: Clock,
  code: string,
  message: string,
  fields?: Record<string, string>,
  requestId?: string,
): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = fields ? { code, message, fields } : { code, message };
  if (requestId) error.requestId = requestId;
  return {
    success: false,
    error,
    version: API_VERSION,
    timestamp: clock.isoMicros(),
  };
}
