import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Clock } from '../clock/clock.js';
import { failure } from '../common/http/envelope.js';
import { REQUEST_ID_HEADER } from '../common/http/request-id-header.js';

/** What node's parser refuses before any request exists, by its error code. */
const REFUSALS: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'headers_too_large',
    message: 'The request headers are too large.',
  },
  HPE_REQUEST_TIMEOUT: {
    status: 408,
    code: 'request_timeout',
    message: 'The request took too long to arrive.',
  },
};

const BAD_REQUEST = {
  status: 400,
  code: 'bad_request',
  message: 'The request could not be understood.',
};

/**
 * Answers what node's HTTP parser refuses (a bad request line, headers too large, a request
 * too slow to arrive) in the API's JSON envelope with a request id, instead of node's bare
 * status line, stamped by the app's `clock`. Nothing reached the app, so nothing else is
 * written: the connection closes.
 */
export function answerClientError(
  clock: Clock,
  error: Error & { code?: string },
  socket: Duplex,
): void {
  // A connection already reset, or one that has begun an answer, can only be closed.
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, code, message } = (error.code && REFUSALS[error.code]) || BAD_REQUEST;
  const body = JSON.stringify(failure(clock, code, message));
  socket.end(
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `${REQUEST_ID_HEADER}: ${randomUUID()}`,
      'Cache-Control: no-store',
      'X-Content-Type-Options: nosniff',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
