// Bundles the extension (Node, CommonJS) into dist/extension.js, vscode and node-pty external, and the panel
// page (browser, IIFE) into dist/webview/panel.js.
// Usage: node esbuild.mjs [--watch] [--production]
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** @type {esbuild.BuildOptions[]} */
const builds = [
  {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'node-pty'],
    sourcemap: !production,
    minify: production,
    logLevel: 'info',
  },
  {
    // The stdio bridge (src/bridge): the `codespace-mcp` bin, plain Node with the MCP SDK, no vscode.
    entryPoints: ['src/bridge/main.ts'],
    outfile: 'dist/stdio.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    sourcemap: !production,
    minify: production,
    logLevel: 'info',
  },
  {
    // The CodeSpace panel's page (src/webview-ui): runs in the webview, imports only src/shared types.
    entryPoints: ['src/webview-ui/panel.ts'],
    outfile: 'dist/webview/panel.js',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: !production,
    minify: production,
    logLevel: 'info',
  },
];

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
