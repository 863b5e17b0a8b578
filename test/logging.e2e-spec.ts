import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { ManualClock, SystemClock } from '../src/clock/clock.js';
import { loadConfig } from '../src/config/config.js';
import { ROOT_LOGGER, type RootLogger } from '../src/logging/logging.module.js';
import { createRootLogger } from '../src/logging/root-logger.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { assetUrl } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The access log and request ids, as an operator reads them: one JSON object a line. */
describe('request logging', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await createTestApp(
      { LOG_LEVEL: 'log', LOG_FORMAT: 'json', RATE_LIMIT_API_ANONYMOUS_PER_IP: '8' },
      { logs },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('should write one line per authenticated API request with its route, outcome, user and token', async () => {
    const user = await createUser(t.app);
    const { plaintext, token } = await createToken(t.app, user);

    const res = await request(t.server)
      .get('/api/v1/user/profile?debug=1')
      .set('Authorization', `Bearer ${plaintext}`)
      .set('X-Request-Id', 'client-trace.42:abc');

    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('client-trace.42:abc');
    const lines = logs.requestLines('client-trace.42:abc');
    expect(lines).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        pid: process.pid,
        hostname: expect.any(String),
        reqId: 'client-trace.42:abc',
        method: 'GET',
        path: '/api/v1/user/profile',
        route: '/api/v1/user/profile',
        status: 200,
        durationMs: expect.any(Number),
        userId: user.id,
        tokenId: token.id,
        msg: 'request completed',
      },
    ]);
    expect(logs.text).not.toContain(plaintext);
  });

  it.each([
    ['with spaces', 'not an id'],
    ['too long', 'a'.repeat(129)],
    ['with markup', '"><script>x</script>'],
    ['with a JSON brace', '{"level":"fatal"}'],
  ])('should replace a client X-Request-Id %s with a fresh UUID', async (_, given) => {
    const res = await request(t.server).get('/health/live').set('X-Request-Id', given);

    const id = res.headers['x-request-id'];
    expect(id).toMatch(UUID);
    expect(logs.requestLines(id)).toHaveLength(1);
    expect(logs.text).not.toContain(given);
  });

  it('should give every answer its own id when the client sends none, and log refusals without a user', async () => {
    const a = await request(t.server).get('/api/v1/team');
    const b = await request(t.server).get('/api/v1/nowhere');

    expect(a.headers['x-request-id']).toMatch(UUID);
    expect(b.headers['x-request-id']).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    const [refused] = logs.requestLines(a.headers['x-request-id']);
    expect(refused).toMatchObject({ status: 401, route: '/api/v1/team', level: 'info' });
    expect(refused).not.toHaveProperty('userId');
    expect(refused).not.toHaveProperty('tokenId');
    expect(logs.requestLines(b.headers['x-request-id'])).toEqual([
      expect.objectContaining({ status: 404, route: null, path: '/api/v1/nowhere' }),
    ]);
  });

  it('should log pages and static files too, with the signed-in user', async () => {
    const client = new WebClient(t.server, t.mail);
    const email = uniqueEmail('logged');
    await client.register('Page Reader', email);
    const page = await client.get('/dashboard');
    const cssUrl = assetUrl(page.text, 'app.css');
    const css = await request(t.server).get(cssUrl);

    const [line] = logs.requestLines(page.headers['x-request-id']);
    expect(line).toMatchObject({ status: 200, route: '/dashboard', userId: expect.any(Number) });
    expect(css.headers['x-request-id']).toMatch(UUID);
    expect(logs.requestLines(css.headers['x-request-id'])).toEqual([
      expect.objectContaining({ status: 200, path: cssUrl, route: '/assets' }),
    ]);
  });

  it('should redact credentials, cookies, passwords and CSRF tokens in anything logged', () => {
    const logger = t.app.get<RootLogger>(ROOT_LOGGER);
    logger.info(
      {
        req: {
          headers: { authorization: 'Bearer tsr_secretsecret', cookie: 'tessera.sid=s3ss10n' },
        },
        res: { headers: { 'set-cookie': 'tessera.sid=n3wc00k1e' } },
        body: { email: 'kept@example.com', password: 'pa55word', _csrf: 'csrf-t0ken' },
        password: 'top-level-pa55',
      },
      'a careless line',
    );

    const line = logs.entries.find((e) => e.msg === 'a careless line');
    expect(line).toMatchObject({
      req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } },
      res: { headers: { 'set-cookie': '[redacted]' } },
      body: { email: 'kept@example.com', password: '[redacted]', _csrf: '[redacted]' },
      password: '[redacted]',
    });
    for (const secret of ['tsr_secretsecret', 's3ss10n', 'n3wc00k1e', 'pa55word', 'csrf-t0ken']) {
      expect(logs.text).not.toContain(secret);
    }
  });

  // Last: it uses up this client's failures.
  it('should give requests refused before routing an id and a line too', async () => {
    let limited: request.Response | undefined;
    for (let i = 0; i < 12 && !limited; i++) {
      const res = await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', 'Bearer tsr_000000000000000000000000000000000000');
      if (res.status === 429) limited = res;
    }

    expect(limited).toBeDefined();
    const id = limited!.headers['x-request-id'];
    expect(id).toMatch(UUID);
    expect(logs.requestLines(id)).toEqual([expect.objectContaining({ status: 429 })]);
  });
});

describe('request logging switched off', () => {
  it('should still give every answer an X-Request-Id but write no request lines', async () => {
    const logs = new LogCapture();
    const t = await createTestApp({ LOG_LEVEL: 'log', LOG_REQUESTS: 'false' }, { logs });
    try {
      const res = await request(t.server).get('/health/live');
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(logs.entries.filter((e) => 'status' in e)).toEqual([]);
      // This app's own lines do arrive: the absence above is not a capture that sees nothing.
      expect(logs.text).toContain('Nest application successfully started');
    } finally {
      await t.close();
    }
  });
});

describe('log times on a clock the spec moves', () => {
  it("should date every line by the app's clock when the clock is moved", async () => {
    const logs = new LogCapture();
    const clock = new ManualClock(Date.parse('2031-02-03T04:05:06.789Z'));
    const t = await createTestApp({ LOG_LEVEL: 'log', LOG_FORMAT: 'json' }, { logs, clock });
    try {
      expect(
        logs.entries.find((e) => e.msg === 'Nest application successfully started'),
      ).toMatchObject({
        time: '2031-02-03T04:05:06.789Z',
      });
      clock.advance(3_600_000);
      const res = await request(t.server).get('/health/live');
      expect(logs.requestLines(res.headers['x-request-id'] as string)).toEqual([
        expect.objectContaining({ time: '2031-02-03T05:05:06.789Z', status: 200 }),
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('pretty logs for development', () => {
  it('should write readable lines rather than JSON when LOG_FORMAT=pretty', () => {
    const out = new LogCapture();
    const logger = createRootLogger(
      loadConfig({ NODE_ENV: 'development' }),
      new SystemClock(),
      out,
    );

    logger.info({ reqId: 'r-1', password: 'hidden-pa55' }, 'hello operator');

    expect(out.lines[0]).toMatch(/INFO.*hello operator/);
    expect(() => JSON.parse(out.lines[0])).toThrow();
    expect(out.text).toContain('r-1');
    expect(out.text).not.toContain('hidden-pa55');
  });

  it('should default to JSON outside development', () => {
    expect(
      loadConfig({
        NODE_ENV: 'production',
        SESSION_SECRET: randomBytes(32).toString('base64'),
        EMAIL_VERIFICATION: 'off',
      }).observability.logFormat,
    ).toBe('json');
    expect(loadConfig({ NODE_ENV: 'test' }).observability.logFormat).toBe('json');
  });
});
