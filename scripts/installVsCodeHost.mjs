// Installs the offline VS Code test host (code-server, which is VS Code 1.100.3 served to a browser) into
// .vscode-test/code-server/ on first use; later runs find it and skip. Why each step: docs/TESTING.md.
// Usage: node scripts/installVsCodeHost.mjs        (also imported by runVsCodeTests.mjs and test/e2e/host.ts)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.100.3';
// The @vscode/ripgrep bundled by code-server 4.100.3, and the rg release it would download from GitHub.
const RIPGREP_PKG_VERSION = '1.15.11';
const RIPGREP_TAG = 'v13.0.0-10';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const HOST_DIR = path.join(REPO_ROOT, '.vscode-test', 'code-server');
export const CODE_SERVER_BIN = path.join(HOST_DIR, 'node_modules', '.bin', 'code-server');
export const CHROMIUM_PATH = '/usr/bin/chromium';
const RG_PATH = '/usr/bin/rg';

function log(message) {
  console.log(`[vscode-host] ${message}`);
}

/** The installed code-server version, or undefined when none is installed. */
export function installedVersion() {
  const pkg = path.join(HOST_DIR, 'node_modules', 'code-server', 'package.json');
  if (!existsSync(pkg) || !existsSync(CODE_SERVER_BIN)) return undefined;
  try {
    return JSON.parse(readFileSync(pkg, 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Throws a message that names the Debian package when a required binary is missing. */
export function checkPrerequisites() {
  const missing = [];
  if (!existsSync(RG_PATH)) missing.push(`${RG_PATH} (Debian package: ripgrep)`);
  if (!existsSync(CHROMIUM_PATH)) missing.push(`${CHROMIUM_PATH} (Debian package: chromium)`);
  if (missing.length > 0) {
    throw new Error(
      `The VS Code test host needs: ${missing.join(', ')}.\n` +
        'Install with: apt-get update && apt-get install -y ripgrep chromium ' +
        '(building code-server also needs libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config).',
    );
  }
}

function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

/**
 * @vscode/ripgrep's postinstall downloads rg from GitHub unless it finds a cached archive; put Debian's rg
 * there so the install works offline.
 */
async function prepareRipgrepCache() {
  const cacheDir = path.join(os.tmpdir(), `vscode-ripgrep-cache-${RIPGREP_PKG_VERSION}`);
  const archive = path.join(cacheDir, `ripgrep-${RIPGREP_TAG}-x86_64-unknown-linux-musl.tar.gz`);
  if (existsSync(archive)) {
    log(`ripgrep cache present: ${archive}`);
    return;
  }
  mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(path.join(os.tmpdir(), 'rg-staging-'));
  try {
    copyFileSync(RG_PATH, path.join(staging, 'rg'));
    await run('tar', ['-czf', archive, '-C', staging, 'rg']);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`ripgrep cache created from ${RG_PATH}: ${archive}`);
}

/** Installs code-server into .vscode-test/code-server unless the right version is there already. */
export async function ensureVsCodeHost() {
  checkPrerequisites();
  const current = installedVersion();
  if (current === CODE_SERVER_VERSION) {
    log(`code-server ${current} already installed in ${path.relative(REPO_ROOT, HOST_DIR)}`);
    return;
  }
  log(
    current
      ? `code-server ${current} found, installing ${CODE_SERVER_VERSION} instead`
      : `installing code-server ${CODE_SERVER_VERSION} into ${path.relative(REPO_ROOT, HOST_DIR)} (about 80 s)`,
  );
  const started = Date.now();
  mkdirSync(HOST_DIR, { recursive: true });
  writeFileSync(
    path.join(HOST_DIR, 'package.json'),
    JSON.stringify({ name: 'vscode-test-host', private: true, description: 'code-server for the test suites' }, null, 2) + '\n',
  );
  await prepareRipgrepCache();
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`], {
    cwd: HOST_DIR,
    env: {
      ...process.env,
      // node-pty's postinstall runs `npx node-gyp`, which otherwise waits for a yes.
      npm_config_yes: 'true',
      // code-server's postinstall.sh refuses to run as root under npm unless this is set (npm 11 no longer
      // knows the option, but the script reads the variable).
      npm_config_unsafe_perm: 'true',
    },
  });
  const installed = installedVersion();
  if (installed !== CODE_SERVER_VERSION) {
    throw new Error(`code-server install finished but ${CODE_SERVER_BIN} / version ${installed ?? 'none'} is not ${CODE_SERVER_VERSION}`);
  }
  log(`code-server ${installed} installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureVsCodeHost().catch((error) => {
    console.error(`[vscode-host] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
