import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['src/cli.ts', 'src/cli/**/*.ts', 'bench/**/*.{ts,js,mjs}', 'docs/examples/**/*.mjs'],
    rules: { 'no-console': 'off' },
  },
);
