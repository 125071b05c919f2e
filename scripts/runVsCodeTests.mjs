// Runs a test suite against a real VS Code, offline. Usage: node scripts/runVsCodeTests.mjs <integration|e2e>
//
// CODESPACE_TEST_VSCODE picks the VS Code: `1.100` (code-server 4.100.3, the oldest engines.vscode accepts),
// `1.139` (code-server 4.139.1, the newest on npm), or `all` (each in turn, one after the other). Unset: all.
//
// integration: code-server + headless Chromium open a fresh copy of test/fixtures/multi.code-workspace with
//   this repo as extensionDevelopmentPath (test/fixtures/pr-extension-stub, a stand-in for the GitHub Pull Requests
//   extension, installed next to it) and out/test/integration/index.js as extensionTestsPath; the suite
//   runs inside the extension host and its output is forwarded here. The first folder copy holds
//   `.codespace-test.json` = { "runner": "code-server", "screenshotDir": "<abs test-results>" }.
//   A screenshot of the workbench goes to test-results/integration-workbench.png (also on failure).
// e2e: the tests run here in Node (mocha over out/test/e2e/**/*.test.js); each one starts its own workbench
//   through test/e2e/host.ts (startWorkbench).
//
// Needs `npm run build` (dist/extension.js) and `npm run compile-tests` first; package.json's
// test:integration / test:e2e scripts do both.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostPaths, selectHosts } from './installVsCodeHost.mjs';
import {
  REPO_ROOT,
  RESULTS_DIR,
  copyFixtures,
  currentHostKey,
  ensureVsCodeHost,
  launchBrowser,
  makeTmpRoot,
  openWorkbench,
  PR_EXTENSION_STUB,
  removeDir,
  startCodeServer,
  workbenchUrl,
} from './vscodeHost.mjs';

// A bound for a suite that hangs, not a budget: the in-editor suite takes 8 to 10 minutes beside an e2e suite on
// two cores, and went past 10 once (a clean clone's run, the e2e lane starting windows ahead).
const SUITE_TIMEOUT_MS = 20 * 60_000;
// Workbench noise without network (marketplace, update checks); hidden unless CODESPACE_TEST_VERBOSE=1.
const NOISE = [/marketplace/i, /gallery/i, /ERR_NAME_NOT_RESOLVED/, /ERR_INTERNET_DISCONNECTED/, /Failed to load resource/, /update.code.visualstudio.com/, /open-vsx/i, /^\[AgentHost\]/, /^\[RemoteAgentHostProtocol\]/, /^\[ChatModelSelection\]/];
const verbose = process.env.CODESPACE_TEST_VERBOSE === '1';

function log(message) {
  console.log(`[runner] ${message}`);
}

/** Copies code-server's own logs (the server, its file watcher, the extension host) next to the results: a failed run keeps them. */
function keepServerLogs(userDataDir, name) {
  const from = path.join(userDataDir, 'logs');
  if (!existsSync(from)) return;
  const to = path.join(RESULTS_DIR, name);
  removeDir(to);
  cpSync(from, to, { recursive: true });
  log(`server logs: ${path.relative(REPO_ROOT, to)}`);
}

async function runIntegration() {
  const started = Date.now();
  log(`VS Code ${hostPaths(currentHostKey()).vscode}`);
  const indexJs = path.join(REPO_ROOT, 'out', 'test', 'integration', 'index.js');
  if (!existsSync(indexJs)) throw new Error(`${path.relative(REPO_ROOT, indexJs)} missing: run npm run compile-tests`);
  const mainJs = path.join(REPO_ROOT, 'dist', 'extension.js');
  if (!existsSync(mainJs)) throw new Error('dist/extension.js missing: run npm run build');
  await ensureVsCodeHost();
  mkdirSync(RESULTS_DIR, { recursive: true });

  const tmpRoot = makeTmpRoot('codespace-integration-');
  const fixtures = copyFixtures({
    workspace: 'multi.code-workspace',
    tmpRoot,
    // CODESPACE_TEST_FILES=steering,panel runs only the test files whose name contains one of the words;
    // CODESPACE_TEST_GREP only the tests whose title matches.
    runnerInfo: {
      runner: 'code-server',
      vscode: hostPaths(currentHostKey()).vscode,
      screenshotDir: RESULTS_DIR,
      ...(process.env.CODESPACE_TEST_FILES ? { files: process.env.CODESPACE_TEST_FILES.split(',') } : {}),
      ...(process.env.CODESPACE_TEST_GREP ? { grep: process.env.CODESPACE_TEST_GREP } : {}),
    },
  });
  log(`workspace copy: ${fixtures.openPath}`);

  let server;
  let browser;
  let page;
  let exitCode = 1;
  try {
    server = await startCodeServer({
      tmpRoot,
      openPath: fixtures.openPath,
      host: currentHostKey(),
      // CODESPACE_TEST_SERVER_LOG=trace: code-server logs at that level (the file watcher's events among them).
      extraArgs: process.env.CODESPACE_TEST_SERVER_LOG ? ['--log', process.env.CODESPACE_TEST_SERVER_LOG] : [],
      // A stand-in for the GitHub Pull Requests extension, installed next to ours (test/fixtures/pr-extension-stub).
      extensionFolders: [PR_EXTENSION_STUB],
      onOutput: (line) => verbose && console.log(`[code-server] ${line}`),
    });
    log(`code-server on ${server.base} (pid ${server.pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    browser = await launchBrowser();
    const url = workbenchUrl({
      base: server.base,
      port: server.port,
      openPath: fixtures.openPath,
      kind: fixtures.kind,
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath: indexJs,
    });

    let settle;
    const exited = new Promise((resolve) => (settle = resolve));
    const opened = Date.now();
    page = await openWorkbench(browser, {
      url,
      onLog: (type, message) => {
        if (!verbose && (type.startsWith('console.') || NOISE.some((re) => re.test(message)))) return;
        const text = message.replace(/\s+$/, '');
        if (type === 'error' || type === 'warn') console.error(text);
        else console.log(text);
      },
      onExit: (code, logs) => {
        if (logs) {
          const dir = path.join(RESULTS_DIR, 'integration-logs');
          removeDir(dir);
          for (const entry of logs) {
            const file = path.join(dir, entry.relativePath);
            mkdirSync(path.dirname(file), { recursive: true });
            writeFileSync(file, entry.contents);
          }
        }
        settle(code);
      },
    });
    const timer = new Promise((resolve) => setTimeout(() => resolve('timeout'), SUITE_TIMEOUT_MS).unref());
    const result = await Promise.race([exited, timer]);
    if (result === 'timeout') {
      console.error(`[runner] the suite did not finish within ${SUITE_TIMEOUT_MS / 60_000} minutes`);
      exitCode = 1;
    } else {
      exitCode = result;
      log(`suite exited with code ${exitCode} after ${((Date.now() - opened) / 1000).toFixed(1)} s in the workbench`);
    }
  } finally {
    if (page) {
      const shot = path.join(RESULTS_DIR, 'integration-workbench.png');
      try {
        await page.screenshot({ path: shot, timeout: 15_000 });
        log(`screenshot: ${path.relative(REPO_ROOT, shot)}`);
      } catch (error) {
        console.error(`[runner] screenshot failed: ${error instanceof Error ? error.message : error}`);
      }
    }
    await browser?.close().catch(() => undefined);
    await server?.stop();
    if (exitCode !== 0 && server) keepServerLogs(server.userDataDir, 'integration-server-logs');
    removeDir(tmpRoot);
    log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return exitCode;
}

async function runE2e() {
  await ensureVsCodeHost();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const mocha = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
  // --no-config: the repo's .mocharc.json is the unit suite's. --exit: a test that failed half-way may leave a handle
  // open (a browser, a client); the run still ends, and test/e2e/host.ts kills any code-server left on exit.
  // CODESPACE_TEST_FILES=restricted,panel: only the e2e files whose name contains one of the words.
  const words = process.env.CODESPACE_TEST_FILES?.split(',').filter(Boolean);
  const dir = path.join(REPO_ROOT, 'out', 'test', 'e2e');
  const files = words
    ? readdirSync(dir).filter((f) => f.endsWith('.test.js') && words.some((w) => f.includes(w))).map((f) => path.join('out', 'test', 'e2e', f))
    : ['out/test/e2e/**/*.test.js'];
  if (files.length === 0) throw new Error(`no e2e test file matches CODESPACE_TEST_FILES=${process.env.CODESPACE_TEST_FILES}`);
  // CODESPACE_TEST_GREP: only the tests whose title matches (the files' before/after hooks still run).
  const grep = process.env.CODESPACE_TEST_GREP ? ['--grep', process.env.CODESPACE_TEST_GREP] : [];
  const args = [mocha, '--no-config', '--exit', '--reporter', 'spec', '--timeout', String(SUITE_TIMEOUT_MS), '--enable-source-maps', ...grep, ...files];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: 'inherit' });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs the suite once per selected VS Code, each in its own process with CODESPACE_TEST_VSCODE set to it. */
async function runEachHost(suite, keys) {
  const results = [];
  for (const key of keys) {
    const p = hostPaths(key);
    log(`=== ${suite} on VS Code ${p.vscode} (code-server ${p.codeServer}) ===`);
    const started = Date.now();
    const code = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), suite], {
        cwd: REPO_ROOT,
        stdio: 'inherit',
        env: { ...process.env, CODESPACE_TEST_VSCODE: key },
      });
      child.on('error', reject);
      child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
    results.push({ key, vscode: p.vscode, code, seconds: (Date.now() - started) / 1000 });
  }
  for (const r of results) log(`${suite} on VS Code ${r.vscode}: ${r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`} in ${r.seconds.toFixed(0)} s`);
  return results.find((r) => r.code !== 0)?.code ?? 0;
}

const suite = process.argv[2];
const runners = { integration: runIntegration, e2e: runE2e };
if (!(suite in runners)) {
  console.error('usage: node scripts/runVsCodeTests.mjs <integration|e2e>');
  process.exit(2);
}
let hosts;
try {
  hosts = selectHosts();
} catch (error) {
  console.error(`[runner] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
(hosts.length > 1 ? runEachHost(suite, hosts) : runners[suite]()).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[runner] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
