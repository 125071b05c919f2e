// Desktop launcher of the integration suite: downloads VS Code with @vscode/test-electron and runs
// out/test/integration/index.js in it against a copy of test/fixtures/multi.code-workspace, with the stand-in for the
// GitHub Pull Requests extension (test/fixtures/pr-extension-stub) loaded next to ours, as the offline runner does.
// Needs internet (it is not part of the offline test command; there, use scripts/runVsCodeTests.mjs).
// Usage: npm run build && npm run compile-tests && node out/test/runTestElectron.js
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  // Compiled to out/test/runTestElectron.js.
  const repoRoot = path.resolve(__dirname, '..', '..');
  const extensionTestsPath = path.join(repoRoot, 'out', 'test', 'integration', 'index.js');

  // The suite may write files: open a fresh copy of the fixtures, like the offline runner does.
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-electron-'));
  const fixturesCopy = path.join(tmpRoot, 'fixtures');
  fs.cpSync(path.join(repoRoot, 'test', 'fixtures'), fixturesCopy, { recursive: true });
  const workspaceFile = path.join(fixturesCopy, 'multi.code-workspace');
  // Ours and the stand-in (from the copy: not a folder inside ours); --disable-extensions leaves both loaded.
  const extensionDevelopmentPath = [repoRoot, path.join(fixturesCopy, 'pr-extension-stub')];

  try {
    const exitCode = await runTests({
      extensionDevelopmentPath,
      extensionTestsPath,
      launchArgs: [
        workspaceFile,
        '--disable-extensions',
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        '--user-data-dir',
        path.join(tmpRoot, 'user-data'),
      ],
    });
    process.exitCode = exitCode;
  } finally {
    fs.rmSync(tmpRoot, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error('Failed to run the integration tests:', error);
  process.exit(1);
});
