// Bundles the extension (Node, CommonJS) into dist/extension.js, vscode and node-pty external, and the panel
// page (browser, IIFE) into dist/webview/panel.js.
// Usage: node esbuild.mjs [--watch] [--production]
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { sdkMessageChecks } from './scripts/sdkMessageChecks.mjs';
import { shippedCatalogue } from './scripts/shippedCatalogue.mjs';

/**
 * The v2 MCP SDK's server and core packages each bring their own copy of the same zod 4 (the project's own zod is
 * 3, so npm cannot hoist it): resolve zod for both from the core package, so the bundle holds it once (~100 KB).
 */
const oneZodForMcpV2 = {
  name: 'one-zod-for-mcp-v2',
  setup(build) {
    const core = path.resolve('node_modules/@modelcontextprotocol/core');
    build.onResolve({ filter: /^zod(\/.*)?$/ }, (args) => {
      if (args.pluginData === 'one-zod' || !args.importer.includes(`${path.sep}@modelcontextprotocol${path.sep}server${path.sep}`)) return undefined;
      return build.resolve(args.path, { resolveDir: core, kind: args.kind, pluginData: 'one-zod' });
    });
  },
};

/**
 * Both MCP SDK servers build a JSON Schema validator on ajv, used only to check answers to elicitations, which this
 * server never asks for: the v1 SDK's provider module (imported by a relative path, so `alias` cannot reach it) is
 * resolved to src/mcp/noJsonSchemaValidator.ts, which throws if ever called; the v2 SDK gets the same through
 * src/mcp/v2Shims.ts.
 */
const noAjvInTheExtension = {
  name: 'no-ajv-in-the-extension',
  setup(build) {
    build.onResolve({ filter: /[\\/]validation[\\/]ajv-provider(\.js)?$/ }, (args) => {
      if (!args.importer.includes(`${path.sep}@modelcontextprotocol${path.sep}`)) return undefined;
      return { path: path.resolve('src/mcp/noJsonSchemaValidator.ts') };
    });
  },
};

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
    // express's body parsing needs a few decoders, not iconv-lite's code tables (half the bundle): src/base/node/iconvLite.ts.
    // express looks up only the content types this server sends or parses, not all of mime-db's 150 KB:
    // src/base/node/mimeDbSubset.json holds those entries exactly as mime-db has them (test/unit/mimeDbSubset.test.ts).
    // proxy-chain (the network proxy, src/features/processes/node/sandbox/networkProxy.ts) can chain to an upstream SOCKS proxy; ours
    // never does, so its SOCKS client (70 KB minified) is replaced by src/features/processes/node/sandbox/noSocks.ts, which throws.
    // qs serves only express's "extended" query parser and urlencoded bodies, neither used here: src/base/node/noQs.ts.
    // Both MCP SDKs try every incoming request as two kinds of response (two failing zod parses) before they see a
    // request (and each request's params as a task's): scripts/sdkMessageChecks.mjs looks at the message's keys first.
    plugins: [oneZodForMcpV2, noAjvInTheExtension, sdkMessageChecks()],
    alias: {
      // The v2 MCP SDK's Node shims without their inlined ajv copy: src/mcp/v2Shims.ts.
      '@modelcontextprotocol/server/_shims': './src/mcp/v2Shims.ts',
      'iconv-lite': './src/base/node/iconvLite.ts',
      'mime-db': './src/base/node/mimeDbSubset.json',
      qs: './src/base/node/noQs.ts',
      socks: './src/features/processes/node/sandbox/noSocks.ts',
      'socks-proxy-agent': './src/features/processes/node/sandbox/noSocks.ts',
    },
    sourcemap: !production,
    minify: production,
    logLevel: 'info',
  },
  {
    // The relay a sandbox with codespace.exec.network "domains" runs inside (src/features/processes/node/sandbox/netRelay.ts).
    entryPoints: ['src/features/processes/node/sandbox/netRelay.ts'],
    outfile: 'dist/netRelay.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: false,
    minify: production,
    logLevel: 'info',
  },
  {
    // The process host (src/features/processes/node/processHost/main.ts): runs agents' processes beside the window so they outlive a
    // reload; node-pty stays external (it loads VS Code's own copy, or the bundled one, as the extension does).
    entryPoints: ['src/features/processes/node/processHost/main.ts'],
    outfile: 'dist/processHost.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['node-pty'],
    // The sandbox's network proxy runs here too: the same SOCKS stand-in as the extension's bundle.
    alias: { socks: './src/features/processes/node/sandbox/noSocks.ts', 'socks-proxy-agent': './src/features/processes/node/sandbox/noSocks.ts' },
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
    // The tool catalogue it answers with before it has found the window, computed now (scripts/shippedCatalogue.mjs).
    plugins: [sdkMessageChecks(), shippedCatalogue()],
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
  // --production also writes each bundle's metafile to out/esbuild/ (what takes the bytes: esbuild --analyze or
  // https://esbuild.github.io/analyze/).
  const results = await Promise.all(builds.map((b) => esbuild.build({ ...b, metafile: production })));
  if (production) {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const path = await import('node:path');
    mkdirSync('out/esbuild', { recursive: true });
    results.forEach((r, i) => writeFileSync(path.join('out/esbuild', `${path.basename(builds[i].outfile, '.js')}.meta.json`), JSON.stringify(r.metafile)));
  }
}
