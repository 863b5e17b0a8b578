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
};

/** @type {import('jest').Config} */
export default {
  // A guard against a hang, not a measure of speed: no test sets a shorter one, so a busy
  // machine (the browser tests take minutes there) never fails a test for being slow.
  testTimeout: 600_000,
  projects: [
    { ...common, displayName: 'unit', rootDir: 'src', testMatch: ['<rootDir>/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      rootDir: '.',
      // Specs that need a database server (cutting its connection, say) run with TEST_DATABASE_URL.
      testMatch: [
        '<rootDir>/test/**/*.e2e-spec.ts',
        ...(process.env.TEST_DATABASE_URL ? ['<rootDir>/test/**/*.mysql-e2e-spec.ts'] : []),
      ],
    },
  ],
};
