// The benchmark's table: medians over the interleaved rounds, ratios within each round.
import { cpus, totalmem } from 'node:os';

/** Load shapes, each compared with the yardstick under the same shape. */
const SHAPE_SCENARIOS = new Set(['valid, 500 connections', 'valid, new connection each']);

const fixed = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '–');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export function summarize(runs) {
  const groups = new Map();
  for (const r of runs) {
    const key = `${r.server}|${r.scenario}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  // Each row against the yardstick's valid-token run of its round; a load shape against the
  // yardstick under the same shape.
  const base = (scenario) => (SHAPE_SCENARIOS.has(scenario) ? scenario : 'valid');
  const yard = (round, scenario) =>
    runs.find(
      (r) => r.server === 'yardstick' && r.scenario === base(scenario) && r.round === round,
    );
  return [...groups.values()].map((rs) => ({
    server: rs[0].server,
    name: rs[0].name,
    scenario: rs[0].scenario,
    rps: median(rs.map((r) => r.rps)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    cpuUs: median(rs.map((r) => r.cpuUsPerRequest)),
    loopMaxMs: median(rs.map((r) => r.loopMaxMs ?? NaN)),
    // The least of the rounds: noise only ever adds instructions (GC, a colder cache, the kernel).
    kInstr: Math.min(...rs.map((r) => r.kInstructionsPerRequest ?? NaN)),
    ratio: median(rs.map((r) => r.rps / (yard(r.round, r.scenario)?.rps ?? NaN))),
    p99Ratio: median(rs.map((r) => r.p99Ms / (yard(r.round, r.scenario)?.p99Ms ?? NaN))),
    errors: rs.reduce((n, r) => n + r.errors, 0),
  }));
}

export function renderReport({
  runs,
  rss,
  heap = {},
  share,
  rounds,
  seconds,
  connections,
  useWrk,
  pinned,
  database,
}) {
  const rows = summarize(runs);
  const get = (server, scenario = 'valid') =>
    rows.find((r) => r.server === server && r.scenario === scenario);
  const lines = [];
  lines.push(
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; database: ${database}`,
  );
  lines.push(
    `Load: ${useWrk ? 'wrk' : 'autocannon'}, ${connections} connections, ${seconds} s a run, ${rounds} interleaved round(s), medians shown; ${pinned ? 'servers pinned to CPU 0, load generator and database to CPU 1' : 'not pinned'}`,
  );
  lines.push('');
  const header =
    '| Server | Request | req/s | × yardstick | p50 ms | p99 ms | Longest loop delay ms | Node CPU µs/req | k instructions/req | Idle heap MB | Peak RSS MB |';
  const row = (r) =>
    `| ${r.name} | ${r.scenario.startsWith('GET ') ? `${r.scenario}, valid token` : r.scenario.replace(/^(\w+)/, '$1 token')} | ${fixed(r.rps)} | ${fixed(r.ratio, 2)} | ${fixed(r.p50Ms, 1)} | ${fixed(r.p99Ms, 1)} | ${fixed(r.loopMaxMs, 1)} | ${fixed(r.cpuUs)} | ${fixed(r.kInstr)} | ${fixed(heap[r.server], 1)} | ${fixed(rss[r.server])} |`;
  lines.push(header);
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows.filter((r) => !SHAPE_SCENARIOS.has(r.scenario))) lines.push(row(r));
  const shaped = rows.filter((r) => SHAPE_SCENARIOS.has(r.scenario));
  if (shaped.length > 0) {
    lines.push('');
    lines.push(
      'Load shapes (× yardstick: against the yardstick under the same shape in the same round):',
    );
    lines.push('');
    lines.push(header);
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of shaped) lines.push(row(r));
  }
  const t = get('tessera');
  const noRl = get('tessera-no-rate-limit');
  const noLog = get('tessera-no-request-log');
  lines.push('');
  lines.push('Cost breakdown of an authenticated Tessera request (Node CPU µs):');
  lines.push('');
  const instr = (r) => (Number.isFinite(r.kInstr) ? `${r.kInstr.toFixed(0)}k` : '–');
  const instrDelta = (a, b) =>
    Number.isFinite(a.kInstr) && Number.isFinite(b.kInstr)
      ? `${(a.kInstr - b.kInstr).toFixed(0)}k (${((100 * (a.kInstr - b.kInstr)) / a.kInstr).toFixed(1)}%)`
      : '–';
  lines.push('| Part | µs/req | instructions/req | How measured |');
  lines.push('|---|---:|---:|---|');
  lines.push(`| Whole request | ${t.cpuUs.toFixed(0)} | ${instr(t)} | production configuration |`);
  if (noRl)
    lines.push(
      `| Rate limiting | ${(t.cpuUs - noRl.cpuUs).toFixed(0)} | ${instrDelta(t, noRl)} | minus the same build with RATE_LIMIT_ENABLED=false |`,
    );
  if (noLog)
    lines.push(
      `| Request logging | ${(t.cpuUs - noLog.cpuUs).toFixed(0)} | ${instrDelta(t, noLog)} | minus the same build with LOG_REQUESTS=false |`,
    );
  for (const [area, fraction] of Object.entries(share)) {
    lines.push(
      `| ${area[0].toUpperCase()}${area.slice(1)} | ${(fraction * t.cpuUs).toFixed(0)} | | ${(fraction * 100).toFixed(1)}% of busy CPU samples (node --cpu-prof) |`,
    );
  }
  lines.push('');
  const checks = [];
  const check = (label, ok) => checks.push(`- [${ok ? 'x' : ' '}] ${label}`);
  const yard = get('yardstick');
  const peer = get('peer');
  const sqlite = database === 'SQLite';
  const least = sqlite ? 0.5 : 0.6;
  if (yard) check(`Tessera ≥ ${least}× the yardstick: ${fixed(t.ratio, 2)}×`, t.ratio >= least);
  const perRound = (other) =>
    median(
      runs
        .filter((r) => r.server === 'tessera' && r.scenario === 'valid')
        .map((r) => {
          const o = runs.find(
            (x) => x.server === other && x.scenario === 'valid' && x.round === r.round,
          );
          return o ? r.rps / o.rps : NaN;
        }),
    );
  if (peer)
    check(
      `Tessera ≥ 1.0× the Express + passport peer (same round): ${fixed(perRound('peer'), 2)}×`,
      perRound('peer') >= 1,
    );
  const floor = get('floor');
  if (floor)
    check(
      `Tessera ≥ 0.9× the NestJS floor (same round): ${fixed(perRound('floor'), 2)}×`,
      perRound('floor') >= 0.9,
    );
  if (yard)
    check(
      `p99 ≤ 2× the yardstick's p99: ${fixed(t.p99Ms, 1)} ms against ${fixed(yard.p99Ms, 1)} ms (${fixed(t.p99Ratio, 2)}×)`,
      t.p99Ratio <= 2,
    );
  const invalid = get('tessera', 'invalid');
  if (invalid)
    check(
      `Malformed or bad-checksum token answered ≥ 2.5× as fast as a valid one: ${fixed(invalid.rps / t.rps, 2)}×`,
      invalid.rps / t.rps >= 2.5,
    );
  check(`Heap at rest ≤ 30 MB: ${fixed(heap.tessera, 1)} MB`, heap.tessera <= 30);
  const pages = get('tessera-pages');
  const peak = Math.max(rss.tessera ?? NaN, pages ? (rss['tessera-pages'] ?? NaN) : -Infinity);
  check(
    `Peak RSS ≤ 150 MB, also after use of the pages: ${fixed(rss.tessera)} MB API only${pages ? `, ${fixed(rss['tessera-pages'])} MB after the pages` : ''}`,
    peak <= 150,
  );
  const small = get('tessera-10k');
  const large = get('tessera-1m');
  if (small && large)
    check(
      `1,000,000 tokens ≥ 0.95× the req/s of 10,000: ${fixed(large.rps / small.rps, 2)}×`,
      large.rps / small.rps >= 0.95,
    );

  // Introspection against GET /api/v1/token, in the same round: each authenticates a token,
  // introspection a second one too.
  const token = rows.find((r) => r.server === 'tessera' && r.scenario === 'GET /api/v1/token');
  const introspection = rows.find(
    (r) => r.server === 'tessera' && r.scenario.startsWith('POST /api/v1/introspect'),
  );
  if (token && introspection) {
    const sameRound = median(
      runs
        .filter((r) => r.server === 'tessera' && r.scenario === introspection.scenario)
        .map((r) => {
          const o = runs.find(
            (x) => x.server === 'tessera' && x.scenario === token.scenario && x.round === r.round,
          );
          return o ? r.rps / o.rps : NaN;
        }),
    );
    lines.push(
      `Introspection: ${fixed(introspection.rps)} req/s against GET /api/v1/token's ${fixed(token.rps)} (${fixed(sameRound, 2)}× in the same round), ${fixed(introspection.cpuUs)} µs of Node CPU a request against ${fixed(token.cpuUs)}.`,
    );
    lines.push('');
    check(
      `Introspection ≥ 0.9× GET /api/v1/token (same round): ${fixed(sameRound, 2)}×`,
      sameRound >= 0.9,
    );
  }
  const team = rows.find((r) => r.server === 'tessera' && r.scenario === 'GET /api/v1/team');
  const members = rows.find(
    (r) => r.server === 'tessera' && r.scenario.startsWith('GET /api/v1/team/members'),
  );
  if (team && members) {
    lines.push(
      `A page of 50 of a team of 200's members: ${fixed(members.rps)} req/s, ${fixed(members.rps / team.rps, 2)}× GET /api/v1/team (${fixed(team.rps)} req/s), ${fixed(members.cpuUs)} µs of Node CPU a request against ${fixed(team.cpuUs)}.`,
    );
    lines.push('');
  }
  lines.push('Targets:');
  lines.push('');
  lines.push(...checks);
  return lines.join('\n') + '\n';
}

/**
 * `--events`: the request with the team's webhook endpoints against the same request without,
 * medians over the rounds and the ratios within each round.
 */
export function renderEventsReport({
  runs,
  delivery,
  rounds,
  seconds,
  connections,
  useWrk,
  pinned,
  database,
}) {
  const lines = [];
  lines.push(
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; database: ${database}`,
  );
  lines.push(
    `Load: ${useWrk ? 'wrk' : 'autocannon'}, ${connections} connections, ${seconds} s a run, ${rounds} interleaved round(s), medians shown; ${pinned ? 'servers pinned to CPU 0, load generator, receiver and database to CPU 1' : 'not pinned'}`,
  );
  lines.push('');
  lines.push(
    '| Server | req/s | p50 ms | p99 ms | Longest loop delay ms | Node CPU µs/req, under load | Node CPU µs/req, with the delivery | Events/request | Outbox rows/request | Delivered while the load ran | Outboxes empty after s |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const server of ['none', 'hooks', 'compared']) {
    const rs = runs
      .filter((r) => r.server === server)
      .map((r) => ({
        ...r,
        eventsPerRequest: r.events / Math.max(1, r.requests),
        rowsPerRequest: r.deliveries / Math.max(1, r.requests),
        underLoadPercent: (100 * r.deliveredUnderLoad) / Math.max(1, r.deliveries),
        settleSeconds: r.settleMs / 1000,
      }));
    if (rs.length === 0) continue;
    const m = (key) => median(rs.map((r) => r[key]));
    const cells = [
      rs[0].name,
      fixed(m('rps')),
      fixed(m('p50Ms'), 1),
      fixed(m('p99Ms'), 1),
      fixed(m('loopMaxMs'), 1),
      fixed(m('cpuUsPerRequest')),
      fixed(m('cpuUsWithDelivery')),
      fixed(m('eventsPerRequest'), 2),
      fixed(m('rowsPerRequest'), 2),
      server === 'none' ? '–' : `${fixed(m('underLoadPercent'))} %`,
      fixed(m('settleSeconds'), 1),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push('');
  lines.push(
    '| Round | req/s without | req/s with | × req/s | × p99 | × CPU under load | × CPU with the delivery |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    const without = runs.find((r) => r.server === 'none' && r.round === round);
    const withHooks = runs.find((r) => r.server === 'hooks' && r.round === round);
    if (!without || !withHooks) continue;
    const ratio = {
      rps: withHooks.rps / without.rps,
      p99: withHooks.p99Ms / without.p99Ms,
      cpu: withHooks.cpuUsPerRequest / without.cpuUsPerRequest,
      cpuAll: withHooks.cpuUsWithDelivery / without.cpuUsWithDelivery,
    };
    ratios.push(ratio);
    lines.push(
      `| ${round} | ${fixed(without.rps)} | ${fixed(withHooks.rps)} | ${fixed(ratio.rps, 2)} | ${fixed(ratio.p99, 2)} | ${fixed(ratio.cpu, 2)} | ${fixed(ratio.cpuAll, 2)} |`,
    );
  }
  if (ratios.length > 0) {
    const m = (key) => {
      const xs = ratios.map((r) => r[key]);
      return `${fixed(median(xs), 2)} (${fixed(Math.min(...xs), 2)}–${fixed(Math.max(...xs), 2)})`;
    };
    lines.push(`| Median (range) | | | ${m('rps')} | ${m('p99')} | ${m('cpu')} | ${m('cpuAll')} |`);
  }
  if (runs.some((r) => r.server === 'compared')) lines.push('', ...comparedLines(runs, rounds));
  lines.push('');
  for (const d of Object.values(delivery)) {
    const once = d.received === d.rows && d.unique === d.rows && d.delivered === d.rows;
    const byPath = Object.entries(d.byPath).map(([path, n]) => `${path}: ${n}`);
    lines.push(
      `${d.name}, deliveries (warm-up included): ${d.events} events × ${d.endpoints} endpoints = ${d.rows} outbox rows, ${d.delivered} delivered, ${d.dead} dead; the receiver got ${d.received} requests, ${d.unique} distinct (endpoint, webhook-id) pairs (${byPath.join(', ')}): ${once ? 'every event delivered to every endpoint, once' : 'NOT every event delivered once'}.`,
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * This build's team with endpoints against the compared build's, round by round: the CPU the
 * delivery takes beyond the request is the with-delivery figure less the under-load one.
 */
function comparedLines(runs, rounds) {
  const lines = [
    'This build against the compared one, both with endpoints (× < 1: less of it in this build):',
    '',
    '| Round | × req/s | × CPU under load | × CPU with the delivery | × CPU of the delivery alone | Delivered while the load ran: this, compared | Outboxes empty after s: this, compared |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    const now = runs.find((r) => r.server === 'hooks' && r.round === round);
    const then = runs.find((r) => r.server === 'compared' && r.round === round);
    if (!now || !then) continue;
    const delivering = (r) => r.cpuUsWithDelivery - r.cpuUsPerRequest;
    const ratio = {
      rps: now.rps / then.rps,
      cpu: now.cpuUsPerRequest / then.cpuUsPerRequest,
      cpuAll: now.cpuUsWithDelivery / then.cpuUsWithDelivery,
      delivery: delivering(now) / delivering(then),
    };
    ratios.push(ratio);
    const share = (r) => `${fixed((100 * r.deliveredUnderLoad) / Math.max(1, r.deliveries))} %`;
    lines.push(
      `| ${round} | ${fixed(ratio.rps, 2)} | ${fixed(ratio.cpu, 2)} | ${fixed(ratio.cpuAll, 2)} | ${fixed(ratio.delivery, 2)} | ${share(now)}, ${share(then)} | ${fixed(now.settleMs / 1000, 1)}, ${fixed(then.settleMs / 1000, 1)} |`,
    );
  }
  if (ratios.length > 0) {
    const m = (key) => {
      const xs = ratios.map((r) => r[key]);
      return `${fixed(median(xs), 2)} (${fixed(Math.min(...xs), 2)}–${fixed(Math.max(...xs), 2)})`;
    };
    lines.push(
      `| Median (range) | ${m('rps')} | ${m('cpu')} | ${m('cpuAll')} | ${m('delivery')} | | |`,
    );
  }
  return lines;
}
