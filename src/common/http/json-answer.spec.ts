import { afterEach, describe, expect, it } from '@jest/globals';
import express, { type Request, type Response } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeJson } from './json-answer.js';

describe('writeJson', () => {
  let server: Server | undefined;

  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  it("should send the status, headers and bytes Express's res.json() sends, for GET and HEAD", async () => {
    const app = express();
    // As Tessera sets it up (app.setup.ts).
    app.set('etag', false);
    const body = {
      success: false,
      error: { code: 'invalid_token', message: 'Zoë <b>& "quoted"' },
      list: [1, null],
    };
    app.all('/express', (req: Request, res: Response) => res.status(401).json(body));
    app.all('/ours', (req: Request, res: Response) => writeJson(res, body, 401));
    app.all('/status-kept', (req: Request, res: Response) => {
      res.statusCode = 429;
      writeJson(res, body);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const headers = (r: globalThis.Response) => {
      const all = Object.fromEntries(r.headers);
      delete all.date;
      return all;
    };

    for (const method of ['GET', 'HEAD']) {
      const [theirs, ours] = await Promise.all([
        fetch(`${url}/express`, { method }),
        fetch(`${url}/ours`, { method }),
      ]);
      expect(ours.status).toBe(401);
      expect(headers(ours)).toEqual(headers(theirs));
      expect(headers(ours)['content-type']).toBe('application/json; charset=utf-8');
      expect(await ours.text()).toBe(await theirs.text());
    }
    const kept = await fetch(`${url}/status-kept`);
    expect(kept.status).toBe(429);
    expect(await kept.json()).toEqual(body);
  });
});
