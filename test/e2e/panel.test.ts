// End to end: the CodeSpace panel in a real workbench (code-server + headless Chromium). A real MCP client asks
// for patches of sensitive paths, which wait for approval by default; the test clicks Approve and Deny inside the panel's webview (nested
// iframes, found through page.frames()) and checks what the agent gets back and what is on disk.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Locator } from 'playwright-core';
import type { Workbench } from './index';
import { startWorkbenchWithAgent, stopWorkbenchWithAgent } from './agentWorkbench';
import { call, callError } from './mcpClient';
import { panelFrame as findPanelFrame, sha256, sleep } from './webview';

describe('the CodeSpace panel', function () {
  this.timeout(5 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ wb, client, wsId } = await startWorkbenchWithAgent({ workspace: 'workspace' }, 'e2e-panel'));
    // The default policy (approvals.patches = sensitive) holds patches under .vscode/: the tests patch files there.
    const info = await call<{ execution: { approvals: { patches: string } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.equal(info.execution.approvals.patches, 'sensitive');
  });

  after(() => stopWorkbenchWithAgent(wb, client, 'e2e-panel-final'));

  /** Writes a file and asks for a patch of it; returns the hold's id. */
  async function holdPatch(rel: string, key: string): Promise<{ approvalId: string; before: string; after: string }> {
    const before = `export const value = '${key}';\n`;
    const after = `export const value = '${key} patched';\n`;
    await fsp.mkdir(path.dirname(path.join(wb.workspaceDir, rel)), { recursive: true });
    await fsp.writeFile(path.join(wb.workspaceDir, rel), before);
    const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '@@', `-${before.trimEnd()}`, `+${after.trimEnd()}`, '*** End Patch'].join('\n');
    const e = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: sha256(before) }, operation_key: key });
    assert.equal(e.code, 'APPROVAL_REQUIRED');
    const approvalId = e.details?.approval_id;
    assert.equal(typeof approvalId, 'string');
    return { approvalId: approvalId as string, before, after };
  }

  const panelFrame = (selector: string) => findPanelFrame(wb, selector);

  const statusItem = (n: number): Locator => wb.page.locator(`[aria-label="CodeSpace: ${n} pending approval${n === 1 ? '' : 's'}"]`);

  it('shows held patches with their files; Deny with a note reaches the agent, Approve writes; the badges count', async () => {
    const a = await holdPatch('.vscode/panel-a.txt', 'e2e-panel-a');
    const b = await holdPatch('.vscode/panel-b.txt', 'e2e-panel-b');
    await statusItem(2).first().waitFor({ timeout: 30_000 });

    await wb.runCommand('CodeSpace: Show Panel');
    const frame = await panelFrame(`.hold[data-approval-id="${a.approvalId}"]`);
    const holdA = frame.locator(`.hold[data-approval-id="${a.approvalId}"]`);
    const holdB = frame.locator(`.hold[data-approval-id="${b.approvalId}"]`);
    await holdB.waitFor();
    assert.deepEqual(await frame.locator('.hold').evaluateAll((els) => els.map((e) => e.getAttribute('data-approval-id'))), [b.approvalId, a.approvalId], 'newest first');
    assert.match((await holdA.locator('.file').innerText()).replace(/\s+/g, ' '), /update \.vscode\/panel-a\.txt \+1 \u22121 sensitive/);
    assert.match(await holdA.locator('[data-role="sensitive"]').innerText(), /\.vscode\/panel-a\.txt/);
    assert.equal(await holdA.locator('button[data-action="open-review"]').count(), 1);
    // The view's badge shows on the CodeSpace icon of the activity bar.
    const badge = wb.page.locator('.activitybar .action-item:has(.action-label[aria-label^="CodeSpace"]) .badge-content');
    await badge.filter({ hasText: /^2$/ }).waitFor({ timeout: 30_000 });
    await wb.screenshot('e2e-panel-holds');

    // Deny B with a note: the waiting agent gets APPROVAL_DENIED carrying it, and nothing is written.
    const denied = callError(client, 'operation_resume', { approval_id: b.approvalId, wait_ms: 30_000 });
    await holdB.locator('textarea[data-role="note"]').fill('please keep the old value');
    await holdB.locator('button[data-action="deny"]').click();
    const err = await denied;
    assert.equal(err.code, 'APPROVAL_DENIED');
    assert.match(JSON.stringify(err), /please keep the old value/);
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, '.vscode/panel-b.txt'), 'utf8'), b.before);
    await holdB.waitFor({ state: 'detached', timeout: 30_000 });
    await statusItem(1).first().waitFor({ timeout: 30_000 });

    // Approve A: the waiting agent gets the applied result, the file is written, the section is empty again.
    const resumed = call<{ status: string }>(client, 'operation_resume', { approval_id: a.approvalId, wait_ms: 30_000 });
    await holdA.locator('button[data-action="approve"]').click();
    assert.equal((await resumed).status, 'applied');
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, '.vscode/panel-a.txt'), 'utf8'), a.after);
    await holdA.waitFor({ state: 'detached', timeout: 30_000 });
    await frame.locator('[data-section="holds"] .empty').waitFor({ timeout: 30_000 });
    await statusItem(1).waitFor({ state: 'detached', timeout: 30_000 });
    await badge.filter({ hasText: /\d/ }).waitFor({ state: 'hidden', timeout: 30_000 });
    const activity = await frame.locator('[data-section="activity"]').innerText();
    assert.match(activity, /granted/);
    assert.match(activity, /denied/);
  });

  it('keeps a note draft when the view is hidden and shown again', async () => {
    const c = await holdPatch('.vscode/panel-c.txt', 'e2e-panel-c');
    await wb.runCommand('CodeSpace: Show Panel');
    let frame = await panelFrame(`.hold[data-approval-id="${c.approvalId}"]`);
    await frame.locator(`.hold[data-approval-id="${c.approvalId}"] textarea[data-role="note"]`).fill('half-written note');
    await sleep(300);
    // A marker on the page's window tells a reloaded page from the same one.
    await frame.evaluate(() => ((window as unknown as { marker?: number }).marker = 1));
    await wb.runCommand('View: Show Explorer');
    await sleep(1000);
    await wb.runCommand('CodeSpace: Show Panel');
    frame = await panelFrame(`.hold[data-approval-id="${c.approvalId}"]`);
    assert.equal(await frame.evaluate(() => (window as unknown as { marker?: number }).marker), undefined, 'the page was torn down while hidden and loaded again');
    const note = frame.locator(`.hold[data-approval-id="${c.approvalId}"] textarea[data-role="note"]`);
    assert.equal(await note.inputValue(), 'half-written note');
    const denied = callError(client, 'operation_resume', { approval_id: c.approvalId, wait_ms: 30_000 });
    await frame.locator(`.hold[data-approval-id="${c.approvalId}"] button[data-action="deny"]`).click();
    assert.equal((await denied).code, 'APPROVAL_DENIED');
  });
});
