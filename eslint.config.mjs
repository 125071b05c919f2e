// Lint: type-aware rules plus the dependency rule of ARCHITECTURE (a wrong import is an error that says why).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const vscodeBan = {
  name: 'vscode',
  message: 'Only src/vscode and src/extension.ts may import vscode: the core, mcp and node layers must run in plain Node.',
};
const layer = (files, patterns, paths = []) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { paths, patterns }] },
});

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
  layer(['src/core/**/*.ts'], [
    { group: ['**/mcp/**', '**/node/**', '**/vscode/**', '**/webview-ui/**', '**/shared/**', '**/extension'], message: 'core imports only core: it is the part every adapter depends on.' },
    { group: ['@modelcontextprotocol/*', 'express', 'node-pty'], message: 'core must not know the MCP SDK, express or node-pty: put that in an adapter (src/mcp, src/node).' },
  ], [vscodeBan]),
  layer(['src/mcp/**/*.ts', 'src/node/**/*.ts'], [
    { group: ['**/vscode/**', '**/webview-ui/**', '**/extension'], message: 'mcp and node import core only: adapters do not know each other.' },
  ], [vscodeBan]),
  layer(['src/bridge/**/*.ts'], [
    { group: ['**/mcp/**', '**/vscode/**', '**/webview-ui/**', '**/extension'], message: 'The stdio bridge runs outside the editor: it imports core, node/discovery and the MCP SDK only.' },
  ], [vscodeBan]),
  layer(['src/vscode/**/*.ts'], [
    { group: ['**/mcp/**', '**/node/**', '**/webview-ui/**', '**/extension'], message: 'src/vscode imports core and shared only; extension.ts wires adapters together.' },
  ]),
  layer(['src/webview-ui/**/*.ts'], [
    { group: ['**/core/**', '**/mcp/**', '**/node/**', '**/vscode/**', '**/extension'], message: 'The panel page runs in a browser: it imports only src/shared.' },
  ], [vscodeBan]),
  layer(['src/shared/**/*.ts'], [
    { group: ['**/core/**', '**/mcp/**', '**/node/**', '**/vscode/**', '**/webview-ui/**', '**/extension'], message: 'src/shared holds message types only and imports nothing of ours.' },
  ], [vscodeBan]),
  // bench/editor/host runs inside the extension host (npm run bench:editor) and needs vscode.
  { ...layer(['test/unit/**/*.ts', 'bench/**/*.ts'], [], [vscodeBan]), ignores: ['bench/editor/host/**'] },
  { files: ['scripts/**/*.mjs', 'esbuild.mjs', 'eslint.config.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', setInterval: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly' } } },
);
