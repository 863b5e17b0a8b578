import { isoTimestampMicros } from '../time/clock.js';

export const API_VERSION = 'v1';

export interface SuccessEnvelope<T> {
  success: true;
  data: T;
  version: typeof API_VERSION;
  timestamp: string;
}

export interface ErrorEnvelope {
  success: false;
  error: { code: string; message: string; fields?: Record<string, string> };
  version: typeof API_VERSION;
  timestamp: string;
}

export function success<T>(data: T): SuccessEnvelope<T> {
  return { success: true, data, version: API_VERSION, timestamp: isoTimestampMicros() };
}

export function failure(
  code: string,
  message: string,
  fields?: Record<string, string>,
): ErrorEnvelope {
  return {
    success: false,
    error: fields ? { code, message, fields } : { code, message },
    version: API_VERSION,
    timestamp: isoTimestampMicros(),
  };
}
