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

  describe('ETag', () => {
    const envelope = { success: true, data: { id: 7 }, version: 'v1', timestamp: 'now' };
    const later = { ...envelope, timestamp: 'later' };
    const tagged = express().set('etag', false);
    let answer: object = envelope;
    tagged.all('/envelope', (_req, res) => writeJson(res, answer));
    tagged.all('/other', (_req, res) => writeJson(res, { status: 'ok' }));

    it('should tag a successful GET or HEAD of an envelope, whatever its timestamp', async () => {
      answer = envelope;
      const first = await request(tagged).get('/envelope');
      answer = later;
      const second = await request(tagged).head('/envelope');
      expect(first.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
      expect(second.headers.etag).toBe(first.headers.etag);
      answer = { ...envelope, data: { id: 8 } };
      expect((await request(tagged).get('/envelope')).headers.etag).not.toBe(first.headers.etag);
      expect((await request(tagged).post('/envelope')).headers.etag).toBeUndefined();
      expect((await request(tagged).get('/other')).headers.etag).toBeUndefined();
    });

    it('should answer 304 without a body when If-None-Match names the tag, or any (*)', async () => {
      answer = envelope;
      const tag = (await request(tagged).get('/envelope')).headers.etag as string;
      for (const sent of [tag, tag.slice(2), `"other", ${tag}`, '*']) {
        const res = await request(tagged).get('/envelope').set('If-None-Match', sent);
        expect({ sent, status: res.status, text: res.text, etag: res.headers.etag }).toEqual({
          sent,
          status: 304,
          text: '',
          etag: tag,
        });
      }
      expect((await request(tagged).get('/envelope').set('If-None-Match', '"other"')).status).toBe(
        200,
      );
    });
  });
});
