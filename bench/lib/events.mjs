// `npm run bench -- --events`: what a request that records a webhook event costs when the
// team has endpoints subscribed to it, against the same request when it has none. The claim
// checked: the event is only an insert (one outbox row per endpoint) in the change's own
// transaction, and its delivery happens after the answer, off the request path.
//
// The request is PATCH /api/v1/team/members/:id by the team's owner's token, each one giving
// the next member the other role (member.role_changed). Two Tessera servers of the same build,
// each on its own database: the team of one has no endpoint, the team of the other has
// ENDPOINTS, registered with the command line and pointing at a receiver on 127.0.0.1
// (bench/servers/webhook-receiver.mjs) that answers 200 at once and counts what it got. With
// `--compare DIR`, that checkout's build runs as a third server, with ENDPOINTS of its own on
// its own database, in the same interleaved rounds: the cost of delivering, before and after.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../dist/src/config/config.js';
import { dataSourceFor } from '../../dist/src/entities.js';
import { load } from './load.mjs';
import { cpuMicros, startServer } from './proc.mjs';
import { PROBE_NODE_ARGS, PRODUCTION_NODE_ARGS, TESSERA_SCRIPT, tesseraEnv } from './tessera.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
const run = promisify(execFile);

export const EVENT = 'member.role_changed';
export const ENDPOINTS = 3;
const PATH = '/api/v1/team/members';
/** How long the outboxes may take to empty after a run before the bench gives up. */
const SETTLE_TIMEOUT_MS = 120_000;

/** Deliveries to the receiver on loopback over plain HTTP; role notices to files. */
const eventsEnv = (url) =>
  tesseraEnv(url, {
    WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
    MAIL_DIR: join(tmpdir(), 'tessera-bench-events-mail'),
  });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The bench's own view of a server's database: roles to flip, and what the outboxes hold. */
async function inspector(url, teamId) {
  const dataSource = await dataSourceFor(loadConfig({ DATABASE_URL: url }).database).initialize();
  const count = async (sql, params = []) => Number((await dataSource.query(sql, params))[0].n);
  const counts = async () => ({
    events: await count('SELECT COUNT(*) AS n FROM audit_events WHERE event = ? AND team_id = ?', [
      'team.role_changed',
      teamId,
    ]),
    deliveries: await count('SELECT COUNT(*) AS n FROM webhook_deliveries'),
    delivered: await count(
      "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered'",
    ),
    dead: await count("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'dead'"),
    waiting:
      (await count("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'")) +
      (await count("SELECT COUNT(*) AS n FROM mail_outbox WHERE status = 'pending'")),
  });
  return {
    /** The members' current roles, the owner's aside. */
    members: async () =>
      (
        await dataSource.query(
          "SELECT user_id, role FROM team_members WHERE team_id = ? AND role <> 'owner' ORDER BY user_id",
          [teamId],
        )
      ).map((r) => ({ id: Number(r.user_id), role: r.role })),
    counts,
    /**
     * Waits until nothing is waiting in either outbox, twice in a row with nothing new between
     * (a request still in flight when the load stopped may commit a moment later).
     */
    settled: async () => {
      const deadline = Date.now() + SETTLE_TIMEOUT_MS;
      let last;
      for (;;) {
        const now = await counts();
        if (now.waiting === 0 && last?.waiting === 0 && last.events === now.events) return now;
        if (Date.now() > deadline) throw new Error(`outboxes still hold ${now.waiting} rows`);
        last = now;
        await sleep(100);
      }
    },
    close: () => dataSource.destroy(),
  };
}

async function registerEndpoints(url, receiverUrl, prefix) {
  for (let n = 1; n <= ENDPOINTS; n++) {
    await run(
      process.execPath,
      [
        CLI,
        'webhook:create',
        '--team',
        'bench-team',
        '--url',
        `${receiverUrl}/hooks/${prefix}${n}`,
        '--events',
        EVENT,
      ],
      { env: { PATH: process.env.PATH, ...eventsEnv(url) } },
    );
  }
}

/**
 * Seeds both databases, starts the receiver and both servers, warms them up and runs the
 * interleaved rounds. Each run is followed by a wait until both outboxes are empty, so that a
 * server still delivering never takes the CPU from the next run; the server's CPU time until
 * then is its cost with the delivery.
 */
export async function benchEvents({
  database,
  compare,
  rounds,
  seconds,
  connections,
  useWrk,
  serverCpu,
  loadCpu,
  port,
  log,
}) {
  const none = await database('events-none', 1_000, 1_000);
  const hooks = await database('events-hooks', 1_000, 1_000);
  const compared = compare && (await database('events-compared', 1_000, 1_000));
  const receiver = await startServer({
    name: 'Webhook receiver',
    script: join(ROOT, 'bench/servers/webhook-receiver.mjs'),
    env: {},
    port: port++,
    cpu: loadCpu,
  });
  log(`Registering ${ENDPOINTS} endpoints for ${EVENT} at ${receiver.url}/hooks/1…`);
  await registerEndpoints(hooks.url, receiver.url, '');
  // The compared build's endpoints are registered by this build's command line: same table.
  if (compared) await registerEndpoints(compared.url, receiver.url, 'c');

  const specs = [
    { key: 'none', name: 'Tessera, no webhook endpoint', db: none, script: TESSERA_SCRIPT },
    {
      key: 'hooks',
      name: `Tessera, ${ENDPOINTS} webhook endpoints`,
      db: hooks,
      script: TESSERA_SCRIPT,
      paths: (path) => /^\/hooks\/\d+$/.test(path),
    },
    ...(compared
      ? [
          {
            key: 'compared',
            name: `The compared build, ${ENDPOINTS} webhook endpoints`,
            db: compared,
            script: join(resolve(compare), 'dist', 'src', 'main.js'),
            paths: (path) => /^\/hooks\/c\d+$/.test(path),
          },
        ]
      : []),
  ];
  const servers = [];
  for (const spec of specs) {
    servers.push({
      ...spec,
      inspect: await inspector(spec.db.url, spec.db.teamId),
      ...(await startServer({
        name: spec.name,
        script: spec.script,
        env: eventsEnv(spec.db.url),
        nodeArgs: [...PRODUCTION_NODE_ARGS, ...PROBE_NODE_ARGS],
        port: port++,
        cpu: serverCpu,
      })),
    });
  }

  const measure = async (s, runSeconds) => {
    const members = await s.inspect.members();
    const before = await s.inspect.counts();
    await s.probe('loop');
    const cpuStart = cpuMicros(s.pid);
    const r = await load({
      url: s.url,
      path: PATH,
      tokens: [s.db.writer],
      members,
      seconds: runSeconds,
      connections,
      useWrk,
      cpu: loadCpu,
    });
    const cpuLoad = cpuMicros(s.pid) - cpuStart;
    const loop = await s.probe('loop');
    const atStop = await s.inspect.counts();
    const stopped = Date.now();
    const after = await s.inspect.settled();
    const settleMs = Date.now() - stopped;
    const cpuAll = cpuMicros(s.pid) - cpuStart;
    const requests = Math.max(1, r.requests);
    return {
      ...r,
      cpuUsPerRequest: cpuLoad / requests,
      cpuUsWithDelivery: cpuAll / requests,
      loopMaxMs: loop?.maxMs ?? NaN,
      settleMs,
      events: after.events - before.events,
      deliveries: after.deliveries - before.deliveries,
      deliveredUnderLoad: atStop.delivered - before.delivered,
    };
  };

  log('Warming up');
  for (const s of servers) await measure(s, Math.min(3, seconds));

  const runs = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first: the machine's drift falls on both alike.
    const order = round % 2 ? servers : [...servers].reverse();
    for (const s of order) {
      const r = await measure(s, seconds);
      runs.push({ round, server: s.key, name: s.name, ...r });
      log(
        `  round ${round} ${s.name}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, ${r.cpuUsPerRequest.toFixed(0)} µs CPU/req (${r.cpuUsWithDelivery.toFixed(0)} with delivery), loop delay ≤ ${r.loopMaxMs.toFixed(1)} ms, ${r.events} events, ${r.deliveries} deliveries (${r.deliveredUnderLoad} while the load ran), outboxes empty ${(r.settleMs / 1000).toFixed(1)} s after${r.errors || r.non2xx ? `, ${r.errors} errors, ${r.non2xx} non-2xx` : ''}`,
      );
    }
  }

  const received = await receiver.probe('counts');
  const delivery = {};
  for (const s of servers.filter((server) => server.paths)) {
    const outbox = await s.inspect.counts();
    const paths = Object.keys(received?.byPath ?? {}).filter(s.paths);
    const sum = (counts) => paths.reduce((n, path) => n + (counts?.[path] ?? 0), 0);
    delivery[s.key] = {
      name: s.name,
      endpoints: ENDPOINTS,
      rows: outbox.deliveries,
      delivered: outbox.delivered,
      dead: outbox.dead,
      events: outbox.events,
      received: sum(received?.byPath),
      unique: sum(received?.uniqueByPath),
      byPath: Object.fromEntries(paths.map((path) => [path, received.byPath[path]])),
    };
  }
  for (const s of servers) {
    await s.stop();
    await s.inspect.close();
  }
  await receiver.stop();
  return { runs, delivery };
}
