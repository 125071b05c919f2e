// `npm run package`: builds the VSIX a user installs (`code --install-extension codespace-vscode-<version>.vsix`).
//
// 1. A clean production build (minified, no source maps) into dist/.
// 2. The node-pty fallback staged into dist/node-pty/: only what loads at run time (package.json, LICENSE, lib/*.js
//    without tests and maps, build/Release/pty.node, and node-pty's own macOS prebuilds with their spawn-helper).
//    At run time the extension first loads the node-pty VS Code ships in its application root (built for the
//    editor's runtime on every platform); this copy is only used when that fails (src/features/processes/node/nodePtyLoader.ts).
// 3. `vsce package --no-dependencies`: esbuild already bundled every JavaScript dependency into dist/extension.js,
//    so vsce must not copy node_modules (it would add express, the MCP SDK and zod again, unminified).
//    .vscodeignore keeps the VSIX to dist/, media/, README, CHANGELOG and LICENSE.
// 4. Prints the figures the README quotes: sizes of dist/extension.js, dist/webview/panel.js and the VSIX.
//
// Works offline: nothing here reaches the network. Options: --out <file.vsix>, --target <platform> (passed to vsce,
// for a platform-specific VSIX; the staged fallback is still this machine's build).
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './installVsCodeHost.mjs';

const args = process.argv.slice(2);
const option = (name) => (args.indexOf(name) >= 0 ? args[args.indexOf(name) + 1] : undefined);
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
const vsix = path.resolve(REPO_ROOT, option('--out') ?? `${pkg.name}-${pkg.version}.vsix`);
const target = option('--target');

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[package] ${path.basename(cmd)} ${cmdArgs.join(' ')} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

/** Copies node-pty's run-time files into `dest`. */
function stageNodePty(dest) {
  const src = path.join(REPO_ROOT, 'node_modules', 'node-pty');
  if (!existsSync(path.join(src, 'build', 'Release', 'pty.node'))) {
    console.error('[package] node_modules/node-pty/build/Release/pty.node is missing: run `npm install` first');
    process.exit(1);
  }
  mkdirSync(dest, { recursive: true });
  for (const f of ['package.json', 'LICENSE']) cpSync(path.join(src, f), path.join(dest, f));
  cpSync(path.join(src, 'lib'), path.join(dest, 'lib'), {
    recursive: true,
    filter: (p) => statSync(p).isDirectory() || (p.endsWith('.js') && !p.endsWith('.test.js')),
  });
  const natives = [path.join('build', 'Release', 'pty.node'), path.join('build', 'Release', 'spawn-helper')];
  for (const platform of ['darwin-arm64', 'darwin-x64']) natives.push(path.join('prebuilds', platform, 'pty.node'), path.join('prebuilds', platform, 'spawn-helper'));
  for (const rel of natives) {
    if (!existsSync(path.join(src, rel))) continue;
    mkdirSync(path.dirname(path.join(dest, rel)), { recursive: true });
    cpSync(path.join(src, rel), path.join(dest, rel));
    // spawn-helper is exec'd by node-pty on macOS: keep it executable.
    if (rel.endsWith('spawn-helper')) chmodSync(path.join(dest, rel), 0o755);
  }
}

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

rmSync(path.join(REPO_ROOT, 'dist'), { recursive: true, force: true });
run(process.execPath, ['esbuild.mjs', '--production']);
stageNodePty(path.join(REPO_ROOT, 'dist', 'node-pty'));
const vsce = path.join(REPO_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
mkdirSync(path.dirname(vsix), { recursive: true });
run(process.execPath, [vsce, 'package', '--no-dependencies', '--out', vsix, ...(target ? ['--target', target] : [])]);

const size = (rel) => statSync(path.join(REPO_ROOT, rel)).size;
const figures = {
  'dist/extension.js': size('dist/extension.js'),
  'dist/webview/panel.js': size('dist/webview/panel.js'),
  'dist/node-pty (fallback)': listFiles(path.join(REPO_ROOT, 'dist', 'node-pty')).reduce((n, f) => n + statSync(f).size, 0),
  [path.relative(REPO_ROOT, vsix)]: statSync(vsix).size,
};
console.log('\n[package] figures');
for (const [name, bytes] of Object.entries(figures)) console.log(`  ${name.padEnd(34)} ${String(bytes).padStart(9)} bytes  ${kib(bytes).padStart(11)}`);
mkdirSync(path.join(REPO_ROOT, 'out'), { recursive: true });
writeFileSync(path.join(REPO_ROOT, 'out', 'package-figures.json'), JSON.stringify({ vsix: path.relative(REPO_ROOT, vsix), bytes: figures }, null, 2) + '\n');
// 1 MiB before MCP 2026-07-28; serving it with the official v2 SDK (server + core + its zod 4) costs about 320 KiB
// minified after trimming its duplicates (esbuild.mjs), hence 1.25 MiB. Leaving out ajv (esbuild.mjs,
// src/mcp/noJsonSchemaValidator.ts) saved about 125 KiB, which pays for review comments, worktree works, review after
// the write, checkpoints and frozen works (about 95 KiB of the extension's own code): 1,239 KiB. Same figure:
// bench/editor/activation.ts. The editor's runtime for agents (the debugger, tasks and code tools: about 45 KiB of the
// extension's own code, their groups served only on request) took it to 1,309 KiB, hence 1.30 MiB.
const BUNDLE_BUDGET = 1.3 * 1024 * 1024;
if (figures['dist/extension.js'] >= BUNDLE_BUDGET) {
  console.error(`[package] dist/extension.js is ${kib(figures['dist/extension.js'])}: over the ${kib(BUNDLE_BUDGET)} budget (see out/esbuild/extension.meta.json)`);
  process.exit(1);
}
console.log(`\n[package] install with: code --install-extension ${path.relative(process.cwd(), vsix) || vsix}`);
