import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Express } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import request from 'supertest';
import { LogCapture } from './support/log-capture.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Sends `raw` to `server` on a new connection, without closing its side (a request that says
 * `Connection: close`, or one the server refuses, has the server close it), and reads
 * everything until the server closes it.
 */
function exchange(server: Server, raw: string): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parse(answer: string) {
  const [head, body] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 2)]),
  );
  return { statusLine, headers, body: JSON.parse(body) as Record<string, unknown> };
}

describe('HTTP server', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("should receive requests and responses already on Express's prototypes, so Express need not swap them", async () => {
    const express = t.app.getHttpAdapter().getInstance() as Express;
    const seen: { request: boolean; response: boolean }[] = [];
    const check = (req: IncomingMessage, res: ServerResponse) =>
      seen.push({
        request: Object.getPrototypeOf(req) === express.request,
        response: Object.getPrototypeOf(res) === express.response,
      });
    t.server.prependListener('request', check);

    try {
      const api = await request(t.server).get('/api/v1/user/profile');
      const page = await request(t.server).get('/login');

      expect(api.status).toBe(401);
      expect(page.status).toBe(200);
      expect(seen).toEqual([
        { request: true, response: true },
        { request: true, response: true },
      ]);
    } finally {
      t.server.off('request', check);
    }
  });

  it('should answer what node refuses before any route (a bad request line, headers too large) in the JSON envelope, with a request id', async () => {
    const cases = {
      'a bad request line': ['NOT HTTP AT ALL\r\n\r\n', 'HTTP/1.1 400 Bad Request', 'bad_request'],
      'headers too large': [
        `GET /api/v1/team HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        'HTTP/1.1 431 Request Header Fields Too Large',
        'headers_too_large',
      ],
    };
    for (const [name, [raw, statusLine, code]] of Object.entries(cases)) {
      const answer = parse(await exchange(t.server, raw));
      expect({ name, statusLine: answer.statusLine }).toEqual({ name, statusLine });
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.body).toEqual({
        success: false,
        error: { code, message: expect.any(String) },
        version: 'v1',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    }
    // The server goes on answering.
    expect((await request(t.server).get('/health/live')).status).toBe(200);
  });
});

/** Request targets that name no path: `OPTIONS *` and its like skip the pages' middleware. */
describe('HTTP server, odd request targets', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' }, { logs });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should answer like an unknown route, with no error logged, when asked OPTIONS *', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await exchange(
        t.server,
        'OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    }
    expect(logs.entries.filter((e) => e.level === 'error' || e.level === 'fatal')).toEqual([]);
  });
});
