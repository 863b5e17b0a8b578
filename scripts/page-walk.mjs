/**
 * Walks a few requests through the built app (`npx nest build` first) and prints what each
 * touched between arrival and answer: the files of dist/src with a function called (V8's precise
 * coverage, through the inspector) and the SQL statements sent (TypeORM's logger). For
 * docs/architecture.md's walks of the create-token page and of an API request:
 * `node scripts/page-walk.mjs`.
 */
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const DIST = pathToFileURL(join(import.meta.dirname, '..', 'dist', 'src')).href;
const load = (path) => import(`${DIST}/${path}`);
const { createApp } = await load('app.factory.js');
const { loadConfig } = await load('config/config.js');
const { RegistrationService } = await load('sign-in/registration.service.js');
const { ManualClock } = await load('clock/clock.js');

/**
 * The app's clock, at the machine's time, that can hold back the work a request leaves for
 * afterwards (the mail sender's round, the security log's write): that is not the request's.
 */
class HoldingClock extends ManualClock {
  held = null;
  constructor() {
    super(Date.now());
  }
  startTimer(delayMs, fire) {
    if (!this.held) return super.startTimer(delayMs, fire);
    const entry = { start: () => (entry.timer = super.startTimer(delayMs, fire)) };
    this.held.push(entry);
    return { cancel: () => (entry.timer ? entry.timer.cancel() : (entry.start = () => {})) };
  }
  hold() {
    this.held = [];
  }
  release() {
    const held = this.held ?? [];
    this.held = null;
    for (const entry of held) entry.start();
  }
}
const clock = new HoldingClock();

const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'fatal',
  DATABASE_URL: 'sqlite::memory:',
  MAIL_URL: 'smtp://127.0.0.1:9',
  MAIL_POLL_SECONDS: '3600',
});
const app = await createApp(config, { clock });
await app.listen(0, '127.0.0.1');
const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
const dataSource = app.get((await import('typeorm')).DataSource);
const statements = [];
Object.defineProperty(dataSource, 'logger', {
  value: {
    logQuery: (query) => statements.push(query.replace(/\s+/g, ' ').slice(0, 90)),
    logQueryError() {},
    logQuerySlow() {},
    logSchemaBuild() {},
    logMigration() {},
    log() {},
  },
});

/** A browser's cookie jar, enough for one person. */
const cookies = new Map();
async function send(method, path, form, headers = {}) {
  const res = await fetch(base + path, {
    method,
    redirect: 'manual',
    headers: {
      cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'sec-fetch-site': 'same-origin',
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...headers,
    },
    body: form ? new URLSearchParams(form).toString() : undefined,
  });
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    cookies.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return { status: res.status, text: await res.text() };
}
const csrfOf = (html) => /name="_csrf" value="([^"]+)"/.exec(html)[1];

const email = 'walker@example.com';
await app
  .get(RegistrationService)
  .createAccount({ name: 'Walker', email, password: 'correct horse battery' }, { verified: true });
await send('POST', '/login', {
  email,
  password: 'correct horse battery',
  _csrf: csrfOf((await send('GET', '/login')).text),
});
// Warm: the session's activity noted, every module loaded.
await send('GET', '/settings/api-tokens');
const page = await send('GET', '/settings/api-tokens');

const inspector = new Session();
inspector.connect();
await inspector.post('Profiler.enable');
await inspector.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

async function walk(label, method, path, form, headers) {
  await inspector.post('Profiler.takePreciseCoverage');
  statements.length = 0;
  clock.hold();
  const res = await send(method, path, form, headers);
  const sent = [...statements];
  const { result } = await inspector.post('Profiler.takePreciseCoverage');
  clock.release();
  const files = result
    .filter((script) => script.url.startsWith(DIST))
    .filter((script) => script.functions.some((f) => f.ranges[0].count > 0))
    .map((script) => script.url.slice(DIST.length + 1))
    .sort();
  console.log(`\n${label}: ${res.status}, ${files.length} files, ${sent.length} statements`);
  for (const file of files) console.log(`  ${file}`);
  if (process.env.WALK_FUNCTIONS)
    for (const script of result.filter((s) => s.url.startsWith(DIST)))
      for (const f of script.functions.filter((f) => f.ranges[0].count > 0))
        console.log(
          `    ${script.url.slice(DIST.length + 1)} ${f.functionName || '(anonymous)'} x${f.ranges[0].count}`,
        );
  for (const statement of sent) console.log(`  SQL ${statement}`);
  return res;
}

await walk('GET /settings/api-tokens', 'GET', '/settings/api-tokens');
const created = await walk('POST /settings/api-tokens', 'POST', '/settings/api-tokens', [
  ['name', 'walked'],
  ['abilities', 'user:read'],
  ['abilities', 'team:read'],
  ['expires_in_days', '30'],
  ['_csrf', csrfOf(page.text)],
]);
// What the creation left for afterwards (the notice's first try, refused by the closed port)
// runs once its timers are released: done before the next walk.
for (;;) {
  const [{ n }] = await dataSource.query(
    "SELECT COUNT(*) AS n FROM mail_outbox WHERE status = 'pending' AND (attempts = 0 OR claimed_until IS NOT NULL)",
  );
  if (Number(n) === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 10));
}
// The token the page showed, on the API: once to warm the route, then walked (no cookie).
const api = { authorization: `Bearer ${/tsr_[A-Za-z0-9]+/.exec(created.text)[0]}` };
cookies.clear();
await send('GET', '/api/v1/team', undefined, api);
await walk('GET /api/v1/team', 'GET', '/api/v1/team', undefined, api);
inspector.disconnect();
await app.close();
