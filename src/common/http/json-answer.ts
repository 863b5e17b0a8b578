import type { Response } from 'express';

/**
 * Writes `body` as JSON in one call, with the bytes and headers Express's `res.json()` sends in
 * Tessera (no JSON replacer, spacing or escaping is set, and ETags are off): `res.json()` goes
 * through `res.send()`, which parses the content type, looks up the charset and checks
 * freshness for every answer, and together they cost an API answer more than writing it
 * (docs/PERFORMANCE.md). A HEAD request gets the headers only, with the body's length.
 */
export function writeJson(response: Response, body: unknown, statusCode?: number): void {
  if (statusCode !== undefined) response.statusCode = statusCode;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  const json = JSON.stringify(body);
  if (response.req.method === 'HEAD') {
    response.setHeader('Content-Length', Buffer.byteLength(json));
    response.end();
    return;
  }
  response.end(json);
}
