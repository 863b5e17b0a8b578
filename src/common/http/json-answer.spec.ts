import { describe, expect, it } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { writeJson } from './json-answer.js';

describe('writeJson', () => {
  const body = {
    success: false,
    error: { code: 'invalid_token', message: 'Zoë <b>& "quoted"' },
    list: [1, null],
  };
  // Set up as Tessera sets Express up (app.setup.ts): no ETags.
  const app = express().set('etag', false);
  app.all('/express', (_req, res) => res.status(401).json(body));
  app.all('/ours', (_req, res) => writeJson(res, body, 401));
  app.all('/status-kept', (_req, res) => {
    res.statusCode = 429;
    writeJson(res, body);
  });

  /** What a client receives, the date aside. */
  const received = async (method: 'get' | 'head', path: string) => {
    const res = await request(app)[method](path);
    const headers = { ...(res.headers as Record<string, string>) };
    delete headers.date;
    return { status: res.status, headers, text: res.text };
  };

  it.each(['get', 'head'] as const)(
    "should answer %s with the status, headers and bytes Express's res.json() sends",
    async (method) => {
      const ours = await received(method, '/ours');
      expect(ours).toEqual(await received(method, '/express'));
      expect(ours.status).toBe(401);
      expect(ours.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(ours.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(body))));
    },
  );

  it('should keep a status set before it', async () => {
    const res = await request(app).get('/status-kept');
    expect(res.status).toBe(429);
    expect(res.body).toEqual(body);
  });
});
