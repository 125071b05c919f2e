// End to end: review after the write, the way a reviewer does it, in a real workbench (code-server + headless
// Chromium) with `codespace.review.mode` = `after` (and `codespace.approvals.patches` = `confirm`, which would hold
// the patch before the write). A real MCP client patches two places of a file: the patch applies at once. The browser
// opens the review (one multi-file diff), clicks into the second change on the file's side, opens the editor's
// context menu and clicks Undo Change. The file on disk and the ledger agree, and the agent's next tool result says
// exactly what was undone (path, lines, text).
//
// A second test deletes a CRLF file and undoes the deletion from the context menu of the diff's left side (the file
// has no right side): the file comes back byte for byte.
//
// A third deletes a binary file and changes a script whose mode a command then changes: the reviewer sees the binary
// file said to be binary (size, sha256) on its left side, the mode change in the diff's title, and undoes the deletion
// from the context menu of that description: the bytes come back exactly.
//
// Screenshots: test-results/review-after-write-binary.png; test-results/review-after-write-deleted.png; test-results/review-after-write.png; with CODESPACE_UPDATE_DOCS_SCREENSHOTS=1 also docs/review-after-write.png.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Locator, Page } from 'playwright-core';
import type { Workbench } from './index';
import { screenshotForDocs, startWorkbenchWithAgent, stopWorkbenchWithAgent } from './agentWorkbench';
import { call } from './mcpClient';
import { sleep } from './webview';

const FILE = 'src/util/math.ts';
// Where a test clicks a line of a side-by-side diff: near its start. A view line's box is as wide as its longest
// line, wider than its pane, so its centre can sit under the other side's gutter, where a hover then takes the click.
const AT_LINE_START = { x: 4, y: 4 };

/**
 * Clicks `line` (a line of a diff) with `button`, once no hover covers it. A hover left from where the mouse last was
 * (a tab's title, opened under the pointer, shows one below the tabs, over the first lines) takes the click: the
 * mouse is moved onto the line first (no hover there) and Escape closes what is still shown.
 */
async function clickLine(page: Page, line: Locator, button: 'left' | 'right' = 'left'): Promise<void> {
  const hover = page.locator('.context-view.monaco-component, .monaco-hover:not(.hidden)');
  for (let attempt = 0; ; attempt++) {
    await line.hover({ position: AT_LINE_START, force: true });
    if (await hover.first().isVisible().catch(() => false)) await page.keyboard.press('Escape');
    try {
      await line.click({ button, position: AT_LINE_START, timeout: 5_000 });
      return;
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }
}
const sha = (b: Uint8Array | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('review after the write: undo one change from the diff editor, the agent is told', function () {
  this.timeout(6 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ wb, client, wsId } = await startWorkbenchWithAgent({
      workspace: 'workspace',
      userSettings: {
        'codespace.approvals.patches': 'confirm',
        'codespace.review.mode': 'after',
        'workbench.startupEditor': 'none',
        // Both sides of a diff shown, as a reviewer commenting or acting on the old side has them: without this, a
        // narrower editor (1.139 opens its chat beside it) shows diffs inline, where the old side takes no clicks.
        'diffEditor.useInlineViewWhenSpaceIsLimited': false,
      },
    }, 'e2e-review-after-write'));
  });

  after(() => stopWorkbenchWithAgent(wb, client, 'e2e-review-after-write-final'));

  const activeGroup = (): Locator => wb.page.locator('.editor-group-container.active');

  it('applies at once; Undo Change in the context menu of the second change undoes it; disk, ledger and the agent agree', async () => {
    const read = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: FILE });
    const patch = [
      '*** Begin Patch',
      `*** Update File: ${FILE}`,
      '@@',
      ' export function add(a: number, b: number): number {',
      '-  return a + b;',
      '+  return a + b; // the sum',
      ' }',
      '@@',
      ' export function multiply(a: number, b: number): number {',
      '-  return a * b;',
      '+  const product = a * b;',
      '+  return product;',
      ' }',
      '*** End Patch',
    ].join('\n');
    const applied = await call<{ status: string }>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [FILE]: read.version }, operation_key: 'e2e-after-write' });
    assert.equal(applied.status, 'applied', 'applied at once: reviewed after the write');
    const agentText = await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8');
    // No review opened by itself (the diagnostics feed may open the file in a background tab of its own).
    await sleep(1000);
    assert.equal(await wb.page.locator('.tabs-container .tab', { hasText: 'CodeSpace review' }).count(), 0, 'the patch opened no review');

    // The status bar counts the file; the reviewer opens the review.
    await wb.page.locator('.statusbar-item', { hasText: '1' }).filter({ has: wb.page.locator('.codicon-diff') }).first().waitFor({ timeout: 60_000 });
    await wb.runCommand('CodeSpace: Review Changes After the Write');
    const modified = activeGroup().locator('.monaco-diff-editor .editor.modified');
    const line = modified.locator('.view-line', { hasText: 'const product = a * b;' }).first();
    await line.waitFor({ timeout: 60_000 });
    await activeGroup().locator('.monaco-diff-editor .editor.modified .view-line', { hasText: 'return a + b; // the sum' }).first().waitFor({ timeout: 60_000 });

    // The cursor in the second change, then the context menu's Undo Change.
    await wb.runCommand('Notifications: Clear All Notifications'); // the connection toast would cover the picture
    await clickLine(wb.page, line);
    await clickLine(wb.page, line, 'right');
    const item = wb.page.locator('.monaco-menu .action-item', { hasText: 'Undo Change' }).first();
    await item.waitFor({ timeout: 30_000 });
    await item.hover();
    await sleep(800); // let the last paint settle
    await screenshotForDocs(wb, 'review-after-write', 'review-after-write.png');
    await item.click();

    // The disk: the second change undone, the first kept.
    const expected = read.content.replace('  return a + b;', '  return a + b; // the sum');
    const deadline = Date.now() + 60_000;
    while ((await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8')) !== expected) {
      if (Date.now() > deadline) assert.fail(`the undo did not reach the disk: ${await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8')}`);
      await sleep(100);
    }
    const disk = await fsp.readFile(path.join(wb.workspaceDir, FILE));
    // The left side of the diff still shows the kept change to review; the undone one is gone from the right.
    await modified.locator('.view-line', { hasText: 'const product = a * b;' }).first().waitFor({ state: 'detached', timeout: 30_000 });

    // The agent's next result, whatever the tool, says exactly what was undone; the ledger agrees with the disk.
    const next = (await client.callTool({ name: 'workspace_info', arguments: {} })) as CallToolResult;
    const update = (next.structuredContent as { review_update?: { path: string; range: unknown; undone: string; restored: string; version: string; operation_id: string }[] }).review_update;
    assert.ok(update && update.length === 1, JSON.stringify(next.structuredContent));
    const [notice] = update;
    assert.deepEqual({ ...notice, operation_id: undefined }, {
      action: 'undone',
      workspace_id: wsId,
      path: FILE,
      range: { start_line: 6, end_line: 7 },
      undone: '  const product = a * b;\n  return product;\n',
      restored: '  return a * b;\n',
      version: sha(disk),
      operation_id: undefined,
    });
    const status = await call<{ status: string; files: { path: string; before_version?: string; after_version?: string }[] }>(client, 'operation_status', { operation_id: notice?.operation_id });
    assert.equal(status.status, 'applied');
    assert.deepEqual(status.files.map((f) => [f.path, f.before_version, f.after_version]), [[FILE, sha(agentText), sha(disk)]]);
  });

  it('a deleted file: Undo Change in the context menu of its left (accepted) side brings it back byte for byte', async () => {
    const GONE = 'notes/windows.txt';
    const abs = path.join(wb.workspaceDir, GONE);
    const before = await fsp.readFile(abs);
    const applied = await call<{ status: string }>(client, 'apply_patch', {
      workspace_id: wsId,
      patch: ['*** Begin Patch', `*** Delete File: ${GONE}`, '*** End Patch'].join('\n'),
      expected_versions: { [GONE]: sha(before) },
      operation_key: 'e2e-after-write-delete',
    });
    assert.equal(applied.status, 'applied');
    await assert.rejects(fsp.stat(abs));

    await wb.runCommand('CodeSpace: Review Changes After the Write');
    // The deleted file's lines are on the left only (its right side is empty): the reviewer clicks one there.
    const line = activeGroup().locator('.monaco-diff-editor .editor.original .view-line', { hasText: 'line two' }).first();
    await line.waitFor({ timeout: 60_000 });
    await wb.runCommand('Notifications: Clear All Notifications');
    await clickLine(wb.page, line);
    await clickLine(wb.page, line, 'right');
    const item = wb.page.locator('.monaco-menu .action-item', { hasText: 'Undo Change' }).first();
    await item.waitFor({ timeout: 30_000 });
    await item.hover();
    await sleep(800);
    await wb.screenshot('review-after-write-deleted');
    await item.click();

    const deadline = Date.now() + 60_000;
    for (;;) {
      const now = await fsp.readFile(abs).catch(() => undefined);
      if (now && Buffer.compare(now, before) === 0) break;
      if (Date.now() > deadline) assert.fail(`the deleted file did not come back as it was: ${now === undefined ? 'absent' : JSON.stringify(now.toString('utf8'))}`);
      await sleep(100);
    }
    const next = (await client.callTool({ name: 'workspace_info', arguments: {} })) as CallToolResult;
    const update = (next.structuredContent as { review_update?: { path: string; restored: string; version?: string }[] }).review_update;
    assert.deepEqual(update?.map((u) => [u.path, u.restored, u.version]), [[GONE, before.toString('utf8'), sha(before)]]);
  });
  it('a binary file is said to be binary and a mode change is named in the title; Undo Change on the description brings the bytes back', async () => {
    const BIN = 'assets/logo.bin';
    const SCRIPT = 'scripts/run.sh';
    const bin = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff]);
    await fsp.mkdir(path.join(wb.workspaceDir, 'assets'), { recursive: true });
    await fsp.mkdir(path.join(wb.workspaceDir, 'scripts'), { recursive: true });
    await fsp.writeFile(path.join(wb.workspaceDir, BIN), bin);
    await fsp.writeFile(path.join(wb.workspaceDir, SCRIPT), '#!/bin/sh\necho one\n');
    await fsp.chmod(path.join(wb.workspaceDir, SCRIPT), 0o644);
    const applied = await call<{ status: string }>(client, 'apply_patch', {
      workspace_id: wsId,
      patch: ['*** Begin Patch', `*** Delete File: ${BIN}`, `*** Update File: ${SCRIPT}`, '@@', '-echo one', '+echo two', '*** End Patch'].join('\n'),
      expected_versions: { [BIN]: sha(bin), [SCRIPT]: sha('#!/bin/sh\necho one\n') },
      operation_key: 'e2e-after-write-binary',
    });
    assert.equal(applied.status, 'applied');
    await fsp.chmod(path.join(wb.workspaceDir, SCRIPT), 0o755); // as the agent's command would

    await wb.runCommand('CodeSpace: Review Changes After the Write');
    // The tab's title names the mode change; the binary file's left side says what it is.
    await wb.page.locator('.tabs-container .tab', { hasText: `mode 100644 → 100755: ${SCRIPT}` }).first().waitFor({ timeout: 60_000 });
    const said = activeGroup().locator('.monaco-diff-editor .editor.original .view-line', { hasText: `Binary file, not shown as text: ${BIN}` }).first();
    await said.waitFor({ timeout: 60_000 });
    const hex = createHash('sha256').update(bin).digest('hex');
    await activeGroup().locator('.monaco-diff-editor .editor.original .view-line', { hasText: `sha256: ${hex.slice(0, 16)}` }).first().waitFor({ timeout: 30_000 });
    await wb.runCommand('Notifications: Clear All Notifications');
    await clickLine(wb.page, said);
    await clickLine(wb.page, said, 'right');
    const item = wb.page.locator('.monaco-menu .action-item', { hasText: 'Undo Change' }).first();
    await item.waitFor({ timeout: 30_000 });
    await item.hover();
    await sleep(800);
    await wb.screenshot('review-after-write-binary');
    await item.click();

    const abs = path.join(wb.workspaceDir, BIN);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const now = await fsp.readFile(abs).catch(() => undefined);
      if (now && Buffer.compare(now, bin) === 0) break;
      if (Date.now() > deadline) assert.fail(`the binary file did not come back as it was (${now === undefined ? 'absent' : `${now.byteLength} bytes`})`);
      await sleep(100);
    }
    const next = (await client.callTool({ name: 'workspace_info', arguments: {} })) as CallToolResult;
    const update = (next.structuredContent as { review_update?: { path: string; change?: string; content?: { restored?: { sha256: string } } }[] }).review_update;
    assert.deepEqual(update?.map((u) => [u.path, u.change, u.content?.restored?.sha256]), [[BIN, 'binary', sha(bin)]]);
  });
});
