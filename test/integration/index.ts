// Entry point of the suite that runs inside a real VS Code extension host. Both launchers load it as
// `extensionTestsPath` and call run(): scripts/runVsCodeTests.mjs (code-server in headless Chromium, offline)
// and test/runTestElectron.ts (@vscode/test-electron, desktop). Nothing here may depend on which one started it.
//
// Runner information reaches the tests through the workspace, not the environment (the browser-launched
// extension host cannot receive env vars): the offline runner writes `.codespace-test.json` at the root of the
// first workspace folder, e.g. { "runner": "code-server", "screenshotDir": "/abs/test-results" }. Use
// readRunnerInfo() below when a test needs it; under test-electron the file is absent.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';

/** What the launcher tells the in-host tests (see `.codespace-test.json` above). */
export interface RunnerInfo {
  /** 'code-server' for scripts/runVsCodeTests.mjs; absent file (undefined) for @vscode/test-electron. */
  readonly runner: string;
  /** The VS Code version the offline runner started (CODESPACE_TEST_VSCODE picks it), e.g. '1.139.1'. */
  readonly vscode?: string;
  /** Absolute directory where screenshots and other artifacts may be written. */
  readonly screenshotDir?: string;
  /** Run only the test files whose name contains one of these (env CODESPACE_TEST_FILES of the runner). */
  readonly files?: readonly string[];
  /** Only tests whose title matches (CODESPACE_TEST_GREP of the launcher), for running one part of the suite. */
  readonly grep?: string;
}

/** Reads `.codespace-test.json` from the first workspace folder, or undefined when the launcher wrote none. */
export function readRunnerInfo(): RunnerInfo | undefined {
  const first = vscode.workspace.workspaceFolders?.[0];
  if (!first || first.uri.scheme !== 'file') return undefined;
  const file = path.join(first.uri.fsPath, '.codespace-test.json');
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as RunnerInfo;
}

function findTests(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTests(full));
    else if (entry.isFile() && entry.name.endsWith('.test.js')) found.push(full);
  }
  return found.sort();
}

export function run(): Promise<void> {
  // A process warning (a listener leak, a deprecation) is printed with the stack that caused it, so a run's log says
  // where it came from.
  process.on('warning', (warning) => console.error(`[process warning] ${warning.stack ?? String(warning)}`));
  const info = readRunnerInfo();
  const grep = info?.grep;
  const mocha = new Mocha({ ui: 'bdd', timeout: 60000, color: false, reporter: 'spec', ...(grep ? { grep } : {}) });
  const only = info?.files;
  for (const file of findTests(__dirname)) {
    if (only === undefined || only.some((word) => path.basename(file).includes(word))) mocha.addFile(file);
  }
  return new Promise((resolve, reject) => {
    try {
      mocha.run((failures) => {
        if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
        else resolve();
      });
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
