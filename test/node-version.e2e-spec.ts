import { describe, expect, it } from '@jest/globals';
import { runBuilt } from './support/run-built.js';

/**
 * Node as an older release reports itself, and every native module it loads named on stderr:
 * the check must speak, and stop the process, before the first one loads (argon2 crashes an
 * older Node with nothing but "Segmentation fault").
 */
const AS_NODE_20 = [
  '--import',
  'data:text/javascript,' +
    encodeURIComponent(
      [
        'Object.defineProperty(process.versions, "node", { value: "20.20.2" });',
        'const dlopen = process.dlopen;',
        'process.dlopen = (module, file, ...rest) => {',
        '  process.stderr.write(`native module loaded: ${file}\\n`);',
        '  return dlopen(module, file, ...rest);',
        '};',
      ].join('\n'),
    ),
];

describe('the Node.js version check', () => {
  for (const [what, script, args] of [
    ['the server (npm start, start:prod, the image)', 'main.js', []],
    ['the command line', 'cli.js', ['user:list']],
    ["npm test's check", 'node-version.js', []],
  ] as const) {
    it(`should stop ${what} on an older Node with what it needs and how to get it, before any native module loads`, async () => {
      const r = await runBuilt(script, [...args], { DATABASE_URL: 'sqlite::memory:' }, AS_NODE_20);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^Tessera needs Node\.js 24\.11 or later \(package\.json "engines": ">=24\.11"\); this is Node\.js 20\.20\.2 \(.+\)\.\n/,
      );
      expect(r.stderr).toContain('nvm install');
      expect(r.stderr).toMatch(/npm install --prefix ~\/\.local\/node24 node-\w+-\w+@24/);
      expect(r.stderr).not.toContain('native module loaded');
    });
  }

  it('should let the same Node run the command line when its version is supported', async () => {
    // The same probe without the older version: the check passes and the native modules load.
    const probe = AS_NODE_20.map((arg) => arg.replace('20.20.2', '24.11.0'));
    const r = await runBuilt('cli.js', ['--help'], { DATABASE_URL: 'sqlite::memory:' }, probe);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: npm run cli -- <command> [options]');
    expect(r.stderr).toContain('native module loaded');
  });
});
