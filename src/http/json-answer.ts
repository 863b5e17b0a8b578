import type { Response } from 'express';
import { hash } from 'node:crypto';

/** What the envelope ends with: the answer's time, the one part that differs on every answer. */
const TIMESTAMP_MEMBER = ',"timestamp":';

/**
 * An answer with a status of its own, whatever the route's usual one: an answer given again
 * (the first answer to an idempotent request, which may have been a refusal).
 */
export class JsonAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/**
 * Writes `body` as JSON in one call, with the bytes and headers Express's `res.json()` sends in
 * Tessera (no JSON replacer, spacing or escaping is set, and ETags are off): `res.json()` goes
 * through `res.send()`, which parses the content type, looks up the charset and checks
 * freshness for every answer, and together they cost an API answer more than writing it
 * (docs/PERFORMANCE.md). A HEAD request gets the headers only, with the body's length.
 *
 * A successful GET (or HEAD) of an envelope carries an ETag: a digest of the answer up to its
 * timestamp, which is the envelope's last member and the one part that changes on every answer.
 * A client that sends it back in If-None-Match gets 304 and no body while the answer is the
 * same (docs/api.md).
 */
export function writeJson(response: Response, body: unknown, statusCode?: number): void {
  if (statusCode !== undefined) response.statusCode = statusCode;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  const json = JSON.stringify(body);
  const method = response.req.method;
  const read = method === 'GET' || method === 'HEAD';
  if (read && response.statusCode === 200 && (body as { success?: unknown }).success === true) {
    const end = json.lastIndexOf(TIMESTAMP_MEMBER);
    const tag = `W/"${hash('sha1', end < 0 ? json : json.slice(0, end), 'base64url')}"`;
    response.setHeader('ETag', tag);
    if (matches(response.req.headers['if-none-match'], tag)) {
      response.statusCode = 304;
      response.removeHeader('Content-Type');
      response.end();
      return;
    }
  }
  if (method === 'HEAD') {
    response.setHeader('Content-Length', Buffer.byteLength(json));
    response.end();
    return;
  }
  response.end(json);
}

/** RFC 9110's weak comparison of If-None-Match with the answer's tag; `*` matches any. */
function matches(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  const opaque = tag.slice(2);
  return header.split(',').some((candidate) => {
    const value = candidate.trim();
    return value === '*' || value === tag || value === opaque;
  });
}
