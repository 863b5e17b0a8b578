import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script of the built app (`npm test` builds first) with the given environment. */
export function runBuilt(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<RunResult> {
  const path = join(ROOT, 'dist', 'src', script);
  if (!existsSync(path)) throw new Error(`${path} is missing: run "npm run build" first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
