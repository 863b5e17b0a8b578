import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './support/run-built.js';

/** Runs Jest on the fixtures in a process of its own; its exit code, or null if it had to be killed. */
function runFixtures(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(ROOT, 'node_modules/jest/bin/jest.js'), '--config', 'test/fixtures/jest.config.js'],
      { cwd: ROOT, env: process.env },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A guard against the hang this spec is about, not a measure of speed.
    const guard = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    });
  });
}

describe('Jest after a failing hook', () => {
  it('should fail the spec and exit, closing the app and browser its afterAll left open', async () => {
    const { code, output } = await runFixtures();
    expect(output).toContain('afterAll failed before closing');
    expect(output).toContain('Tests:       1 passed, 1 total');
    expect(output).not.toContain('Jest did not exit');
    expect(code).toBe(1);
  });
});
