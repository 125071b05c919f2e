// Shared helpers to run a real VS Code offline: code-server (VS Code 1.100.3 or 1.139.1, see HOSTS in
// installVsCodeHost.mjs; CODESPACE_TEST_VSCODE picks one) on 127.0.0.1 plus Debian's headless Chromium driven by
// playwright-core. Used by scripts/runVsCodeTests.mjs (integration suite) and by
// test/e2e/host.ts (end-to-end tests). Facts behind every choice: docs/TESTING.md.
//
// Everything started here is stopped by handle: the code-server process group we spawned (detached, so its
// pid is the group id) and the Playwright browser we launched. Nothing else is touched.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { format } from 'node:util';
import { REPO_ROOT, codeServerCommand, currentHostKey, ensureVsCodeHost, hostPaths } from './installVsCodeHost.mjs';
import { findOnPath } from './prerequisites.mjs';

export { REPO_ROOT, currentHostKey, ensureVsCodeHost, hostPaths };
export const FIXTURES_DIR = path.join(REPO_ROOT, 'test', 'fixtures');
/** A stand-in for the GitHub Pull Requests extension, loaded next to ours in the in-editor suite. */
export const PR_EXTENSION_STUB = path.join(FIXTURES_DIR, 'pr-extension-stub');
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
/** Name of the file the runner writes at the root of the first workspace folder copy. */
export const RUNNER_INFO_FILE = '.codespace-test.json';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How long a workbench page's navigation (goto, reload) may take before its load event: Playwright's default is 30 s,
 * which a loaded machine exceeds (the workbench loads a few MB of scripts; seen with two suites and other builds on 2
 * cores). The workbench's own readiness is waited for separately (waitForWorkbench).
 */
export const NAVIGATION_TIMEOUT_MS = 120_000;

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/**
 * Copies test/fixtures into a fresh temp dir (tests may write files) and resolves what to open.
 * @param {{ workspace?: string, tmpRoot: string, runnerInfo?: Record<string, unknown> }} options
 *   workspace: a folder or `.code-workspace` file relative to test/fixtures (default `workspace`).
 * @returns {{ openPath: string, kind: 'folder' | 'workspace', roots: string[], fixturesCopy: string }}
 */
export function copyFixtures({ workspace = 'workspace', tmpRoot, runnerInfo }) {
  const fixturesCopy = path.join(tmpRoot, 'fixtures');
  cpSync(FIXTURES_DIR, fixturesCopy, { recursive: true });
  const openPath = path.join(fixturesCopy, workspace);
  if (!existsSync(openPath)) throw new Error(`no fixture ${workspace} in ${FIXTURES_DIR}`);
  let roots;
  let kind;
  if (workspace.endsWith('.code-workspace')) {
    kind = 'workspace';
    const json = JSON.parse(stripJsonComments(readFileSync(openPath, 'utf8')));
    roots = (json.folders ?? []).map((f) => path.resolve(path.dirname(openPath), f.path));
  } else {
    kind = 'folder';
    roots = [openPath];
  }
  if (runnerInfo && roots[0]) {
    writeFileSync(path.join(roots[0], RUNNER_INFO_FILE), JSON.stringify(runnerInfo, null, 2) + '\n');
  }
  return { openPath, kind, roots, fixturesCopy };
}

function stripJsonComments(text) {
  return text.replace(/^\s*\/\/.*$/gm, '');
}

/**
 * Starts code-server on a free 127.0.0.1 port and waits until it answers /healthz.
 * @param {{ tmpRoot: string, openPath?: string, onOutput?: (line: string) => void, extraArgs?: string[], workspaceTrust?: boolean,
 *   userSettings?: Record<string, unknown> }} options
 *   workspaceTrust: keep VS Code's workspace trust on, so an unknown folder opens in Restricted Mode (default off).
 *   userSettings: written to `<user-data-dir>/User/settings.json` before code-server starts (the user settings
 *   the workbench and the extension host read from the start; a file written later may not be picked up).
 *   installExtensions: `.vsix` files installed into the fresh extensions dir first (`code-server --install-extension`),
 *   as a user installs them: the only way an extension loads in a window opened without extensionDevelopmentPath.
 *   extensionFolders: unpacked extensions copied into the fresh extensions dir (as `<publisher>.<name>-<version>`),
 *   which code-server finds there on its first start, next to the one under development (code-server keeps only one
 *   extensionDevelopmentPath of the workbench URL).
 */
export async function startCodeServer({ tmpRoot, openPath, onOutput, extraArgs = [], workspaceTrust = false, userSettings, installExtensions = [], extensionFolders = [], host = currentHostKey() }) {
  const port = await findFreePort();
  const userDataDir = path.join(tmpRoot, 'user-data');
  const extensionsDir = path.join(tmpRoot, 'extensions');
  mkdirSync(userDataDir, { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  if (userSettings) {
    mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
    writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(userSettings, null, 2) + '\n');
  }
  for (const vsix of installExtensions) installExtension({ vsix, userDataDir, extensionsDir, onOutput, host });
  for (const folder of extensionFolders) {
    const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'));
    cpSync(folder, path.join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`.toLowerCase()), { recursive: true });
  }
  const args = [
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--user-data-dir', userDataDir,
    '--extensions-dir', extensionsDir,
    ...extraArgs,
    ...(openPath ? [openPath] : []),
  ];
  const [command, ...leading] = codeServerCommand(host);
  const child = spawn(command, [...leading, ...args], {
    cwd: tmpRoot,
    detached: true, // own process group: stop() kills code-server and the hosts it forked, nothing else
    stdio: ['ignore', 'pipe', 'pipe'],
    env: codeServerEnv(process.env, host),
  });
  const forward = (chunk) => {
    for (const line of String(chunk).split(/\r?\n/)) if (line.trim()) onOutput?.(line);
  };
  child.stdout.on('data', forward);
  child.stderr.on('data', forward);
  let exited = false;
  child.on('exit', () => (exited = true));

  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`code-server exited before it was ready (exit code ${child.exitCode})`);
    if (await isHealthy(`${base}/healthz`)) break;
    if (Date.now() > deadline) {
      await killGroup(child);
      throw new Error('code-server did not answer /healthz within 60 s');
    }
    await sleep(250);
  }
  return {
    port,
    base,
    userDataDir,
    extensionsDir,
    pid: child.pid,
    stop: () => killGroup(child),
  };
}

/**
 * The environment code-server starts with. VSCODE_OPTIONS=enable-smoke-test-driver: a release build of VS Code
 * 1.139 ignores extensionDevelopmentPath and extensionTestsPath in the workbench URL's payload unless its smoke-test
 * driver is enabled. 1.100 does not need it, and gets nothing it does not need.
 */
export function codeServerEnv(base = process.env, host = currentHostKey()) {
  const env = { ...base, VSCODE_PROXY_URI: '' };
  if (host === '1.100') delete env.VSCODE_OPTIONS;
  else env.VSCODE_OPTIONS = 'enable-smoke-test-driver';
  return env;
}

/** `code-server --install-extension <vsix>` into `extensionsDir`; throws with its output when it fails. */
export function installExtension({ vsix, userDataDir, extensionsDir, onOutput, host = currentHostKey() }) {
  const [command, ...leading] = codeServerCommand(host);
  const r = spawnSync(command, [...leading, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsix], {
    encoding: 'utf8',
    timeout: 120_000,
    env: codeServerEnv(process.env, host),
  });
  for (const line of `${r.stdout ?? ''}\n${r.stderr ?? ''}`.split(/\r?\n/)) if (line.trim()) onOutput?.(line);
  if (r.status !== 0) throw new Error(`code-server --install-extension ${vsix} failed (exit ${r.status ?? r.signal}): ${r.stdout}${r.stderr}`);
}

/** True when GET url answers 200 (code-server's /healthz). */
function isHealthy(url) {
  return new Promise((resolve) => {
    const request = http.get(url, { timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** Kills the process group we spawned (SIGTERM, then SIGKILL after 5 s). */
async function killGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timedOut = await Promise.race([exited.then(() => false), sleep(5000).then(() => true)]);
  if (timedOut) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  } else {
    // code-server exited; make sure no forked host of that group lingers
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // group empty
    }
  }
}

/** Launches Debian's Chromium headless through playwright-core. */
export async function launchBrowser() {
  const { chromium } = await import('playwright-core');
  const executablePath = findOnPath('chromium');
  if (!executablePath) throw new Error('chromium is not on PATH (Debian package: chromium)');
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
}

/**
 * The workbench URL for a folder or a `.code-workspace`, with the extension-development payload (none when
 * extensionDevelopmentPath is not given: the window then runs only installed extensions).
 * @param {{ base: string, port: number, openPath: string, kind: 'folder' | 'workspace',
 *   extensionDevelopmentPath: string, extensionTestsPath?: string }} options
 */
export function workbenchUrl({ base, port, openPath, kind, extensionDevelopmentPath, extensionTestsPath }) {
  const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
  const payload = extensionDevelopmentPath ? [['extensionDevelopmentPath', remote(extensionDevelopmentPath)]] : [];
  if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
  payload.push(['skipWelcome', 'true']);
  const url = new URL(base + '/');
  url.searchParams.set(kind === 'workspace' ? 'workspace' : 'folder', openPath);
  url.searchParams.set('payload', JSON.stringify(payload));
  return url.toString();
}

/**
 * Opens the workbench in a new page, whose navigations (this one, and every later reload) may take
 * NAVIGATION_TIMEOUT_MS. `onLog` receives the workbench's log lines (codeAutomationLog) and the
 * page's console; `onExit` the suite's exit code and logs when extensionTestsPath was given.
 * @param {import('playwright-core').Browser} browser
 * @param {{ url: string, onLog?: (type: string, message: string) => void,
 *   onExit?: (code: number, logs: Array<{ relativePath: string, contents: string }> | undefined) => void }} options
 */
export async function openWorkbench(browser, { url, onLog, onExit, context }) {
  // A fresh browser context is a fresh browser profile; pass `context` to open the window in an existing one (its
  // storage: a web workbench keeps the extensions' global state and secrets in the browser).
  const page = await (context ?? (await browser.newContext({ viewport: { width: 1400, height: 900 } }))).newPage();
  // The workbench passes console-style arguments (a printf format and its values, e.g. mocha's reporter).
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    onLog?.(String(type), Array.isArray(args) ? format(...args) : String(args));
  });
  await page.exposeFunction('codeAutomationExit', (code, logs) => {
    onExit?.(Number(code), Array.isArray(logs) ? logs : undefined);
  });
  page.on('console', (message) => onLog?.(`console.${message.type()}`, message.text()));
  page.on('pageerror', (error) => onLog?.('pageerror', String(error)));
  page.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS);
  await page.goto(url);
  return page;
}

/** Waits for the workbench's main container to be visible. */
export async function waitForWorkbench(page, timeout = 120_000) {
  await page.waitForSelector('.monaco-workbench', { state: 'visible', timeout });
}

/** A fresh temp dir for one run. */
export function makeTmpRoot(prefix = 'codespace-vscode-') {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir) {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    console.warn(`[vscode-host] could not remove ${dir}: ${error instanceof Error ? error.message : error}`);
  }
}
