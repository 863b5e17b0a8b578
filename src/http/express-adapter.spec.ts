import { afterEach, describe, expect, it } from '@jest/globals';
import type { Express, Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SystemClock } from '../clock/clock.js';
import { ExpressHttpAdapter } from './express-adapter.js';

describe('ExpressHttpAdapter', () => {
  let server: Server | undefined;

  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  async function serve(adapter: ExpressHttpAdapter): Promise<string> {
    server = adapter.getHttpServer() as Server;
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("should have node create requests and responses with Express's prototypes already set", async () => {
    const adapter = new ExpressHttpAdapter(new SystemClock());
    adapter.initHttpServer({});
    const app = adapter.getInstance<Express>();
    const seen: boolean[] = [];
    app.get('/hello', (req: Request, res: Response) => {
      res.status(201).json({ ip: req.ip, accepts: req.accepts('json') });
    });
    const url = await serve(adapter);
    // Before Express sees them: what node created.
    server!.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      seen.push(Object.getPrototypeOf(req) === app.request);
      seen.push(Object.getPrototypeOf(res) === app.response);
    });

    const answer = await fetch(`${url}/hello`);

    expect(seen).toEqual([true, true]);
    // Everything Express adds to requests and responses still works.
    expect(answer.status).toBe(201);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await answer.json()).toEqual({ ip: '127.0.0.1', accepts: 'json' });
  });

  it("should leave Nest's own server in place when Nest tracks its connections", async () => {
    const adapter = new ExpressHttpAdapter(new SystemClock());
    adapter.initHttpServer({ forceCloseConnections: true });
    const app = adapter.getInstance<Express>();
    const seen: boolean[] = [];
    app.get('/hello', (req: Request, res: Response) => res.json({ ok: true }));
    const url = await serve(adapter);
    server!.prependListener('request', (req: IncomingMessage) => {
      seen.push(Object.getPrototypeOf(req) === app.request);
    });

    const answer = await fetch(`${url}/hello`);

    expect(seen).toEqual([false]);
    expect(await answer.json()).toEqual({ ok: true });
  });

  it("should answer a route's object with the bytes and headers Express's res.json() sends", async () => {
    const adapter = new ExpressHttpAdapter(new SystemClock());
    adapter.initHttpServer({});
    const app = adapter.getInstance<Express>();
    const body = { success: true, data: { name: 'Zoë <b>&' }, list: [1, null] };
    app.all('/express', (req: Request, res: Response) => res.status(201).json(body));
    app.all('/ours', (req: Request, res: Response) => adapter.reply(res, body, 201));
    app.all('/string', (req: Request, res: Response) => adapter.reply(res, 'plain', 200));
    app.all('/typed', (req: Request, res: Response) => {
      res.type('text/csv');
      adapter.reply(res, { a: 1 }, 200);
    });
    const url = await serve(adapter);
    const headers = (r: Response | globalThis.Response) => {
      const all = Object.fromEntries((r as globalThis.Response).headers);
      delete all.date;
      delete all.etag;
      return all;
    };

    for (const method of ['GET', 'HEAD']) {
      const [theirs, ours] = await Promise.all([
        fetch(`${url}/express`, { method }),
        fetch(`${url}/ours`, { method }),
      ]);
      expect(ours.status).toBe(201);
      expect(headers(ours)).toEqual(headers(theirs));
      expect(await ours.text()).toBe(await theirs.text());
    }
    // What it does not handle goes to Nest's adapter as before.
    expect(await (await fetch(`${url}/string`)).text()).toBe('plain');
    expect((await fetch(`${url}/typed`)).headers.get('content-type')).toMatch(/^text\/csv/);
  });
});
