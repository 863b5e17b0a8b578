// One load run against a server: wrk when it is installed, autocannon otherwise.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

const run = promisify(execFile);

export async function hasWrk() {
  try {
    await run('wrk', ['--version']).catch((e) => (e.stdout || e.stderr ? e : Promise.reject(e)));
    return true;
  } catch {
    return false;
  }
}

const WRK_SCRIPT = `
local tokens = {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do tokens[#tokens + 1] = line end
local i = math.random(#tokens)
local close = os.getenv("BENCH_CLOSE") == "1"
local path = os.getenv("BENCH_PATH")
local caller = os.getenv("BENCH_CALLER")
-- Role changes: "id role" lines, each member's current role; every request flips the next one's.
local members = {}
local m = 0
local roles = os.getenv("BENCH_MEMBERS")
if roles ~= nil and roles ~= "" then
  for line in io.lines(roles) do
    local id, role = line:match("(%d+) (%a+)")
    members[#members + 1] = { id = id, role = role }
  end
end
request = function()
  i = i % #tokens + 1
  if #members > 0 then
    m = m % #members + 1
    local member = members[m]
    member.role = member.role == "admin" and "member" or "admin"
    local headers = { ["Authorization"] = "Bearer " .. tokens[i],
                      ["Content-Type"] = "application/json" }
    return wrk.format("PATCH", path .. "/" .. member.id, headers, '{"role":"' .. member.role .. '"}')
  end
  if caller ~= nil and caller ~= "" then
    -- Introspection: the caller's token checks each token of the list.
    local headers = { ["Authorization"] = "Bearer " .. caller,
                      ["Content-Type"] = "application/x-www-form-urlencoded" }
    return wrk.format("POST", path, headers, "token=" .. tokens[i])
  end
  local headers = { ["Authorization"] = "Bearer " .. tokens[i] }
  -- A client that does not keep connections alive: wrk opens a new one for each request.
  if close then headers["Connection"] = "close" end
  return wrk.format("GET", path, headers)
end
done = function(summary, latency, requests)
  io.write(string.format('BENCH {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d,"non2xx":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end`;

/**
 * `introspect`: POST `token=<each of tokens>` as a form with the caller's token (RFC 7662
 * introspection), instead of a GET with each token.
 * `members`: `[{ id, role }]`, the members' current roles: PATCH `<path>/<id>` with the other
 * role, one member after the other, so that every request changes a role (and so records an
 * event) as long as fewer requests are in flight than there are members.
 * `cookies`: signed-in browsers' Cookie headers, one after the other, instead of tokens (a page
 * view; autocannon only).
 * @returns {Promise<{ requests: number, rps: number, p50Ms: number, p99Ms: number, errors: number, non2xx: number }>}
 */
export async function load({
  url,
  tokens,
  seconds,
  connections,
  useWrk,
  cpu,
  close = false,
  path = '/api/v1/user/profile',
  introspect,
  members,
  cookies,
}) {
  if (close && !useWrk) throw new Error('a new connection per request needs wrk');
  if (cookies && useWrk) throw new Error('page views with cookies need autocannon');
  if (useWrk) {
    const dir = tmpdir();
    const script = join(dir, 'tessera-bench.lua');
    const tokenFile = join(dir, 'tessera-bench-tokens.txt');
    const memberFile = join(dir, 'tessera-bench-members.txt');
    writeFileSync(script, WRK_SCRIPT);
    writeFileSync(tokenFile, tokens.join('\n') + '\n');
    if (members)
      writeFileSync(memberFile, members.map((m) => `${m.id} ${m.role}`).join('\n') + '\n');
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', script, url];
    const command =
      cpu === undefined ? ['wrk', args] : ['taskset', ['-c', String(cpu), 'wrk', ...args]];
    const { stdout } = await run(command[0], command[1], {
      env: {
        ...process.env,
        BENCH_TOKENS: tokenFile,
        BENCH_CLOSE: close ? '1' : '0',
        BENCH_PATH: path,
        BENCH_CALLER: introspect?.caller ?? '',
        BENCH_MEMBERS: members ? memberFile : '',
      },
      maxBuffer: 1 << 24,
    });
    const r = JSON.parse(/BENCH (\{.*\})/.exec(stdout)[1]);
    return {
      requests: r.requests,
      rps: r.requests / (r.durationUs / 1e6),
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      errors: r.errors,
      non2xx: r.non2xx,
    };
  }
  let i = 0;
  const roles = members?.map((m) => ({ ...m }));
  let next = 0;
  const result = await autocannon({
    url: `${url}${path}`,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: roles
          ? (req) => {
              const member = roles[next++ % roles.length];
              member.role = member.role === 'admin' ? 'member' : 'admin';
              return {
                ...req,
                method: 'PATCH',
                path: `${path}/${member.id}`,
                headers: {
                  ...req.headers,
                  authorization: `Bearer ${tokens[i++ % tokens.length]}`,
                  'content-type': 'application/json',
                },
                body: JSON.stringify({ role: member.role }),
              };
            }
          : cookies
            ? (req) => ({
                ...req,
                headers: { ...req.headers, cookie: cookies[i++ % cookies.length] },
              })
            : introspect
              ? (req) => ({
                  ...req,
                  method: 'POST',
                  headers: {
                    ...req.headers,
                    authorization: `Bearer ${introspect.caller}`,
                    'content-type': 'application/x-www-form-urlencoded',
                  },
                  body: `token=${tokens[i++ % tokens.length]}`,
                })
              : (req) => ({
                  ...req,
                  headers: {
                    ...req.headers,
                    authorization: `Bearer ${tokens[i++ % tokens.length]}`,
                  },
                }),
      },
    ],
  });
  return {
    requests: result.requests.total,
    rps: result.requests.total / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}
