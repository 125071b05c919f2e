// End-to-end host for tests that run in Node (mocha, started by `node scripts/runVsCodeTests.mjs e2e`):
// starts code-server + headless Chromium on a fresh copy of a fixture workspace, with this repo as
// extensionDevelopmentPath and no extensionTestsPath, so the extension activates and keeps running while the
// test drives the page (Playwright) and talks to the extension from outside (for example a real MCP client).
//
// The extension's discovery information is expected in a file: read it with readWorkspaceFile / readUserFile
// or waitForFile; the extension's own log channel is found with readExtensionLog.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { discoveryDirs, readAllRecords } from '../../src/features/connect/node/discoveryFiles';

/** Repo root: this file compiles to out/test/e2e/host.js. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results');
/** The extension's id (publisher.name from package.json). */
export const EXTENSION_ID = 'codespace.codespace-vscode';

export interface StartWorkbenchOptions {
  /**
   * What to open, relative to test/fixtures: a folder (default `workspace`) or a `.code-workspace` file
   * (`multi.code-workspace`). The whole of test/fixtures is copied to a fresh temp dir first.
   */
  readonly workspace?: string;
  /** Extra code-server arguments (for example `--disable-workspace-trust` is already set). */
  readonly codeServerArgs?: readonly string[];
  /** Keep workspace trust on: the fixture folder then opens in Restricted Mode (default: trust disabled). */
  readonly workspaceTrust?: boolean;
  /** Print workbench log lines and code-server output to stdout (also when CODESPACE_TEST_VERBOSE=1). */
  readonly verbose?: boolean;
  /** How long to wait for the workbench to appear (ms, default 120 s). */
  readonly readyTimeoutMs?: number;
  /**
   * User settings, written to `<user-data-dir>/User/settings.json` before code-server starts: the way to set
   * application-scoped settings such as `codespace.approvals.patches`, which VS Code refuses in workspace settings.
   */
  readonly userSettings?: Record<string, unknown>;
  /**
   * `.vsix` files installed into the fresh extensions dir before code-server starts, with the window opened
   * WITHOUT extensionDevelopmentPath: the extension runs as a user installed it (test/e2e/vsix.test.ts).
   */
  readonly installVsix?: readonly string[];
}

export interface Workbench {
  /** The window's page (another one after reopen()). */
  readonly page: Page;
  readonly browser: Browser;
  /** Absolute path of the first workspace folder (the copy; tests may write there). */
  readonly workspaceDir: string;
  /** Absolute paths of all workspace folder copies (one for a folder, several for a .code-workspace). */
  readonly workspaceRoots: readonly string[];
  /** The opened folder or .code-workspace file (copy). */
  readonly openPath: string;
  /** The workbench URL the page opened. */
  readonly url: string;
  /** How long a navigation of a workbench page may take (scripts/vscodeHost.mjs NAVIGATION_TIMEOUT_MS): for pages a test opens itself. */
  readonly navigationTimeoutMs: number;
  /** code-server's port on 127.0.0.1. */
  readonly port: number;
  /** code-server's --user-data-dir (logs, User/globalStorage, ...). */
  readonly userDataDir: string;
  /** code-server's --extensions-dir (where installVsix put the extensions). */
  readonly extensionsDir: string;
  /** Workbench log lines and page console messages seen so far, as `type: message`. */
  readonly logs: readonly string[];
  /** Reads a file of the first workspace folder copy (relative path); undefined when absent. */
  readWorkspaceFile(relativePath: string): string | undefined;
  /**
   * Reads a file under the user-data-dir; undefined when absent. The extension's `context.globalStorageUri`
   * is `<user-data-dir>/User/globalStorage/codespace.codespace-vscode` (a file: URI in this host).
   */
  readUserFile(relativePath: string): string | undefined;
  /**
   * Concatenated text of the log files under `<user-data-dir>/logs` whose file name contains `nameContains`
   * (default `CodeSpace`: a `createOutputChannel('CodeSpace', { log: true })` channel lands in
   * `logs/<session>/exthost1/codespace.codespace-vscode/CodeSpace.log`; `remoteexthost` is the host's own log).
   */
  readExtensionLog(nameContains?: string): string;
  /**
   * Waits until the extension's log has a line matching `re` and returns the log. VS Code writes the log file a few
   * seconds after the lines are logged (about 5 s in code-server 4.139), so a test asserting on a line waits for it.
   */
  waitForExtensionLog(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Polls until `file` (absolute) exists and is non-empty; returns its text. */
  waitForFile(file: string, timeoutMs?: number): Promise<string>;
  /**
   * Waits until the extension is active: its endpoint listens (the window's discovery record is there, or its log
   * says `[activate] ready`), or, when neither shows, the extension host has started activating it
   * (remoteexthost.log says `_doActivateExtension <id>`) and no activation failure was logged during the following
   * `settleMs` (default 5 s). Throws with the logged error when activation failed.
   */
  waitForActivation(timeoutMs?: number, settleMs?: number): Promise<void>;
  /**
   * Runs a command through the command palette by its label (e.g. `CodeSpace: Show Log`). Retries while the
   * palette does not list it yet (contributions register after the workbench appears).
   */
  runCommand(label: string, timeoutMs?: number): Promise<void>;
  /**
   * In a window opened with workspace trust on, answers VS Code's trust prompt with "No" when it asks: 1.100 asks in
   * a dialog at startup, 1.139 opens straight into Restricted Mode. Returns which happened ('declined' or
   * 'restricted'); throws when neither shows within `timeoutMs`.
   */
  declineTrustPrompt(timeoutMs?: number): Promise<'declined' | 'restricted'>;
  /**
   * Kills the page's renderer (the server hears nothing, as when a browser tab crashes or the machine sleeps) and
   * opens the same window again in a new page of the same browser profile; `page` and every helper use the new one.
   */
  reopen(): Promise<void>;
  /**
   * Closes the window's page the way a developer closes its tab (unload handlers run, so the workbench tells the
   * server it leaves); `page` is closed until openPage().
   */
  closePage(): Promise<void>;
  /** Opens the window again in a new page of the same browser context (after closePage()). */
  openPage(): Promise<void>;
  /** Saves a screenshot of the page to test-results/<name>.png and returns its path. */
  screenshot(name: string): Promise<string>;
  /** Closes the browser, stops code-server (only the processes started here) and deletes the temp dir. */
  stop(): Promise<void>;
}

/** The subset of scripts/vscodeHost.mjs used here. */
interface VsCodeHostModule {
  ensureVsCodeHost(): Promise<void>;
  makeTmpRoot(prefix?: string): string;
  removeDir(dir: string): void;
  copyFixtures(options: { workspace?: string; tmpRoot: string; runnerInfo?: Record<string, unknown> }): {
    openPath: string;
    kind: 'folder' | 'workspace';
    roots: string[];
  };
  startCodeServer(options: {
    tmpRoot: string;
    openPath?: string;
    onOutput?: (line: string) => void;
    extraArgs?: readonly string[];
    workspaceTrust?: boolean;
    userSettings?: Record<string, unknown>;
    installExtensions?: readonly string[];
  }): Promise<{ port: number; base: string; userDataDir: string; extensionsDir: string; pid: number; stop(): Promise<void> }>;
  launchBrowser(): Promise<Browser>;
  workbenchUrl(options: {
    base: string;
    port: number;
    openPath: string;
    kind: 'folder' | 'workspace';
    extensionDevelopmentPath?: string;
    extensionTestsPath?: string;
  }): string;
  openWorkbench(browser: Browser, options: { url: string; onLog?: (type: string, message: string) => void; context?: BrowserContext }): Promise<Page>;
  waitForWorkbench(page: Page, timeout?: number): Promise<void>;
  readonly NAVIGATION_TIMEOUT_MS: number;
}

let hostModule: Promise<VsCodeHostModule> | undefined;
function loadHostModule(): Promise<VsCodeHostModule> {
  // A real ESM import (TypeScript keeps import() as is for module Node16), resolved at run time.
  const href = pathToFileURL(path.join(REPO_ROOT, 'scripts', 'vscodeHost.mjs')).href;
  hostModule ??= import(href) as Promise<VsCodeHostModule>;
  return hostModule;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every `everyMs` until it returns a value; throws `${what} within <timeoutMs> ms` past the deadline. */
async function pollFor<T>(what: string, probe: () => T | undefined, timeoutMs: number, everyMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full));
    else if (entry.isFile()) out.push(full);
  }
  return out.sort();
}

/** Text of the log files under `<userDataDir>/logs` whose file name contains `nameContains`. */
function readLogs(userDataDir: string, nameContains: string): string {
  return listFiles(path.join(userDataDir, 'logs'))
    .filter((file) => path.basename(file).includes(nameContains))
    .map((file) => readIfExists(file) ?? '')
    .join('\n');
}

/**
 * The process groups of the code-servers started here and not stopped yet. Whatever a failing test left running is
 * killed when this process exits (the e2e runner ends mocha with --exit), so a failure never leaves an editor behind.
 */
const liveServers = new Set<number>();
process.on('exit', () => {
  for (const pid of liveServers) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/**
 * The options most files start their window with. One window with them is started ahead, in the background, while
 * other files run, and handed to the next file that asks for them under the usual environment (the one this run
 * began with: a file that changes it first, as the process-host and connect tests do, starts its own and leaves the
 * window started ahead to the next). Each file still gets a window of its own, never used before: only its start
 * (about 20 s: code-server, the browser, the workbench, the extension's activation) is taken off the file's time.
 * CODESPACE_E2E_AHEAD=0 starts every window when asked.
 */
const AHEAD_OPTIONS = JSON.stringify({ workspace: 'workspace' });
const environment = (): string => JSON.stringify(Object.entries(process.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const USUAL_ENVIRONMENT = environment();
let ahead: Promise<Workbench | undefined> | undefined;

function startAhead(): Promise<Workbench | undefined> {
  return startWindow(JSON.parse(AHEAD_OPTIONS) as StartWorkbenchOptions, 'started ahead')
    .then(async (wb) => {
      try {
        await wb.waitForActivation();
        return wb;
      } catch (error) {
        console.log(`      [e2e] the window started ahead did not activate: ${String(error)}`);
        await wb.stop();
        return undefined;
      }
    })
    .catch((error: unknown) => {
      console.log(`      [e2e] the window started ahead did not start: ${String(error)}`);
      return undefined;
    });
}

// The window started ahead that no file took is stopped when the run ends (mocha's root hook).
if (typeof after === 'function') {
  after(async () => {
    const left = ahead;
    ahead = undefined;
    await (await left)?.stop();
  });
}

/** Starts a VS Code workbench with the extension under development loaded. Call stop() in an after hook. */
export async function startWorkbench(options: StartWorkbenchOptions = {}): Promise<Workbench> {
  const usual = process.env.CODESPACE_E2E_AHEAD !== '0' && JSON.stringify(options) === AHEAD_OPTIONS && environment() === USUAL_ENVIRONMENT;
  if (!usual) return startWindow(options);
  const taken = ahead;
  ahead = startAhead(); // for the next file that asks
  const wb = taken ? await taken : undefined;
  if (wb) console.log('      [e2e] took the window started ahead');
  return wb ?? startWindow(options);
}

async function startWindow(options: StartWorkbenchOptions, label?: string): Promise<Workbench> {
  const host = await loadHostModule();
  await host.ensureVsCodeHost();
  const verbose = options.verbose ?? process.env.CODESPACE_TEST_VERBOSE === '1';
  const tmpRoot = host.makeTmpRoot('codespace-e2e-');
  const logs: string[] = [];
  // Where a file's time goes (docs/TESTING.md, "How npm test spends its time"): one line when the workbench is up,
  // one when it stops.
  const t0 = Date.now();
  const phases: string[] = [];
  const phase = (name: string, since: number): number => {
    const now = Date.now();
    phases.push(`${name} ${((now - since) / 1000).toFixed(1)} s`);
    return now;
  };
  let server: Awaited<ReturnType<VsCodeHostModule['startCodeServer']>> | undefined;
  let browser: Browser | undefined;
  /** Stops everything started; says how long the browser and code-server each took to go. */
  const cleanup = async (): Promise<string> => {
    const c0 = Date.now();
    await browser?.close().catch(() => undefined);
    const c1 = Date.now();
    await server?.stop();
    const c2 = Date.now();
    if (server) liveServers.delete(server.pid);
    host.removeDir(tmpRoot);
    return `browser ${((c1 - c0) / 1000).toFixed(1)} s, code-server ${((c2 - c1) / 1000).toFixed(1)} s`;
  };
  try {
    const fixtures = host.copyFixtures({
      workspace: options.workspace ?? 'workspace',
      tmpRoot,
      runnerInfo: { runner: 'code-server', screenshotDir: RESULTS_DIR },
    });
    server = await host.startCodeServer({
      tmpRoot,
      openPath: fixtures.openPath,
      extraArgs: options.codeServerArgs ?? [],
      workspaceTrust: options.workspaceTrust ?? false,
      ...(options.userSettings ? { userSettings: options.userSettings } : {}),
      ...(options.installVsix ? { installExtensions: options.installVsix } : {}),
      onOutput: (line) => verbose && console.log(`[code-server] ${line}`),
    });
    liveServers.add(server.pid);
    let t = phase('code-server', t0);
    browser = await host.launchBrowser();
    t = phase('browser', t);
    const url = host.workbenchUrl({
      base: server.base,
      port: server.port,
      openPath: fixtures.openPath,
      kind: fixtures.kind,
      ...(options.installVsix ? {} : { extensionDevelopmentPath: REPO_ROOT }),
    });
    const onLog = (type: string, message: string): void => {
      logs.push(`${type}: ${message}`);
      if (verbose) console.log(`[workbench ${type}] ${message}`);
    };
    let page = await host.openWorkbench(browser, { url, onLog });
    await host.waitForWorkbench(page, options.readyTimeoutMs ?? 120_000);
    phase('workbench', t);
    console.log(`      [e2e] VS Code up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${phases.join(', ')})${label ? `, ${label}` : ''}`);

    const startedServer = server;
    const startedBrowser = browser;
    const workspaceDir = fixtures.roots[0] ?? fixtures.openPath;
    const userDataDir = startedServer.userDataDir;
    let stopped = false;
    // The discovery record is written as the endpoint starts listening; the extension's log file is written
    // seconds after its lines (about 5 s in code-server 4.139), so it comes second.
    const listening = (): boolean =>
      readAllRecords(discoveryDirs()).some((f) => fixtures.roots.some((root) => f.record.workspaceFolders.includes(root))) ||
      readLogs(userDataDir, 'CodeSpace').includes('[activate] ready in ');
    // untilReady=false: the whole settle period passes even when the extension said it is ready (the trust prompt
    // looks once more for a dialog that came late).
    const waitForActivation = async (timeoutMs = 120_000, settleMs = 5_000, untilReady = true): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      let startedAt: number | undefined;
      for (;;) {
        const text = readLogs(userDataDir, 'exthost');
        const failure = text
          .split('\n')
          .findIndex((line) => line.includes(`Activating extension '${EXTENSION_ID}' failed`) || line.includes(`Activating extension ${EXTENSION_ID} failed`));
        if (failure >= 0) {
          const lines = text.split('\n').slice(failure, failure + 6).join('\n');
          throw new Error(`${EXTENSION_ID} failed to activate:\n${lines}`);
        }
        if (untilReady && listening()) return;
        if (startedAt === undefined && text.includes(`_doActivateExtension ${EXTENSION_ID}`)) startedAt = Date.now();
        if (startedAt !== undefined && Date.now() - startedAt >= settleMs) return;
        if (Date.now() > deadline) throw new Error(`${EXTENSION_ID} did not activate within ${timeoutMs} ms`);
        await sleep(250);
      }
    };
    return {
      get page() {
        return page;
      },
      reopen: async () => {
        const context = page.context();
        // The page's renderer is killed: no unload handler runs, so the workbench cannot tell the server it leaves
        // (closing the page would run them, and the server would end the extension host at once).
        const cdp = await startedBrowser.newBrowserCDPSession();
        const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
        await cdp.detach();
        const crashed = new Promise((resolve) => page.once('crash', resolve));
        for (const p of processInfo) {
          if (p.type !== 'renderer') continue;
          try {
            process.kill(p.id, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        await Promise.race([crashed, sleep(10_000)]);
        await page.close().catch(() => undefined);
        page = await host.openWorkbench(startedBrowser, { url, onLog, context });
        await host.waitForWorkbench(page, options.readyTimeoutMs ?? 120_000);
      },
      closePage: async () => {
        await page.close({ runBeforeUnload: false });
      },
      openPage: async () => {
        page = await host.openWorkbench(startedBrowser, { url, onLog, context: page.context() });
        await host.waitForWorkbench(page, options.readyTimeoutMs ?? 120_000);
      },
      browser: startedBrowser,
      workspaceDir,
      workspaceRoots: fixtures.roots,
      openPath: fixtures.openPath,
      url,
      navigationTimeoutMs: host.NAVIGATION_TIMEOUT_MS,
      port: startedServer.port,
      userDataDir,
      extensionsDir: startedServer.extensionsDir,
      logs,
      readWorkspaceFile: (relativePath) => readIfExists(path.join(workspaceDir, relativePath)),
      readUserFile: (relativePath) => readIfExists(path.join(userDataDir, relativePath)),
      readExtensionLog: (nameContains = 'CodeSpace') => readLogs(userDataDir, nameContains),
      waitForExtensionLog: (re, timeoutMs = 90_000) =>
        pollFor(
          `no line of the extension's log matches ${re}`,
          () => {
            const text = readLogs(userDataDir, 'CodeSpace');
            return re.test(text) ? text : undefined;
          },
          timeoutMs,
          250,
        ),
      waitForFile: (file, timeoutMs = 60_000) => pollFor(`${file} did not appear`, () => readIfExists(file) || undefined, timeoutMs, 200),
      waitForActivation,
      runCommand: async (label, timeoutMs = 60_000) => {
        const deadline = Date.now() + timeoutMs;
        const input = page.locator('.quick-input-widget input');
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
        for (;;) {
          await page.keyboard.press('F1');
          try {
            // An editor that opens and takes focus just now (a review's diff still loading) closes the palette
            // under us: then the input or the row goes away while it is used, and the palette is opened again. Every
            // step has a short timeout: a click left to Playwright's own would wait 30 s for a row that is gone.
            await input.waitFor({ state: 'visible', timeout: 10_000 });
            await input.fill(`>${label}`, { timeout: 5_000 });
            await row.waitFor({ state: 'visible', timeout: 3_000 });
            await row.click({ timeout: 5_000 });
            return;
          } catch (error) {
            await page.keyboard.press('Escape');
            if (Date.now() > deadline) throw new Error(`command palette never listed "${label}": ${String(error)}`);
            await sleep(500);
          }
        }
      },
      declineTrustPrompt: async (timeoutMs = 120_000) => {
        const no = page.getByRole('button', { name: "No, I don't trust the authors" });
        const restricted = page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first();
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          // The dialog first: while it is open the status bar may already say Restricted Mode.
          if (await no.isVisible().catch(() => false)) {
            await no.click();
            return 'declined';
          }
          if (await restricted.isVisible().catch(() => false)) {
            // No dialog now; one that came late would be modal and visible, so look once more after activation.
            await waitForActivation(120_000, 5_000, false);
            if (await no.isVisible().catch(() => false)) {
              await no.click();
              return 'declined';
            }
            return 'restricted';
          }
          if (Date.now() > deadline) throw new Error(`neither the workspace trust dialog nor Restricted Mode showed within ${timeoutMs} ms`);
          await sleep(250);
        }
      },
      screenshot: async (name) => {
        fs.mkdirSync(RESULTS_DIR, { recursive: true });
        const file = path.join(RESULTS_DIR, `${name}.png`);
        await page.screenshot({ path: file });
        return file;
      },
      stop: async () => {
        if (stopped) return;
        stopped = true;
        const took = await cleanup();
        console.log(`      [e2e] VS Code stopped ${((Date.now() - t0) / 1000).toFixed(1)} s after it started (${took})`);
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
