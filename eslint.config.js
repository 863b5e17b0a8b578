import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import layers from './scripts/layers.cjs';

const { DOORS } = layers;

export default tseslint.config(
  // The API client's types are generated from the OpenAPI document (npm run api:client).
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      'data/',
      'bench/results/',
      'test/client/tessera-api.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  // Nothing below the doors speaks Express: a feature or a foundation takes what it needs as
  // arguments.
  {
    files: ['src/*/**/*.ts'],
    ignores: DOORS.map((door) => `src/${door}/**`),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['express', 'express-session', '@nestjs/platform-express'].map((name) => ({
            name,
            message:
              'Only the doors (web/, api/, cli/) and the HTTP server under them (http/) import Express and its session.',
          })),
        },
      ],
    },
  },
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: [
      'src/cli.ts',
      'src/cli/**/*.ts',
      'bench/**/*.{ts,js,mjs}',
      'docs/examples/**/*.mjs',
      'scripts/page-walk.mjs',
    ],
    rules: { 'no-console': 'off' },
  },
);
