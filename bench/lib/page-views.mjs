// `npm run bench -- --pages`: what a signed-in page view costs. People sign up and sign in
// through the pages and create tokens there, then their browsers (their session cookies, one
// after the other) load a settings page and the dashboard, with nothing else going on. With
// `--compare DIR`, that checkout's build serves the same sessions from the same database in
// the same interleaved rounds: a page view before and after a change.
import { cpus, totalmem, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { load } from './load.mjs';
import { usePages } from './pages.mjs';
import { cpuMicros, startServer } from './proc.mjs';
import { PROBE_NODE_ARGS, PRODUCTION_NODE_ARGS, TESSERA_SCRIPT, tesseraEnv } from './tessera.mjs';

const PEOPLE = 20;
const TOKENS = 100;
/** The pages loaded, each by every person in turn. */
const PAGES = ['/settings/api-tokens', '/dashboard'];

/** Sign-ups and sign-ins from one address; no mail sent (files). */
const pagesEnv = (url) =>
  tesseraEnv(url, {
    RATE_LIMIT_REGISTER_PER_HOUR: '1000',
    RATE_LIMIT_SIGN_IN: '1000',
    MAIL_DIR: join(tmpdir(), 'tessera-bench-pages-mail'),
  });

const fixed = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs the rounds; returns the runs. Every answer must be the page itself (200). */
export async function benchPageViews({
  database,
  compare,
  rounds,
  seconds,
  connections,
  serverCpu,
  loadCpu,
  port,
  log,
}) {
  const db = await database('pages', 100, 100);
  const specs = [
    { key: 'tessera', name: 'Tessera', script: TESSERA_SCRIPT },
    ...(compare
      ? [
          {
            key: 'compared',
            name: 'Tessera, the compared build (--compare)',
            script: join(resolve(compare), 'dist', 'src', 'main.js'),
          },
        ]
      : []),
  ];
  const servers = [];
  for (const spec of specs) {
    servers.push({
      ...spec,
      ...(await startServer({
        name: spec.name,
        script: spec.script,
        env: pagesEnv(db.url),
        nodeArgs: [...PRODUCTION_NODE_ARGS, ...PROBE_NODE_ARGS],
        port: port++,
        cpu: serverCpu,
      })),
    });
  }
  try {
    log(`People using the pages: ${PEOPLE} sign-ups, ${TOKENS} tokens`);
    // The sessions live in the database, so every server serves them.
    const cookies = await usePages(servers[0].url, { people: PEOPLE, tokens: TOKENS });

    const measure = async (s, path, runSeconds) => {
      await s.probe('loop');
      const before = cpuMicros(s.pid);
      const r = await load({
        url: s.url,
        path,
        cookies,
        seconds: runSeconds,
        connections,
        useWrk: false,
        cpu: loadCpu,
      });
      const cpu = cpuMicros(s.pid) - before;
      const loop = await s.probe('loop');
      if (r.non2xx > 0 || r.errors > 0) {
        throw new Error(`${s.name} ${path}: ${r.non2xx} answers not 2xx, ${r.errors} errors`);
      }
      return {
        ...r,
        cpuUsPerRequest: cpu / Math.max(1, r.requests),
        loopMaxMs: loop?.maxMs ?? NaN,
      };
    };

    log('Warming up');
    for (const s of servers) for (const path of PAGES) await measure(s, path, Math.min(3, seconds));

    const runs = [];
    for (let round = 1; round <= rounds; round++) {
      // Alternate which goes first: the machine's drift falls on both alike.
      const order = round % 2 ? servers : [...servers].reverse();
      for (const path of PAGES) {
        for (const s of order) {
          const r = await measure(s, path, seconds);
          runs.push({ round, server: s.key, name: s.name, page: path, ...r });
          log(
            `  round ${round} ${s.name} GET ${path}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, ${r.cpuUsPerRequest.toFixed(0)} µs CPU/req`,
          );
        }
      }
    }
    return runs;
  } finally {
    for (const s of servers) await s.stop();
  }
}

export function renderPageViewsReport({ runs, rounds, seconds, connections, pinned, database }) {
  const lines = [];
  lines.push(
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; database: ${database}`,
  );
  lines.push(
    `Load: autocannon, ${connections} connections, ${PEOPLE} signed-in browsers in turn, ${seconds} s a run, ${rounds} interleaved round(s), medians shown; ${pinned ? 'servers pinned to CPU 0, load generator and database to CPU 1' : 'not pinned'}`,
  );
  lines.push('');
  lines.push(
    '| Page | Server | req/s | p50 ms | p99 ms | Longest loop delay ms | Node CPU µs/req |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|');
  for (const page of PAGES) {
    for (const server of ['tessera', 'compared']) {
      const rs = runs.filter((r) => r.page === page && r.server === server);
      if (rs.length === 0) continue;
      const m = (key) => median(rs.map((r) => r[key]));
      lines.push(
        `| GET ${page} | ${rs[0].name} | ${fixed(m('rps'))} | ${fixed(m('p50Ms'), 1)} | ${fixed(m('p99Ms'), 1)} | ${fixed(m('loopMaxMs'), 1)} | ${fixed(m('cpuUsPerRequest'))} |`,
      );
    }
  }
  if (runs.some((r) => r.server === 'compared')) {
    lines.push('');
    lines.push('Each round, this build against the compared one (× > 1: more of it):');
    lines.push('');
    lines.push('| Page | × req/s, median (range) | × p99 | × CPU µs/req |');
    lines.push('|---|---:|---:|---:|');
    for (const page of PAGES) {
      const ratios = [];
      for (let round = 1; round <= rounds; round++) {
        const at = (server) =>
          runs.find((r) => r.page === page && r.server === server && r.round === round);
        const [now, then] = [at('tessera'), at('compared')];
        if (!now || !then) continue;
        ratios.push({
          rps: now.rps / then.rps,
          p99: now.p99Ms / then.p99Ms,
          cpu: now.cpuUsPerRequest / then.cpuUsPerRequest,
        });
      }
      const m = (key) => {
        const xs = ratios.map((r) => r[key]);
        return `${fixed(median(xs), 2)} (${fixed(Math.min(...xs), 2)}–${fixed(Math.max(...xs), 2)})`;
      };
      lines.push(`| GET ${page} | ${m('rps')} | ${m('p99')} | ${m('cpu')} |`);
    }
  }
  return lines.join('\n') + '\n';
}
