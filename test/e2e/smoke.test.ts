// Smoke test of the end-to-end host: a real workbench opens the fixture workspace with the extension under
// development loaded and activated, and Playwright can drive it.
import * as assert from 'node:assert/strict';
import { startWorkbench } from './index';
import type { Workbench } from './index';

describe('e2e host', function () {
  this.timeout(5 * 60_000);
  let workbench: Workbench | undefined;

  before(async () => {
    workbench = await startWorkbench({ workspace: 'workspace' });
  });

  after(async () => {
    if (workbench) {
      await workbench.screenshot('e2e-smoke-workbench').catch(() => undefined);
      await workbench.stop();
    }
  });

  it('shows the fixture folder in the explorer', async () => {
    const { page } = workbench!;
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'README.md' }).first().waitFor({ timeout: 120_000 });
    assert.match(workbench!.readWorkspaceFile('README.md') ?? '', /Sample workspace/);
    assert.ok(workbench!.readWorkspaceFile('.codespace-test.json'), 'runner info file in the workspace copy');
  });

  it('activates the extension under development', async () => {
    await workbench!.waitForActivation();
  });

  it('runs a command through the command palette', async () => {
    const { page } = workbench!;
    await workbench!.runCommand('File: New Untitled Text File');
    await page.locator('.tabs-container .tab', { hasText: 'Untitled-1' }).first().waitFor({ timeout: 30_000 });
  });
});
