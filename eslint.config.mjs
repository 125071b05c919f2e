// Lint: type-aware rules plus the dependency rule of docs/ARCHITECTURE.md (scripts/eslint/moduleBoundaries.mjs): an
// import the module map does not allow is an error that says why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { moduleBoundaries } from './scripts/eslint/moduleBoundaries.mjs';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'out/', '.vscode-test/', 'media/', 'test/fixtures/', 'test-results/', '.bench/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'No default exports: name what a module exports.' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { codespace: { rules: { 'module-boundaries': moduleBoundaries } } },
    rules: { 'codespace/module-boundaries': 'error' },
  },
  // Unit tests and benchmarks run in plain Node; bench/editor/host runs inside the extension host (npm run bench:editor).
  {
    files: ['test/unit/**/*.ts', 'bench/**/*.ts'],
    ignores: ['bench/editor/host/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'Unit tests and benchmarks run in plain Node, without vscode.' }] }] },
  },
  { files: ['scripts/**/*.mjs', 'esbuild.mjs', 'eslint.config.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', setInterval: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly' } } },
);
