import { afterEach, describe, expect, it } from '@jest/globals';
import type { RequestHandler } from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { helmetMiddleware, securityHeaders } from './security-headers.js';

describe('securityHeaders', () => {
  let server: Server | undefined;

  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  /** The headers a real response carries after `middleware`, without the ones node adds. */
  async function headersAfter(middleware: RequestHandler, secure = false): Promise<object> {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      Object.assign(req, { secure });
      const handle = middleware as unknown as (
        q: IncomingMessage,
        s: ServerResponse,
        next: () => void,
      ) => void;
      handle(req, res, () => res.end());
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/`);
    await res.arrayBuffer();
    const headers = Object.fromEntries(res.headers);
    for (const node of ['date', 'connection', 'keep-alive', 'content-length']) delete headers[node];
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    return headers;
  }

  it("should send exactly helmet's headers, set once", async () => {
    const ours = await headersAfter(securityHeaders());
    expect(ours).toEqual(await headersAfter(helmetMiddleware()));
    expect(ours).toMatchObject({
      'content-security-policy': expect.stringContaining("default-src 'self'"),
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    expect(ours).not.toHaveProperty('strict-transport-security');
  });

  it('should add HSTS over HTTPS only', async () => {
    expect(await headersAfter(securityHeaders(), true)).toMatchObject({
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
    });
  });
});
