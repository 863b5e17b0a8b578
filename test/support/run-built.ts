import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script of the built app (`npm test` builds first) with the given environment, node's
 * own options before the script when given, and `input` on its standard input (else nothing).
 */
export function runBuilt(
  script: string,
  args: string[],
  env: Record<string, string>,
  nodeArgs: string[] = [],
  input?: string,
): Promise<RunResult> {
  const path = join(ROOT, 'dist', 'src', script);
  if (!existsSync(path)) throw new Error(`${path} is missing: run "npm run build" first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, path, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    child.stdin.end(input ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningServer {
  url: string;
  output: () => string;
  stop(): Promise<number | null>;
}

/**
 * The node flags of `npm run start:prod` (the image runs the same): the built server starts with
 * them, so a flag this node does not take fails the specs rather than a deployment.
 */
export const PRODUCTION_NODE_FLAGS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts['start:prod']
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

/** Spawns the built server on an ephemeral port of 127.0.0.1, its output piped. */
export function spawnBuiltServer(
  env: Record<string, string>,
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, [...PRODUCTION_NODE_FLAGS, join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'log',
      NO_COLOR: '1',
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts the built server on an ephemeral port and resolves once it says it is listening. */
export function startBuiltServer(env: Record<string, string>): Promise<RunningServer> {
  const child = spawnBuiltServer(env);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1].replace('[::1]', '127.0.0.1'),
          output: () => output,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
}
