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

/** What no file of src/core may import, whatever its layer. */
const coreBans = [
  { group: ['**/mcp/**', '**/node/**', '**/vscode/**', '**/webview-ui/**', '**/shared/**', '**/extension'], message: 'core imports only core: it is the part every adapter depends on.' },
  { group: ['@modelcontextprotocol/*', 'express', 'node-pty'], message: 'core must not know the MCP SDK, express or node-pty: put that in an adapter (src/mcp, src/node).' },
];

/**
 * The layers inside src/core, lowest first (docs/ARCHITECTURE.md). A file imports its own folder and lower layers
 * only; folders of one layer marked `apart` do not import each other either.
 */
export const CORE_LAYERS = [
  { name: 'base', folders: ['util', 'discovery'], files: ['src/core/*.ts'] },
  { name: 'ports', folders: ['ports'] },
  { name: 'policy and records', folders: ['policy', 'ledger'], apart: true },
  { name: 'services', folders: ['approvals', 'patch', 'process', 'language', 'steering'], apart: true },
  { name: 'work history', folders: ['checkpoints'] },
  { name: 'runner', folders: ['runner', 'review'] },
  { name: 'tools', folders: ['tools'] },
];

/** One config per folder of a core layer: the core-wide bans plus every higher layer (and its peers when apart). */
function coreLayers() {
  const configs = [];
  CORE_LAYERS.forEach((level, i) => {
    const higher = CORE_LAYERS.slice(i + 1).flatMap((l) => l.folders);
    const units = level.apart ? level.folders.map((f) => [f]) : [level.folders];
    for (const unit of units) {
      const peers = level.folders.filter((f) => !unit.includes(f));
      const banned = [...higher, ...peers];
      const files = [...unit.map((f) => `src/core/${f}/**/*.ts`), ...(level.files ?? [])];
      const lower = CORE_LAYERS.slice(0, i).map((l) => l.name);
      const why =
        `core layer "${level.name}" (${unit.join(', ')}) imports only its own folder${lower.length ? ` and lower layers (${lower.join(', ')})` : ''}: ` +
        'higher layers build on it, never the other way, and the folders of one layer stay apart. See docs/ARCHITECTURE.md.';
      const patterns = banned.length ? [...coreBans, { group: banned.flatMap((f) => [`**/${f}/**`, `**/${f}`]), message: why }] : coreBans;
      configs.push(layer(files, patterns, [vscodeBan]));
    }
  });
  // A folder added to core later has at least the core-wide bans (the configs after this one override it per layer).
  return [layer(['src/core/**/*.ts'], coreBans, [vscodeBan]), ...configs];
}

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
  ...coreLayers(),
  layer(['src/base/**/*.ts'], [
    { group: ['../*', '!../base', '!../base/**'], message: 'src/base is the bottom of every layer: it imports only src/base and Node.' },
  ], [vscodeBan]),
  layer(['src/mcp/**/*.ts', 'src/node/**/*.ts'], [
    { group: ['**/vscode/**', '**/webview-ui/**', '**/extension'], message: 'mcp and node import core only: adapters do not know each other.' },
  ], [vscodeBan]),
  layer(['src/bridge/**/*.ts'], [
    { group: ['**/mcp/**', '**/vscode/**', '**/webview-ui/**', '**/extension'], message: 'The stdio bridge runs outside the editor: it imports core, node/discovery and the MCP SDK only.' },
  ], [vscodeBan]),
  // Computes, from the window's own definition (src/mcp/toolSchemas.ts), the catalogue the bridge answers with before
  // it has found the window. Run at build time only (scripts/shippedCatalogue.mjs puts its result in dist/stdio.js as
  // data), and from the sources in tests: the bundle holds no mcp code.
  layer(['src/bridge/catalogueSource.ts'], [
    { group: ['**/vscode/**', '**/webview-ui/**', '**/extension'], message: 'The stdio bridge runs outside the editor: it imports core, node/discovery and the MCP SDK only.' },
  ], [vscodeBan]),
  {
    ...layer(['src/vscode/**/*.ts'], [
      { group: ['**/mcp/**', '**/node/**', '**/webview-ui/**', '**/extension'], message: 'src/vscode imports core and shared only; extension.ts and src/vscode/activation wire adapters together.' },
    ]),
    ignores: ['src/vscode/activation/**'],
  },
  // The pieces of activation (extension.ts starts them): they wire the node and mcp adapters to the editor's side.
  layer(['src/vscode/activation/**/*.ts'], [
    { group: ['**/webview-ui/**', '**/extension'], message: 'Activation wires adapters together; it does not import the panel page or extension.ts.' },
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
