import { availableParallelism } from 'node:os';
import { join } from 'node:path';

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
      target: 'es2022',
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': swc },
  testEnvironment: 'node',
  // Redis for the specs that share limits: the machine's, or a redis-server of the run's own
  // (stopped after), or one clear line from those specs when there is none.
  globalSetup: join(import.meta.dirname, 'test/support/redis-global-setup.ts'),
  globalTeardown: join(import.meta.dirname, 'test/support/redis-global-teardown.ts'),
};

/** @type {import('jest').Config} */
export default {
  // Spec files run side by side: each app has its own database, SMTP server and port. A spec
  // spends much of its time waiting on sockets, databases and the browser, so one worker more
  // than the cores keeps them busy. On two cores: 282 s with two workers, 253 s with three,
  // 263 s with four (the whole suite on SQLite).
  maxWorkers: availableParallelism() + 1,
  // A worker's heap grows with every spec file it runs (each file loads the app's modules anew,
  // and much of that stays): measured at exit, 0.9 and 1.2 GB after some forty files each. A
  // worker past this limit after a file is replaced by a fresh one, so collections stay short.
  workerIdleMemoryLimit: '600MB',
  // How long a worker has to exit on its own once the run is over, before Jest kills it and
  // reports it as "failed to exit gracefully". A worker exits when nothing is left open in it
  // (test/support/close-leftovers.ts closes what a spec leaves), and then frees its heap; on a
  // busy machine that took longer than Jest's default 500 ms even for a worker that had run two
  // unit specs. A worker that something keeps alive is still killed, and reported, after this.
  workerGracefulExitTimeout: 5_000,
  // A guard against a hang, not a measure of speed: no test sets a shorter one, so a busy
  // machine (the browser tests take minutes there) never fails a test for being slow.
  testTimeout: 600_000,
  projects: [
    { ...common, displayName: 'unit', rootDir: 'src', testMatch: ['<rootDir>/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      rootDir: '.',
      // Closes what a spec's failed afterAll left open, so Jest never waits on it.
      setupFilesAfterEnv: ['<rootDir>/test/support/close-leftovers.ts'],
      // Specs that need a database server (cutting its connection, say) run with TEST_DATABASE_URL;
      // those that need a three-node Galera cluster (scripts/galera-cluster.sh) with
      // TEST_GALERA_URLS.
      testMatch: [
        '<rootDir>/test/**/*.e2e-spec.ts',
        ...(process.env.TEST_DATABASE_URL ? ['<rootDir>/test/**/*.mysql-e2e-spec.ts'] : []),
        ...(process.env.TEST_GALERA_URLS ? ['<rootDir>/test/**/*.galera-e2e-spec.ts'] : []),
      ],
    },
  ],
};
