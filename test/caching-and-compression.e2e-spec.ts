import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import request from 'supertest';
import { createToken, createUser } from './factories/index.js';
import { ROOT } from './support/run-built.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as sent, before any decoding. */
  body: Buffer;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

describe('caching and compression', () => {
  let t: TestApp;
  let links: string[];

  beforeAll(async () => {
    t = await createTestApp();
    const page = (await request(t.server).get('/login')).text;
    links = [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
  });
  afterAll(async () => {
    await t.close();
  });

  /** One request with the given headers, answered exactly as it went over the wire. */
  function raw(path: string, headers: Record<string, string> = {}, method = 'GET') {
    const { port } = t.server.address() as AddressInfo;
    return new Promise<RawAnswer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    });
  }

  describe('assets', () => {
    it("should link the pages' stylesheet, script and icon under names with their contents' hash", async () => {
      expect(links).toEqual([
        expect.stringMatching(/^\/assets\/app\.[0-9a-f]{8}\.css$/),
        expect.stringMatching(/^\/assets\/tessera\.[0-9a-f]{8}\.svg$/),
        expect.stringMatching(/^\/assets\/app\.[0-9a-f]{8}\.js$/),
        // The sign-in page's passkey button: the browser helper, served from here, and its script.
        expect.stringMatching(/^\/assets\/webauthn-browser\.[0-9a-f]{8}\.js$/),
        expect.stringMatching(/^\/assets\/passkeys\.[0-9a-f]{8}\.js$/),
      ]);
      for (const [url, file] of links.map((url, i) => [url, PUBLIC_FILES[i]])) {
        const contents = readFileSync(join(ROOT, file));
        const hash = createHash('sha256').update(contents).digest('hex').slice(0, 8);
        expect(url).toContain(`.${hash}.`);
        const res = await raw(url);
        expect({ url, status: res.status, cache: res.headers['cache-control'] }).toEqual({
          url,
          status: 200,
          cache: IMMUTABLE,
        });
        expect(res.body.equals(contents)).toBe(true);
      }
    });

    it('should give each its type, and answer HEAD with its length alone', async () => {
      const types = await Promise.all(
        links.map(async (url) => (await raw(url)).headers['content-type']),
      );
      expect(types).toEqual([
        'text/css; charset=utf-8',
        'image/svg+xml',
        expect.stringMatching(/^(application|text)\/javascript; charset=utf-8$/),
        expect.stringMatching(/^(application|text)\/javascript; charset=utf-8$/),
        expect.stringMatching(/^(application|text)\/javascript; charset=utf-8$/),
      ]);
      const head = await raw(links[0], {}, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(Number(head.headers['content-length'])).toBe(
        readFileSync(join(ROOT, 'public', 'css', 'app.css')).length,
      );
    });

    it('should answer 404, to be kept by no one, for an old hash, no hash or the old folders', async () => {
      for (const path of [
        '/assets/app.00000000.css',
        '/assets/app.css',
        '/assets/',
        '/css/app.css',
        '/js/app.js',
        '/favicon/tessera.svg',
      ]) {
        const res = await raw(path);
        expect({ path, status: res.status, cache: res.headers['cache-control'] }).toEqual({
          path,
          status: 404,
          cache: 'no-store',
        });
      }
    });

    it('should keep the assets off the API path', async () => {
      const res = await raw(`/api${links[0]}`);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString()).error.code).toBe('not_found');
    });
  });

  describe('pages', () => {
    it('should never let a page be kept: pages, and the 403, 404 and 405 pages', async () => {
      const client = new WebClient(t.server);
      await client.register('Cache Tester', `cache-${Date.now()}@example.com`);
      const answers = {
        'sign-in': await request(t.server).get('/login'),
        dashboard: await client.get('/dashboard'),
        'a form without its CSRF token (403)': await client.agent
          .post('/teams')
          .type('form')
          .send('name=x'),
        'no such page (404)': await client.get('/no-such-page'),
        'a method not taken (405)': await client.agent.delete('/teams'),
        'the API docs page': await request(t.server).get('/api/docs'),
      };
      const seen = Object.fromEntries(
        Object.entries(answers).map(([name, res]) => [
          name,
          `${res.status} ${res.headers['cache-control']}`,
        ]),
      );
      expect(seen).toEqual({
        'sign-in': '200 no-store',
        dashboard: '200 no-store',
        'a form without its CSRF token (403)': '403 no-store',
        'no such page (404)': '404 no-store',
        'a method not taken (405)': '405 no-store',
        'the API docs page': '200 no-store',
      });
    });
  });

  describe('compression', () => {
    it('should send pages and assets in brotli or gzip, as the client accepts', async () => {
      for (const path of ['/login', links[0], links[2]]) {
        const plain = await raw(path);
        const br = await raw(path, { 'Accept-Encoding': 'gzip, deflate, br' });
        const gzip = await raw(path, { 'Accept-Encoding': 'gzip' });
        expect([path, plain.headers['content-encoding'], br.headers['content-encoding']]).toEqual([
          path,
          undefined,
          'br',
        ]);
        expect(gzip.headers['content-encoding']).toBe('gzip');
        expect(br.headers.vary).toMatch(/Accept-Encoding/);
        expect(br.body.length).toBeLessThan(plain.body.length);
        if (path === '/login') {
          // Each sign-in page carries a CSRF token of its own: the same page, not the same bytes.
          expect(brotliDecompressSync(br.body).toString()).toContain('Sign in to Tessera');
          expect(gunzipSync(gzip.body).toString()).toContain('Sign in to Tessera');
        } else {
          expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
          expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
        }
      }
    });

    it("should compress the API's description: the document and Swagger UI's files", async () => {
      const page = (await raw('/api/docs')).body.toString();
      const bundle = /src="(\/assets\/swagger-ui-bundle\.[0-9a-f]{8}\.js)"/.exec(page)![1];
      for (const path of ['/api/v1/openapi.json', bundle]) {
        const res = await raw(path, { 'Accept-Encoding': 'br' });
        expect({ path, encoding: res.headers['content-encoding'] }).toEqual({
          path,
          encoding: 'br',
        });
      }
    });

    it("should send the API's answers as they are, whatever the client accepts", async () => {
      const { plaintext } = await createToken(t.app, await createUser(t.app));
      for (const headers of [
        { Authorization: `Bearer ${plaintext}` },
        { Authorization: 'Bearer tsr_nope' },
      ]) {
        const res = await raw('/api/v1/user/profile', {
          ...headers,
          'Accept-Encoding': 'gzip, deflate, br',
        });
        expect(res.headers['content-encoding']).toBeUndefined();
        expect(res.headers.vary).toBeUndefined();
        expect(JSON.parse(res.body.toString())).toHaveProperty('success');
      }
    });
  });
});

/** The files the layout links, in its order. */
/** The files the sign-in page links, in its order, from the project's root. */
const PUBLIC_FILES = [
  'public/css/app.css',
  'public/favicon/tessera.svg',
  'public/js/app.js',
  'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js',
  'public/js/passkeys.js',
];
