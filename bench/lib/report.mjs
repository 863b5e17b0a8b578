// The benchmark's table: medians over the interleaved rounds, ratios within each round.
import { cpus, totalmem } from 'node:os';

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
  const yard = (round) =>
    runs.find((r) => r.server === 'yardstick' && r.scenario === 'valid' && r.round === round);
  return [...groups.values()].map((rs) => ({
    server: rs[0].server,
    name: rs[0].name,
    scenario: rs[0].scenario,
    rps: median(rs.map((r) => r.rps)),
    p50Ms: median(rs.map((r) => r.p50Ms)),
    p99Ms: median(rs.map((r) => r.p99Ms)),
    cpuUs: median(rs.map((r) => r.cpuUsPerRequest)),
    // The least of the rounds: noise only ever adds instructions (GC, a colder cache, the kernel).
    kInstr: Math.min(...rs.map((r) => r.kInstructionsPerRequest ?? NaN)),
    ratio: median(rs.map((r) => r.rps / (yard(r.round)?.rps ?? NaN))),
    errors: rs.reduce((n, r) => n + r.errors, 0),
  }));
}

export function renderReport({
  runs,
  rss,
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
  lines.push(
    '| Server | Request | req/s | × yardstick | p50 ms | p99 ms | Node CPU µs/req | k instructions/req | Peak RSS MB |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    lines.push(
      `| ${r.name} | ${r.scenario} token | ${r.rps.toFixed(0)} | ${r.ratio.toFixed(2)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.cpuUs.toFixed(0)} | ${Number.isFinite(r.kInstr) ? r.kInstr.toFixed(0) : '–'} | ${(rss[r.server] ?? NaN).toFixed(0)} |`,
    );
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
  if (yard) check(`Tessera ≥ 0.30× the yardstick: ${t.ratio.toFixed(2)}×`, t.ratio >= 0.3);
  if (peer)
    check(
      `Tessera ≥ 1.2× the Express + passport peer: ${(t.rps / peer.rps).toFixed(2)}×`,
      t.rps / peer.rps >= 1.2,
    );
  check(`p99 ≤ 40 ms: ${t.p99Ms.toFixed(1)} ms`, t.p99Ms <= 40);
  if (database !== 'SQLite')
    check(`Node CPU ≤ 220 µs per authenticated request: ${t.cpuUs.toFixed(0)} µs`, t.cpuUs <= 220);
  if (noLog)
    check(
      `Request logging ≤ 30 µs of it: ${(t.cpuUs - noLog.cpuUs).toFixed(0)} µs`,
      t.cpuUs - noLog.cpuUs <= 30,
    );
  const invalid = get('tessera', 'invalid');
  if (invalid)
    check(
      `Malformed or bad-checksum token answered ≥ 2× as fast as a valid one: ${(invalid.rps / t.rps).toFixed(2)}×`,
      invalid.rps / t.rps >= 2,
    );
  const small = get('tessera-10k');
  const large = get('tessera-1m');
  if (small && large)
    check(
      `1,000,000 tokens ≥ 0.9× the req/s of 10,000: ${(large.rps / small.rps).toFixed(2)}×`,
      large.rps / small.rps >= 0.9,
    );
  check(
    `Peak RSS ≤ 200 MB: ${(rss.tessera ?? NaN).toFixed(0)} MB`,
    (rss.tessera ?? Infinity) <= 200,
  );
  lines.push('Targets:');
  lines.push('');
  lines.push(...checks);
  return lines.join('\n') + '\n';
}
