// npm run bench: Tessera against a bare node:http + mysql2 yardstick, an Express + passport
// peer and an Express hello world, in one interleaved session on the same database.
//
//   npm run bench                 MariaDB on 127.0.0.1:3306 (BENCH_DATABASE_URL to change)
//   npm run bench -- --sqlite     the embedded SQLite database
//   npm run bench -- --quick      1 round of 3 s, no scale run (for trying things out)
//   npm run bench -- --introspection
//                                 Tessera alone: GET /api/v1/token and POST /api/v1/introspect
//                                 (beside the profile), interleaved, 5 rounds unless --rounds
//   npm run bench -- --events     a request that records a webhook event (a member's role
//                                 changed), its team with 3 endpoints against none, interleaved,
//                                 5 rounds unless --rounds (bench/lib/events.mjs); with
//                                 --compare, that build's team with 3 endpoints as well
//   npm run bench -- --pages      signed-in page views (GET /settings/api-tokens and /dashboard,
//                                 20 people's sessions in turn), Tessera alone or against
//                                 --compare, interleaved, 5 rounds unless --rounds
//                                 (bench/lib/page-views.mjs)
//   npm run bench -- --compare ../other-checkout
//                                 also runs that checkout's build (npm run build there first) in
//                                 the same interleaved rounds: before and after a change
//                                 (--compare-members when that build has GET /api/v1/team/members)
//   BENCH_DATABASE_URL=mariadb://tessera:tessera@127.0.0.1:23306/tessera_bench npm run bench
//                                 a node of a Galera cluster (scripts/galera-cluster.sh start): the
//                                 report names the causal-read setting Tessera gives its
//                                 connections, and the yardstick runs with it too
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { hasWrk, load } from './lib/load.mjs';
import {
  countInstructions,
  cpuMicros,
  peakRssMb,
  perfWorks,
  pinProcess,
  startServer,
  tasksetWorks,
} from './lib/proc.mjs';
import { recreateMysqlDatabase, seed } from './lib/seed.mjs';
import { benchEvents } from './lib/events.mjs';
import { benchPageViews, renderPageViewsReport } from './lib/page-views.mjs';
import { CAUSAL_READS, probeCluster } from '../dist/src/database/cluster.js';
import { dataSourceOptions } from '../dist/src/entities.js';
import { loadConfig } from '../dist/src/config/config.js';
import { authShare } from './lib/profile.mjs';
import { renderEventsReport, renderReport } from './lib/report.mjs';
import { usePages } from './lib/pages.mjs';
import {
  PROBE_NODE_ARGS,
  PRODUCTION_NODE_ARGS,
  TESSERA_SCRIPT,
  tesseraEnv,
} from './lib/tessera.mjs';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    sqlite: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string', default: '50' },
    compare: { type: 'string' },
    // The compared build has GET /api/v1/team/members too.
    'compare-members': { type: 'boolean', default: false },
    introspection: { type: 'boolean', default: false },
    events: { type: 'boolean', default: false },
    pages: { type: 'boolean', default: false },
  },
});
const rounds = Number(
  opts.rounds ?? (opts.quick ? 1 : opts.introspection || opts.events || opts.pages ? 5 : 3),
);
const seconds = Number(opts.seconds ?? (opts.quick ? 3 : 10));
const connections = Number(opts.connections);
const log = (line) => console.log(line);

const base = process.env.BENCH_DATABASE_URL ?? 'mariadb://root@127.0.0.1:3306/tessera_bench';
const mysqlUrl = (suffix) => base.replace(/\/[^/]*$/, `/tessera_bench_${suffix}`);
const sqliteDir = join(tmpdir(), 'tessera-bench');

async function database(label, users, tokens) {
  log(`Seeding ${label}: ${users} users, ${tokens} tokens`);
  let url;
  if (opts.sqlite) {
    mkdirSync(sqliteDir, { recursive: true });
    rmSync(join(sqliteDir, `${label}.sqlite`), { force: true });
    url = `sqlite:${join(sqliteDir, `${label}.sqlite`)}`;
  } else {
    url = mysqlUrl(label);
    await recreateMysqlDatabase(url);
  }
  return { url, ...(await seed(url, { users, tokens, log })) };
}

const pin = tasksetWorks() && cpus().length >= 2;
const SERVER_CPU = pin ? 0 : undefined;
const LOAD_CPU = pin ? 1 : undefined;

const undo = [];

/** Endpoints besides the profile, measured on Tessera (valid tokens). */
const TEAM = 'GET /api/v1/team';
const TOKEN = 'GET /api/v1/token';
const INTROSPECT = 'POST /api/v1/introspect (a team member’s token, as a form)';
const MEMBERS = 'GET /api/v1/team/members (a team of 200)';

/** The load shapes besides 50 keep-alive connections (run against Tessera and the yardstick). */
const SHAPES = { many: 'valid, 500 connections', close: 'valid, new connection each' };

/** The page servers let 20 sign-ups and their sign-ins through from one address. */
const PAGES_ENV = {
  RATE_LIMIT_REGISTER_PER_HOUR: '1000',
  RATE_LIMIT_SIGN_IN: '1000',
  MAIL_DIR: join(tmpdir(), 'tessera-bench-mail'),
};

function withoutAllocatorSetting(env) {
  const rest = { ...env };
  delete rest.MALLOC_MMAP_THRESHOLD_;
  return rest;
}

const usePerf = perfWorks();

function pinMariadb() {
  if (!pin || opts.sqlite) return;
  // Every MariaDB server: a cluster's nodes are several.
  const pids = readdirSync('/proc').filter(
    (p) => /^\d+$/.test(p) && readFileSync(`/proc/${p}/comm`, 'utf8').trim().startsWith('mariadbd'),
  );
  for (const pid of pids) undo.push(pinProcess(Number(pid), LOAD_CPU));
  if (pids.length > 0) {
    log(`MariaDB (pid ${pids.join(', ')}) pinned to CPU ${LOAD_CPU} for the session`);
  }
}

function writeResults(data, report) {
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(join(ROOT, 'bench', 'results', `${stamp}.json`), JSON.stringify(data, null, 2));
  writeFileSync(join(ROOT, 'bench', 'results', `${stamp}.md`), report);
  log(`Written to bench/results/${stamp}.md`);
}

/** --events: the request that records a webhook event, with the team's endpoints and without. */
async function events(useWrk) {
  pinMariadb();
  const { runs, delivery } = await benchEvents({
    database,
    compare: opts.compare,
    rounds,
    seconds,
    connections,
    useWrk,
    serverCpu: SERVER_CPU,
    loadCpu: LOAD_CPU,
    port: 4100,
    log,
  });
  const report = renderEventsReport({
    runs,
    delivery,
    rounds,
    seconds,
    connections,
    useWrk,
    pinned: pin,
    database: opts.sqlite ? 'SQLite' : 'MariaDB',
  });
  log(`\n${report}`);
  writeResults({ runs, delivery }, report);
}

/** --pages: signed-in page views, against the compared build when there is one. */
async function pageViews() {
  pinMariadb();
  const runs = await benchPageViews({
    database,
    compare: opts.compare,
    rounds,
    seconds,
    connections,
    serverCpu: SERVER_CPU,
    loadCpu: LOAD_CPU,
    port: 4100,
    log,
  });
  const report = renderPageViewsReport({
    runs,
    rounds,
    seconds,
    connections,
    pinned: pin,
    database: opts.sqlite ? 'SQLite' : 'MariaDB',
  });
  log(`\n${report}`);
  writeResults({ runs }, report);
}

async function main() {
  const useWrk = await hasWrk();
  log(
    `Load generator: ${useWrk ? 'wrk' : 'autocannon'}, ${connections} connections, ${seconds} s a run, ${rounds} round(s)`,
  );
  log(
    pin
      ? 'Pinning: servers on CPU 0; load generator and database on CPU 1'
      : 'Not pinned: taskset unavailable or a single CPU',
  );
  log(
    usePerf
      ? 'Counting instructions per request with perf stat'
      : 'Not counting instructions: perf stat cannot count here (npm run bench:instructions counts them with valgrind)',
  );
  if (opts.events) return events(useWrk);
  if (opts.pages) return pageViews();

  const main = await database('main', 10_000, 100_000);
  // A cluster node: Tessera's connections wait for the cluster on each read (src/database/cluster.ts).
  const cluster = opts.sqlite
    ? 'none'
    : await probeCluster(dataSourceOptions(loadConfig({ DATABASE_URL: main.url }).database));
  const causalReads = cluster === 'none' ? undefined : CAUSAL_READS[cluster];
  if (causalReads) log(`A ${cluster} node: Tessera's connections run ${causalReads}`);
  const scale =
    opts.quick || opts.introspection
      ? null
      : {
          small: await database('10k', 10_000, 10_000),
          large: await database('1m', 10_000, 1_000_000),
        };

  pinMariadb();

  let port = 4100;
  const tessera = TESSERA_SCRIPT;
  const all = [
    { name: 'Tessera (production)', script: tessera, env: tesseraEnv(main.url), key: 'tessera' },
    opts.sqlite
      ? {
          name: 'node:http + better-sqlite3 (yardstick)',
          script: join(ROOT, 'bench/servers/sqlite-yardstick.mjs'),
          env: { DATABASE_URL: main.url },
          key: 'yardstick',
        }
      : {
          name: 'node:http + mysql2 (yardstick)',
          script: join(ROOT, 'bench/servers/yardstick.mjs'),
          env: { DATABASE_URL: main.url },
          key: 'yardstick',
        },
    ...(causalReads
      ? [
          {
            name: 'node:http + mysql2 (yardstick), causal reads',
            script: join(ROOT, 'bench/servers/yardstick.mjs'),
            env: { DATABASE_URL: main.url, SESSION_SETTING: causalReads },
            key: 'yardstick-causal-reads',
          },
        ]
      : []),
    {
      name: 'Express 5 + passport (peer)',
      script: join(ROOT, 'bench/servers/express-passport.mjs'),
      env: { DATABASE_URL: main.url },
      key: 'peer',
    },
    {
      name: 'NestJS on Express (floor)',
      script: join(ROOT, 'bench/servers/nest-floor.mjs'),
      env: { DATABASE_URL: main.url },
      key: 'floor',
    },
    ...(opts.sqlite
      ? []
      : [
          {
            name: 'Express 5 hello world (ceiling)',
            script: join(ROOT, 'bench/servers/express-hello.mjs'),
            env: {},
            key: 'hello',
          },
        ]),
    ...(opts.compare
      ? [
          {
            name: 'Tessera, the compared build (--compare)',
            script: join(resolve(opts.compare), 'dist', 'src', 'main.js'),
            env: tesseraEnv(main.url),
            key: 'tessera-compared',
            production: true,
          },
        ]
      : []),
    {
      name: 'Tessera, request logging off',
      script: tessera,
      env: tesseraEnv(main.url, { LOG_REQUESTS: 'false' }),
      key: 'tessera-no-request-log',
    },
    {
      name: 'Tessera, rate limiting off',
      script: tessera,
      env: tesseraEnv(main.url, { RATE_LIMIT_ENABLED: 'false' }),
      key: 'tessera-no-rate-limit',
    },
    // Servers that people used through the pages first (sign-ups hash passwords with argon2):
    // as shipped, and with glibc's default allocator behaviour, to show what the setting buys.
    {
      name: 'Tessera, after use of the pages',
      script: tessera,
      env: tesseraEnv(main.url, PAGES_ENV),
      key: 'tessera-pages',
      pages: true,
    },
    {
      name: 'Tessera, after use of the pages, glibc defaults',
      script: tessera,
      env: withoutAllocatorSetting(tesseraEnv(main.url, PAGES_ENV)),
      key: 'tessera-pages-glibc',
      pages: true,
    },
    ...(scale
      ? [
          {
            name: 'Tessera, 10,000 tokens',
            script: tessera,
            env: tesseraEnv(scale.small.url),
            key: 'tessera-10k',
            tokens: scale.small,
          },
          {
            name: 'Tessera, 1,000,000 tokens',
            script: tessera,
            env: tesseraEnv(scale.large.url),
            key: 'tessera-1m',
            tokens: scale.large,
          },
        ]
      : []),
  ];

  // --introspection: Tessera alone, its token's own answer against introspection.
  const specs = opts.introspection ? all.filter((spec) => spec.key === 'tessera') : all;
  const servers = [];
  for (const spec of specs) {
    const nodeArgs = [
      ...(spec.script === tessera || spec.production ? PRODUCTION_NODE_ARGS : []),
      ...PROBE_NODE_ARGS,
    ];
    servers.push({
      ...spec,
      ...(await startServer({ ...spec, nodeArgs, port: port++, cpu: SERVER_CPU })),
    });
  }
  const scenarios = (s) => {
    const t = s.tokens ?? main;
    const list = [{ scenario: 'valid', tokens: t.valid }];
    if (['tessera', 'tessera-compared', 'yardstick', 'peer', 'floor'].includes(s.key)) {
      list.push(
        { scenario: 'invalid', tokens: [t.invalid] },
        { scenario: 'revoked', tokens: [t.revoked] },
      );
    }
    // Other endpoints of Tessera's: the token's team, and a page of a team of 200's members.
    if (s.key === 'tessera' || s.key === 'tessera-compared') {
      list.push({ scenario: TEAM, path: '/api/v1/team', tokens: t.valid });
    }
    if (s.key === 'tessera' || (s.key === 'tessera-compared' && opts['compare-members'])) {
      list.push({ scenario: MEMBERS, path: '/api/v1/team/members', tokens: t.members });
    }
    // Introspection (one caller checking the team's members' tokens) beside the token's own
    // description of itself: both any token's, one authentication each.
    if (s.key === 'tessera') {
      list.push(
        { scenario: TOKEN, path: '/api/v1/token', tokens: t.valid },
        {
          scenario: INTROSPECT,
          path: '/api/v1/introspect',
          tokens: t.members,
          introspect: { caller: t.introspector },
        },
      );
    }
    if (opts.introspection)
      return list.filter((sc) => ['valid', TOKEN, INTROSPECT].includes(sc.scenario));
    // Clients that misbehave: many connections, or a new connection for every request.
    if (['tessera', 'yardstick'].includes(s.key) && useWrk) {
      list.push(
        { scenario: SHAPES.many, tokens: t.valid, connections: 500, shape: true },
        { scenario: SHAPES.close, tokens: t.valid, close: true, shape: true },
      );
    }
    return list;
  };

  for (const s of servers.filter((s) => s.pages)) {
    log(`People using the pages of ${s.name}: 20 sign-ups, 1,000 tokens`);
    await usePages(s.url);
  }

  log('Warming up');
  for (const s of servers) {
    for (const sc of scenarios(s).filter((sc) => !sc.shape))
      await load({
        url: s.url,
        tokens: sc.tokens,
        path: sc.path,
        introspect: sc.introspect,
        seconds: Math.min(3, seconds),
        connections,
        useWrk,
        cpu: LOAD_CPU,
      });
  }

  const runs = [];
  for (let round = 1; round <= rounds; round++) {
    const order = servers.map((_, i) => servers[(i + round - 1) % servers.length]);
    for (const s of order) {
      for (const sc of scenarios(s)) {
        await s.probe('loop');
        const before = cpuMicros(s.pid);
        const counter = usePerf ? countInstructions(s.pid) : null;
        const r = await load({
          url: s.url,
          tokens: sc.tokens,
          path: sc.path,
          introspect: sc.introspect,
          seconds,
          connections: sc.connections ?? connections,
          close: sc.close,
          useWrk,
          cpu: LOAD_CPU,
        });
        const cpu = cpuMicros(s.pid) - before;
        const loop = await s.probe('loop');
        const instructions = counter ? await counter.stop() : NaN;
        runs.push({
          round,
          server: s.key,
          name: s.name,
          scenario: sc.scenario,
          ...r,
          cpuUsPerRequest: cpu / Math.max(1, r.requests),
          loopMaxMs: loop?.maxMs ?? NaN,
          kInstructionsPerRequest: instructions / 1000 / Math.max(1, r.requests),
        });
        log(
          `  round ${round} ${s.name} [${sc.scenario}]: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, ${(cpu / Math.max(1, r.requests)).toFixed(0)} µs CPU/req, loop delay ≤ ${(loop?.maxMs ?? NaN).toFixed(1)} ms${r.errors ? `, ${r.errors} errors` : ''}`,
        );
      }
    }
  }
  const rss = Object.fromEntries(servers.map((s) => [s.key, peakRssMb(s.pid)]));
  // At rest: what the heap holds after two full collections, once the load has stopped.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const heap = {};
  for (const s of servers) heap[s.key] = (await s.probe('heap'))?.usedMb ?? NaN;
  for (const s of servers) await s.stop();

  log('Profiling the authentication share');
  const profileDir = join(tmpdir(), 'tessera-bench-profile');
  rmSync(profileDir, { recursive: true, force: true });
  const profiled = await startServer({
    name: 'Tessera (profiled)',
    script: tessera,
    env: tesseraEnv(main.url),
    port,
    cpu: SERVER_CPU,
    nodeArgs: [...PRODUCTION_NODE_ARGS, '--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  });
  const profiledSeconds = Math.min(8, seconds);
  await load({
    url: profiled.url,
    tokens: main.valid,
    seconds: 2,
    connections,
    useWrk,
    cpu: LOAD_CPU,
  });
  await load({
    url: profiled.url,
    tokens: main.valid,
    seconds: profiledSeconds,
    connections,
    useWrk,
    cpu: LOAD_CPU,
  });
  await profiled.stop();
  const share = authShare(profileDir, profiledSeconds);

  const report = renderReport({
    runs,
    rss,
    heap,
    share,
    rounds,
    seconds,
    connections,
    useWrk,
    pinned: pin,
    database: opts.sqlite
      ? 'SQLite'
      : causalReads
        ? `a MariaDB ${cluster} node (${causalReads} on Tessera's connections)`
        : 'MariaDB',
  });
  log(`\n${report}`);
  writeResults({ runs, rss, heap, share }, report);
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    // Give the database its CPUs back, whatever happened.
    for (const u of undo) u();
  });
