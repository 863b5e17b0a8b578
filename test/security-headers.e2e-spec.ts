import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { assetUrl } from './support/html.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describe('security headers and CORS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['/login', 'the stylesheet', '/health/live', '/no-such-page', '/api/docs'])(
    'should send the security headers on %s',
    async (name) => {
      const path =
        name === 'the stylesheet'
          ? assetUrl((await request(t.server).get('/login')).text, 'app.css')
          : name;
      const res = await request(t.server).get(path);
      expect(res.status).toBeLessThan(500);
      const csp = res.headers['content-security-policy'];
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['strict-transport-security']).toBeUndefined();
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    },
  );

  it.each(['/api/v1/user/profile', '/api/v1/no-such-endpoint'])(
    "should send the API's stricter list on %s: nothing loaded, framed or sniffed from its JSON",
    async (path) => {
      const res = await request(t.server).get(path).set('Authorization', 'Bearer nonsense');
      expect(res.status).toBeLessThan(500);
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'none'; frame-ancestors 'none'",
      );
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['cache-control']).toBe('no-store');
      // Headers that only mean something for documents are not sent with JSON.
      expect(res.headers['cross-origin-opener-policy']).toBeUndefined();
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['strict-transport-security']).toBeUndefined();
    },
  );

  it('should keep every script and style of the pages on the app itself, with none inline', async () => {
    const page = (await request(t.server).get('/register')).text;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc="\/)[^>]*>/);
    expect(page).not.toMatch(/\sstyle="/);
    expect(page).not.toMatch(/\son[a-z]+="/);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('should not let a spoofed X-Forwarded-Proto turn on HSTS', async () => {
    const res = await request(t.server).get('/login').set('X-Forwarded-Proto', 'https');
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('should send HSTS over HTTPS behind a trusted proxy', async () => {
    const proxied = await createTestApp({ TRUST_PROXY: '1' });
    try {
      const res = await request(proxied.server).get('/login').set('X-Forwarded-Proto', 'https');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    } finally {
      await proxied.close();
    }
  });

  it('should allow exactly the configured origins, never a reflected one', async () => {
    const withCors = await createTestApp({ CORS_ORIGINS: 'https://app.example.com' });
    try {
      const allowed = await request(withCors.server)
        .get('/api/v1/user/profile')
        .set('Origin', 'https://app.example.com');
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
      const other = await request(withCors.server)
        .get('/api/v1/user/profile')
        .set('Origin', 'https://evil.example.com');
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await withCors.close();
    }
    const none = await request(t.server)
      .get('/api/v1/user/profile')
      .set('Origin', 'https://app.example.com');
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });
});
