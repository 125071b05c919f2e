// End to end: line comments on a held two-file patch, the way a reviewer writes them, in a real workbench (code-server
// + headless Chromium) with `codespace.approvals.patches` = `confirm`. A real MCP client sends the patch and waits in
// operation_resume; the hold's two files open by themselves in diff editors; in each, the browser selects lines of the
// proposal with the mouse and keyboard, runs Add Comment on Current Selection, types the comment and clicks Add
// Comment in the comment widget; then it clicks Request Changes in the editor's title bar. The agent receives a
// changes_requested result with both comments, their ranges and the quoted lines, and nothing is written.
//
// Screenshot: test-results/review-comments.png; with CODESPACE_UPDATE_DOCS_SCREENSHOTS=1 also docs/review-comments.png.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Locator } from 'playwright-core';
import type { Workbench } from './index';
import { screenshotForDocs, startWorkbenchWithAgent, stopWorkbenchWithAgent } from './agentWorkbench';
import { awaitDecision, call, callError } from './mcpClient';
import { sleep } from './webview';

const UPDATED = 'src/util/math.ts';
const ADDED = 'src/util/format.ts';
const FIRST_COMMENT = 'Say why the sum needs a comment at all.';
const SECOND_COMMENT = 'Format with toFixed(2), please.';

interface Comment {
  path: string;
  side: 'old' | 'new';
  range: { start_line: number; end_line: number };
  quoted: string;
  body: string;
}

describe('line comments on a held patch, sent with Request Changes, in the workbench', function () {
  this.timeout(6 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ wb, client, wsId } = await startWorkbenchWithAgent({
      workspace: 'workspace',
      userSettings: {
        'codespace.approvals.patches': 'confirm',
        // The hold's files open by themselves (the default), and no toast covers the screenshot.
        'codespace.review.notify': false,
        'workbench.startupEditor': 'none',
        // No chat beside the editor (1.139 opens one): the diffs have the room to show both sides, as a reviewer
        // commenting on the old side has them (an inline diff's old lines take no comments).
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
      },
    }, 'e2e-review-comments'));
  });

  after(() => stopWorkbenchWithAgent(wb, client, 'e2e-review-comments-final'));

  const activeGroup = (): Locator => wb.page.locator('.editor-group-container.active');

  /** Shows the diff tab whose label starts with `label` (a click on the tab) and waits for its proposal side. */
  async function showTab(label: string, lineText: string): Promise<Locator> {
    const tab = wb.page.locator('.tabs-container .tab', { hasText: label }).first();
    await tab.waitFor({ timeout: 60_000 });
    await tab.click();
    const modified = activeGroup().locator('.monaco-diff-editor .editor.modified');
    await modified.locator('.view-line', { hasText: lineText }).first().waitFor({ timeout: 60_000 });
    return modified;
  }

  /**
   * Runs Add Comment on Current Selection, types the comment into the widget and clicks its Add Comment button; the
   * thread then shows `shown` (the text without the whitespace the rendering collapses).
   */
  async function comment(text: string, shown = text): Promise<void> {
    const widgets = wb.page.locator('.review-widget');
    const before = await widgets.count();
    await wb.runCommand('Add Comment on Current Selection');
    const form = activeGroup().locator('.review-widget .comment-form').last();
    await form.waitFor({ timeout: 30_000 });
    await form.locator('.monaco-editor, textarea').first().click();
    await wb.page.keyboard.type(text, { delay: 10 });
    const add = activeGroup().locator('.review-widget .monaco-button', { hasText: 'Add Comment' }).last();
    await add.waitFor({ timeout: 30_000 });
    await add.click();
    // The thread now shows the comment as written (its body, in preview mode).
    await activeGroup().locator('.review-widget .review-comment .comment-body', { hasText: shown }).first().waitFor({ timeout: 30_000 });
    assert.ok((await widgets.count()) >= before);
  }

  /** Clicks Request Changes in the editor's title bar; the comments of the agent's changes_requested result. */
  async function requestChanges(decision: ReturnType<typeof awaitDecision>): Promise<Comment[]> {
    const button = activeGroup().locator('.title .editor-actions .action-label[aria-label^="Request Changes"]').first();
    await button.waitFor({ timeout: 30_000 });
    await button.click();
    const d = await decision;
    assert.ok(d.ok, `operation_resume answered ${JSON.stringify(d)}`);
    const result = d.result as unknown as { status: string; comments: Comment[] };
    assert.equal(result.status, 'changes_requested');
    return result.comments;
  }

  it('comments on two ranges of two files, then Request Changes in the title bar: the agent gets both with ranges; nothing is written', async () => {
    const read = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: UPDATED });
    const patch = [
      '*** Begin Patch',
      `*** Update File: ${UPDATED}`,
      '@@',
      ' export function add(a: number, b: number): number {',
      '-  return a + b;',
      '+  return a + b; // sum',
      ' }',
      `*** Add File: ${ADDED}`,
      '+export function formatSum(a: number, b: number): string {',
      '+  return String(a + b);',
      '+}',
      '*** End Patch',
    ].join('\n');
    const e = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [UPDATED]: read.version }, operation_key: 'e2e-review-comments' });
    assert.equal(e.code, 'APPROVAL_REQUIRED');
    const approvalId = e.details?.approval_id as string;
    const decision = awaitDecision(client, approvalId);

    // The updated file: select its first two lines with the mouse and the keyboard, and comment on them.
    const math = await showTab(`${path.posix.basename(UPDATED)} (proposal)`, 'return a + b; // sum');
    // What the reviewer sees in the status bar once the two lines are selected: 51 + 1 + 22 characters. On a loaded
    // machine a key pressed before the click's focus landed is lost (one run commented on one line): select again.
    const selected = wb.page.locator('.statusbar-item', { hasText: 'Ln 2, Col 23 (74 selected)' }).first();
    for (let attempt = 1; ; attempt++) {
      await math.locator('.view-line', { hasText: 'export function add' }).first().click();
      await wb.page.keyboard.press('Home');
      await wb.page.keyboard.press('Shift+ArrowDown');
      await wb.page.keyboard.press('Shift+End');
      try {
        await selected.waitFor({ timeout: 10_000 });
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    await comment(FIRST_COMMENT);

    // The added file: the cursor on its second line, a comment on that line.
    const format = await showTab(`${path.posix.basename(ADDED)} (added)`, 'return String(a + b);');
    await format.locator('.view-line', { hasText: 'return String(a + b);' }).first().click();
    await comment(SECOND_COMMENT);
    await wb.runCommand('Notifications: Clear All Notifications'); // the connection toast would cover the picture
    await wb.page.locator('.part.statusbar').hover(); // and so would the hover of the tab the pointer rests on
    await sleep(800); // let the last paint settle
    await screenshotForDocs(wb, 'review-comments', 'review-comments.png');

    // Request Changes, in the editor's title bar.
    assert.deepEqual(await requestChanges(decision), [
      { path: ADDED, side: 'new', range: { start_line: 2, end_line: 2 }, quoted: '  return String(a + b);', body: SECOND_COMMENT },
      { path: UPDATED, side: 'new', range: { start_line: 1, end_line: 2 }, quoted: 'export function add(a: number, b: number): number {\n  return a + b; // sum', body: FIRST_COMMENT },
    ]);
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, UPDATED), 'utf8'), read.content, 'nothing written');
    assert.equal(existsSync(path.join(wb.workspaceDir, ADDED)), false, 'nothing added');
    // The decided review closes, and the sent comments go with it.
    await wb.page.locator('.tabs-container .tab', { hasText: '(proposal)' }).first().waitFor({ state: 'detached', timeout: 30_000 });
    await wb.page.locator('.review-widget .comment-body', { hasText: FIRST_COMMENT }).first().waitFor({ state: 'detached', timeout: 30_000 });
  });

  it('a comment on the old side, on the line a patch deletes, reaches the agent with side "old" and its text exactly', async () => {
    const FILE = 'src/hello.ts';
    const OLD_LINE = '  return `Hello, ${name}! 2 + 3 = ${add(2, 3)}`;';
    const BODY = '    keep this line \u{1F600} \u{20BB7}';
    const read = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: FILE });
    const patch = ['*** Begin Patch', `*** Update File: ${FILE}`, '@@', ` export function hello(name: string): string {`, `-${OLD_LINE}`, '+  return name;', ' }', '*** End Patch'].join('\n');
    const e = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [FILE]: read.version }, operation_key: 'e2e-review-comments-old-side' });
    assert.equal(e.code, 'APPROVAL_REQUIRED');
    const approvalId = e.details?.approval_id as string;
    const decision = awaitDecision(client, approvalId);

    await showTab(`${path.posix.basename(FILE)} (proposal)`, 'return name;');
    // The cursor on the deleted line, in the diff's left side (the file before the patch), and a comment there.
    const original = activeGroup().locator('.monaco-diff-editor .editor.original');
    await original.locator('.view-line', { hasText: 'Hello, ' }).first().click();
    await comment(BODY, BODY.trim());
    await wb.runCommand('Notifications: Clear All Notifications');
    await sleep(800);
    await wb.screenshot('review-comments-old-side');
    assert.deepEqual(await requestChanges(decision), [{ path: FILE, side: 'old', range: { start_line: 4, end_line: 4 }, quoted: OLD_LINE, body: BODY }]);
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8'), read.content, 'nothing written');
  });
});
