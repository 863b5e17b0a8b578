import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Express } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { createTestApp, type TestApp } from './support/test-app.js';

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
});
