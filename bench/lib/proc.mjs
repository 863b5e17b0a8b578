// Process measurements from /proc: CPU time used by a process and its peak resident memory.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** User + system CPU time of a process, in microseconds. */
export function cpuMicros(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1e6;
}

/** Peak resident set size of a process, in MB. */
export function peakRssMb(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

export function tasksetWorks() {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of a running process to one CPU; returns how to undo it. */
export function pinProcess(pid, cpu) {
  const before = execFileSync('taskset', ['-p', String(pid)])
    .toString()
    .trim()
    .split(': ')
    .pop();
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  return () => execFileSync('taskset', ['-a', '-p', before, String(pid)], { stdio: 'ignore' });
}

/** Starts a server (pinned when `cpu` is set) and resolves once it answers on `port`. */
export async function startServer({ name, script, args = [], env, port, cpu, nodeArgs = [] }) {
  const command =
    cpu === undefined
      ? [process.execPath, [...nodeArgs, script, ...args]]
      : ['taskset', ['-c', String(cpu), process.execPath, ...nodeArgs, script, ...args]];
  const child = spawn(command[0], command[1], {
    env: { PATH: process.env.PATH, ...env, PORT: String(port) },
    // The IPC channel reaches the probe (bench/lib/probe.mjs) when the server loads it.
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  let stopping = false;
  // A server that dies during a run says why, rather than leaving the bench to fail reading it.
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`${name} exited (${signal ?? code}) during the run:\n${stderr}`);
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    try {
      await fetch(`http://127.0.0.1:${port}/api/v1/user/profile`);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${name} did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    name,
    pid: child.pid,
    url: `http://127.0.0.1:${port}`,
    /** Asks the probe ('loop' or 'heap'); undefined when the server has none or is silent. */
    probe: (question) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => finish(undefined), 10_000);
        const onMessage = (answer) => answer?.[question] !== undefined && finish(answer[question]);
        const finish = (value) => {
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(value);
        };
        child.on('message', onMessage);
        if (!child.connected || !child.send(question)) finish(undefined);
      }),
    stop: () =>
      new Promise((resolve) => {
        stopping = true;
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** Whether `perf stat` can count instructions here (it cannot on some virtual machines). */
export function perfWorks() {
  const r = spawnSync('perf', ['stat', '-x', ',', '-e', 'instructions', 'true'], {
    encoding: 'utf8',
  });
  return (
    r.status === 0 && /,instructions/.test(r.stderr) && !/not (supported|counted)/.test(r.stderr)
  );
}

/**
 * Counts the instructions a process runs (user and kernel, every thread) until `stop()` is
 * called. Unlike CPU time, the count hardly depends on what else the machine is doing, so it
 * shows differences of a few per cent that CPU time hides in noise.
 */
export function countInstructions(pid) {
  const child = spawn('perf', ['stat', '-x', ',', '-e', 'instructions', '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const closed = new Promise((resolve) => child.on('close', resolve));
  return {
    stop: async () => {
      child.kill('SIGINT');
      await closed;
      const line = stderr.split('\n').find((l) => l.includes(',instructions'));
      const value = line ? Number(line.split(',')[0]) : NaN;
      return Number.isFinite(value) ? value : NaN;
    },
  };
}
