/**
 * The Node.js check that main.ts, cli.ts and `npm test` run first. On an older Node a native
 * module (argon2) crashes the process before anything speaks, with only "Segmentation fault":
 * this file is imported before any other and imports nothing, so the version is checked before
 * any native module loads.
 */

/** The oldest Node.js Tessera runs on: package.json's `engines` (its spec holds them equal). */
export const REQUIRED_NODE = { major: 24, minor: 11 } as const;

export interface NodeRuntime {
  /** `process.versions.node`, such as 20.20.2. */
  version: string;
  /** The binary that runs, so the message says which Node it found. */
  execPath: string;
  platform: string;
  arch: string;
}

/** What to tell a person whose Node is too old, or undefined when it will do. */
export function unsupportedNodeMessage(runtime: NodeRuntime): string | undefined {
  const [major, minor] = runtime.version.split('.').map(Number);
  const { major: needMajor, minor: needMinor } = REQUIRED_NODE;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  const needed = `${needMajor}.${needMinor}`;
  // The npm registry ships Node's own binaries as node-<platform>-<arch> packages.
  const pkg = `node-${runtime.platform === 'win32' ? 'win' : runtime.platform}-${runtime.arch}`;
  return [
    `Tessera needs Node.js ${needed} or later (package.json "engines": ">=${needed}"); this is Node.js ${runtime.version} (${runtime.execPath}).`,
    `Install Node ${needMajor} with nvm ("nvm install" reads .nvmrc), or from the npm registry into a folder of its own:`,
    `  npm install --prefix ~/.local/node${needMajor} ${pkg}@${needMajor}`,
    `  export PATH="$HOME/.local/node${needMajor}/node_modules/${pkg}/bin:$PATH"`,
    'then run the same command again.',
  ].join('\n');
}

const message = unsupportedNodeMessage({
  version: process.versions.node,
  execPath: process.execPath,
  platform: process.platform,
  arch: process.arch,
});
if (message !== undefined) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
